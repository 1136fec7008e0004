// Native binary (and ternary Where) row kernels for the broadcast driver:
// what oneDNN's binary primitive cannot take (a broadcast first operand,
// Pow, PRelu, integer arithmetic, comparisons to bool, logical ops, Where).
#pragma once

#include <cstddef>
#include <string>

#include "exec/cpu/kernels/broadcast.h"
#include "graph/dtype.h"

namespace aic::cpu::kernels {

// The row kernel for ONNX binary op `op` on operands of dtype `in`; sets
// *out to the result's dtype. Null when not covered.
RowFn BinaryKernel(const std::string& op, DType in, DType* out);

// Where(cond: bool, x, y) for elements of `elem_size` bytes (1, 2, 4, 8); null otherwise.
RowFn WhereKernel(size_t elem_size);

}  // namespace aic::cpu::kernels

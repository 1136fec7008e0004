// Native binary (and ternary Where) row kernels for the broadcast driver:
// what oneDNN's binary primitive cannot take (a broadcast first operand,
// Pow, PRelu, integer arithmetic, comparisons to bool, logical ops, Where).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "exec/cpu/kernels/broadcast.h"
#include "graph/dtype.h"

namespace aic::cpu::kernels {

// The row kernel for ONNX binary op `op` on operands of dtype `in`; sets
// *out to the result's dtype. Null when not covered.
RowFn BinaryKernel(const std::string& op, DType in, DType* out);

// Where(cond: bool, x, y) for elements of `elem_size` bytes (1, 2, 4, 8); null otherwise.
RowFn WhereKernel(size_t elem_size);

// y = fn(a, b) over n same-shaped float16 operands (their bits): pieces
// widened to f32 in per-thread buffers, fn (a float row kernel of
// BinaryKernel) applied, the result rounded back to half. A half model's
// Cast -> Add/Sub/Mul/Div/Max/Min -> Cast without the f32 tensors between.
void HalfBinary(RowFn fn, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n);

}  // namespace aic::cpu::kernels

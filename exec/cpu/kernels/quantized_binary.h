// ai.aic QLinearAdd / QLinearMul over 8-bit tensors with per-tensor scales:
// y = Q(relu?(DQ(a) op DQ(b))), in float32 in the order of the QDQ pattern it
// replaces (rewrite/rules/quantized_rules.cc), so bitwise equal to its
// reference kernels: (x - z)·s per operand, the float op, max(·, 0), and the
// quantizing pass of quantize_run.h (bit-equal to QuantizeLinear's division).
// Pieces of 256 elements are dequantized into registers-sized buffers, so
// the floats never reach memory.
//
// b is either shaped as a (same layout, any order: the map is elementwise) or
// broadcast along one axis: element i of a reads b[(i / b_inner) % b_count]
// (a per-channel SE scale against an NCHW activation has b_inner = H·W, against
// a channels-last one b_inner = 1). b_count = 1 is a scalar b.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct QuantizedBinary {
  bool add = true;  // else multiply
  bool relu = false;
  bool a_signed = false, b_signed = false, y_signed = false;
  float a_scale = 1, a_zero = 0, b_scale = 1, b_zero = 0, y_scale = 1, y_zero = 0;
  bool b_broadcast = false;
  int64_t b_inner = 1, b_count = 1;
};

void RunQuantizedBinary(const QuantizedBinary& p, const void* a, const void* b, void* y, int64_t n);

}  // namespace aic::cpu::kernels

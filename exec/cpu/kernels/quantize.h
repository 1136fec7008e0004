// QuantizeLinear / DequantizeLinear between f32 and 8-bit integers, per
// tensor or per channel along one axis, with the reference's rounding
// (ops/misc/quantize.cc): q = saturate(round_half_even(x / s) + z) with the
// division in f32; x = f32(q - z) * s.
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

struct QuantLayout {
  int64_t outer = 1;     // elements before the channel axis (product of dims)
  int64_t channels = 1;  // 1: per tensor
  int64_t inner = 1;     // elements after the channel axis
  std::vector<float> scale;       // one per channel
  std::vector<float> zero_point;  // one per channel (integers held as floats)
};

// y: int8 (is_signed) or uint8.
void QuantizeF32(const float* x, void* y, bool is_signed, const QuantLayout& l);
// x: int8 (is_signed) or uint8.
void DequantizeToF32(const void* x, bool is_signed, float* y, const QuantLayout& l);

}  // namespace aic::cpu::kernels

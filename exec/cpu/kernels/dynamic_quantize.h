// DynamicQuantizeLinear from f32 to uint8 with the reference kernel's
// arithmetic (ops/misc/quantize.cc), bit for bit: the range [min(0, min x),
// max(0, max x)] (NaNs skipped) gives scale = (hi - lo) / 255 and zero point
// = saturate(round_half_even(-lo / scale)); y = saturate(round_half_even(x /
// scale) + zero point), divisions in f32. An all-zero range gives scale 0,
// zero point 0 and y 0, as the reference does (the standard leaves it NaN).
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// x: n floats; y: n bytes, or null when only the scale and zero point are wanted.
void DynamicQuantizeF32(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zero_point);

}  // namespace aic::cpu::kernels

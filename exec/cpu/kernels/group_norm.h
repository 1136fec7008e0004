// InstanceNormalization and GroupNormalization over dense NC... f32:
// y = (x - mean_g) / sqrt(var_g + eps) * scale[c] + bias[c], the moments over
// each channel group of each sample (InstanceNorm: one channel per group).
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct GroupNormShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t groups = 1;  // divides channels
  int64_t inner = 1;   // product of the spatial dims
};

// x, y: batch x channels x inner (y may equal x); scale, bias: one per
// channel. Groups are spread over threads.
void GroupNormF32(const float* x, const float* scale, const float* bias, float* y, const GroupNormShape& shape,
                  float epsilon);

}  // namespace aic::cpu::kernels

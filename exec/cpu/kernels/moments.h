// Mean and (biased) variance of a contiguous run of f32, shared by the
// normalization kernels (LayerNorm rows, Group/InstanceNorm groups).
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct RunMoments {
  double mean = 0;
  double variance = 0;
};

// One read of x[0..n): sums of (x - k) and (x - k)^2 with the shift k = x[0]
// (the "shifted data" method: no catastrophic cancellation when the mean is
// large against the spread, unlike raw sums of x and x^2), in double lanes.
RunMoments MomentsOf(const float* x, int64_t n);

}  // namespace aic::cpu::kernels

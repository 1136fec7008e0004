// Each group is one contiguous run (its channels are adjacent in NC...), so
// its moments are one MomentsOf call; the normalizing pass runs per channel
// with that channel's folded scale, in double like LayerNorm's (see
// layer_norm.cc: a bias that nearly cancels must not expose f32 rounding).
#include "exec/cpu/kernels/group_norm.h"

#include <cmath>

#include "exec/cpu/kernels/moments.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

AIC_KERNEL_CLONES void NormalizeChannel(const float* x, float* y, int64_t n, double mean, double factor,
                                        double shift) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * factor + shift);
}

}  // namespace

void GroupNormF32(const float* x, const float* scale, const float* bias, float* y, const GroupNormShape& s,
                  float epsilon) {
  int64_t per_group = s.channels / s.groups;
  int64_t run = per_group * s.inner;
  if (run == 0) return;
  ParallelFor(s.batch * s.groups, run * 4, [&](int64_t bg) {
    int64_t offset = bg * run;
    RunMoments m = MomentsOf(x + offset, run);
    double rstd = 1.0 / std::sqrt(m.variance + static_cast<double>(epsilon));
    int64_t first_channel = (bg % s.groups) * per_group;
    for (int64_t c = 0; c < per_group; ++c) {
      int64_t ch = first_channel + c;
      int64_t at = offset + c * s.inner;
      NormalizeChannel(x + at, y + at, s.inner, m.mean, rstd * scale[ch], bias[ch]);
    }
  });
}

}  // namespace aic::cpu::kernels

// One read of the row for the moments: sums of (x - k) and (x - k)^2 with a
// shift k = x[0] (the "shifted data" method: no catastrophic cancellation
// when the mean is large against the spread, unlike raw sums of x and x^2),
// in double lanes. A second pass writes the normalized row (still in cache
// for any practical row length), also in double: where the bias nearly
// cancels the normalized value, f32 rounding of the O(1) terms would show as
// a large relative error in the small result. Rows are short; it costs little.
#include "exec/cpu/kernels/layer_norm.h"

#include <cmath>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

AIC_KERNEL_CLONES void NormalizeRow(const float* x, const float* scale, const float* bias, float* y, int64_t n,
                                    float epsilon, float* mean_out, float* inv_std_out) {
  double k = x[0];
  double s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - k;
    s1 += d;
    s2 += d * d;
  }
  double mean_shifted = s1 / static_cast<double>(n);
  double var = s2 / static_cast<double>(n) - mean_shifted * mean_shifted;
  if (var < 0) var = 0;
  double mean = k + mean_shifted;
  double rstd = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
  if (mean_out != nullptr) *mean_out = static_cast<float>(mean);
  if (inv_std_out != nullptr) *inv_std_out = static_cast<float>(rstd);
  if (bias != nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * (rstd * scale[i]) + bias[i]);
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * (rstd * scale[i]));
  }
}

}  // namespace

void LayerNormF32(const float* x, const float* scale, const float* bias, float* y, int64_t rows, int64_t cols,
                  float epsilon, float* mean, float* inv_std) {
  if (cols == 0) return;
  ParallelFor(rows, cols * 4, [&](int64_t r) {
    NormalizeRow(x + r * cols, scale, bias, y + r * cols, cols, epsilon, mean != nullptr ? mean + r : nullptr,
                 inv_std != nullptr ? inv_std + r : nullptr);
  });
}

}  // namespace aic::cpu::kernels

// The row's moments come from MomentsOf (moments.h). A second pass writes
// the normalized row (still in cache for any practical row length) in
// double: where the bias nearly cancels the normalized value, f32 rounding
// of the O(1) terms would show as a large relative error in the small
// result. Rows are short; it costs little.
#include "exec/cpu/kernels/layer_norm.h"

#include <cmath>

#include "exec/cpu/kernels/half_rows.h"
#include "exec/cpu/kernels/moments.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

AIC_KERNEL_CLONES void NormalizeRow(const float* x, const float* scale, const float* bias, float* y, int64_t n,
                                    float epsilon, float* mean_out, float* inv_std_out) {
  RunMoments m = MomentsOf(x, n);
  double mean = m.mean;
  double rstd = 1.0 / std::sqrt(m.variance + static_cast<double>(epsilon));
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

// For a row rounded to half afterwards: the moments as above, the scaling
// in f32. Its rounding error (a few f32 ulps of the O(1) terms) is 2^-13 of
// a half ulp, so the half results are the double path's except where that
// lands within it of a rounding boundary between two halves.
AIC_KERNEL_CLONES void NormalizeRowForHalf(float* x, const float* scale, const float* bias, int64_t n, float epsilon) {
  RunMoments m = MomentsOf(x, n);
  const auto mean = static_cast<float>(m.mean);
  const auto rstd = static_cast<float>(1.0 / std::sqrt(m.variance + static_cast<double>(epsilon)));
  if (bias != nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) x[i] = (x[i] - mean) * (rstd * scale[i]) + bias[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) x[i] = (x[i] - mean) * (rstd * scale[i]);
  }
}

// The mean square in double (a row of 4096 floats summed in f32 loses
// bits the reference keeps), the scaling in f32.
AIC_KERNEL_CLONES void RmsNormalizeRow(const float* x, const float* scale, float* y, int64_t n, float epsilon) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double rms_inv = 1.0 / std::sqrt(sum / static_cast<double>(n) + static_cast<double>(epsilon));
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<double>(x[i]) * rms_inv * scale[i]);
}

}  // namespace

void RmsNormF32(const float* x, const float* scale, float* y, int64_t rows, int64_t cols, float epsilon) {
  if (cols == 0) return;
  ParallelFor(rows, cols * 4, [&](int64_t r) { RmsNormalizeRow(x + r * cols, scale, y + r * cols, cols, epsilon); });
}

void LayerNormF32(const float* x, const float* scale, const float* bias, float* y, int64_t rows, int64_t cols,
                  float epsilon, float* mean, float* inv_std) {
  if (cols == 0) return;
  ParallelFor(rows, cols * 4, [&](int64_t r) {
    NormalizeRow(x + r * cols, scale, bias, y + r * cols, cols, epsilon, mean != nullptr ? mean + r : nullptr,
                 inv_std != nullptr ? inv_std + r : nullptr);
  });
}

void LayerNormHalf(const uint16_t* x, const float* scale, const float* bias, uint16_t* y, int64_t rows, int64_t cols,
                   float epsilon) {
  if (cols == 0) return;
  ForEachHalfRow(x, y, rows, cols, cols * 6,
                 [&](int64_t, float* row) { NormalizeRowForHalf(row, scale, bias, cols, epsilon); });
}

void RmsNormHalf(const uint16_t* x, const float* scale, uint16_t* y, int64_t rows, int64_t cols, float epsilon) {
  if (cols == 0) return;
  ForEachHalfRow(x, y, rows, cols, cols * 6,
                 [&](int64_t, float* row) { RmsNormalizeRow(row, scale, row, cols, epsilon); });
}

}  // namespace aic::cpu::kernels

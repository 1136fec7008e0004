#include "exec/cpu/kernels/resize_taps.h"

#include <algorithm>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// One row blended horizontally: out[j] = Σ weight · in[index] over j's taps.
AIC_KERNEL_CLONES void HorizontalRow(const float* in, const AxisTapTable& xs, float* out) {
  const int64_t n = xs.size();
  for (int64_t j = 0; j < n; ++j) {
    float acc = 0;
    for (int64_t t = xs.offset[j]; t < xs.offset[j + 1]; ++t) acc += xs.weight[t] * in[xs.index[t]];
    out[j] = acc;
  }
}

// out[j] = Σ_t w[t] · rows[t][j]: the vertical blend, vectorized across j.
AIC_KERNEL_CLONES void VerticalRow(const float* scratch, int64_t width, const int64_t* index, const float* weight,
                                   int64_t taps, float* out) {
  std::fill(out, out + width, 0.0f);
  for (int64_t t = 0; t < taps; ++t) {
    const float* row = scratch + index[t] * width;
    const float w = weight[t];
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) out[j] += w * row[j];
  }
}

}  // namespace

void ResizeByTapsF32(const float* x, float* y, int64_t planes, int64_t in_h, int64_t in_w, const AxisTapTable& ys,
                     const AxisTapTable& xs) {
  const int64_t out_h = ys.size(), out_w = xs.size();
  // Which input rows any output row reads (a downsampling skips some).
  std::vector<char> needed(static_cast<size_t>(in_h), 0);
  for (int64_t i : ys.index) needed[static_cast<size_t>(i)] = 1;
  const int64_t taps_w = static_cast<int64_t>(xs.index.size()) / std::max<int64_t>(1, out_w);
  ParallelFor(planes, in_h * out_w * std::max<int64_t>(1, taps_w) + out_h * out_w * 4, [&](int64_t p) {
    std::vector<float> scratch(static_cast<size_t>(in_h * out_w));
    const float* src = x + p * in_h * in_w;
    for (int64_t r = 0; r < in_h; ++r) {
      if (needed[static_cast<size_t>(r)]) HorizontalRow(src + r * in_w, xs, scratch.data() + r * out_w);
    }
    float* dst = y + p * out_h * out_w;
    for (int64_t i = 0; i < out_h; ++i) {
      const int64_t first = ys.offset[i];
      VerticalRow(scratch.data(), out_w, ys.index.data() + first, ys.weight.data() + first, ys.offset[i + 1] - first,
                  dst + i * out_w);
    }
  });
}

}  // namespace aic::cpu::kernels

#include "exec/cpu/kernels/channel_affine.h"

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// One channel's plane: a scalar scale and shift.
AIC_KERNEL_CLONES void PlaneRow(const float* x, float* y, int64_t n, float scale, float shift, bool relu) {
  if (relu) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i] * scale + shift;
      y[i] = v > 0.0f ? v : (v != v ? v : 0.0f);  // NaN stays NaN, as oneDNN's relu keeps it
    }
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale + shift;
}

// `spatial` positions of `block` channels side by side.
AIC_KERNEL_CLONES void BlockRows(const float* x, float* y, int64_t spatial, int64_t block, const float* scale,
                                 const float* shift, bool relu) {
  for (int64_t p = 0; p < spatial; ++p) {
    const float* xp = x + p * block;
    float* yp = y + p * block;
    if (relu) {
#pragma omp simd
      for (int64_t j = 0; j < block; ++j) {
        float v = xp[j] * scale[j] + shift[j];
        yp[j] = v > 0.0f ? v : (v != v ? v : 0.0f);
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < block; ++j) yp[j] = xp[j] * scale[j] + shift[j];
    }
  }
}

}  // namespace

void ChannelAffineF32(const float* x, float* y, const ChannelLayout& l, const float* scale, const float* shift,
                      bool relu) {
  const int64_t plane = l.spatial * l.block;
  ParallelFor(l.outer * l.blocks, plane, [&](int64_t item) {
    const int64_t b = item % l.blocks;
    const float* xi = x + item * plane;
    float* yi = y + item * plane;
    if (l.block == 1) {
      PlaneRow(xi, yi, l.spatial, scale[b], shift[b], relu);
    } else {
      BlockRows(xi, yi, l.spatial, l.block, scale + b * l.block, shift + b * l.block, relu);
    }
  });
}

}  // namespace aic::cpu::kernels

#include "exec/cpu/kernels/resize_linear.h"

#include <algorithm>
#include <cmath>

#include "exec/cpu/kernels/parallel.h"
#include "ops/tensor/resize_params.h"

namespace aic::cpu::kernels {

std::optional<LinearAxis> MakeLinearAxis(int64_t in, int64_t out, double scale, const std::string& coord) {
  if (in <= 0 || out <= 0 || !(scale > 0)) return std::nullopt;
  // tf_crop_and_resize reads a region (roi) and extrapolates outside it: not here.
  if (coord == "tf_crop_and_resize") return std::nullopt;
  LinearAxis ax;
  for (int64_t i = 0; i < out; ++i) {
    double ori = ResizeSourceCoordinate(coord, i, out, in, scale);
    double fl = std::floor(ori);
    auto i0 = static_cast<int64_t>(fl);
    ax.lo.push_back(std::clamp<int64_t>(i0, 0, in - 1));
    ax.hi.push_back(std::clamp<int64_t>(i0 + 1, 0, in - 1));
    ax.w.push_back(static_cast<float>(ori - fl));
  }
  return ax;
}

namespace {

// One output row: blend two input rows horizontally, then vertically.
AIC_KERNEL_CLONES void BlendRow(const float* r0, const float* r1, float wy, const int64_t* lo, const int64_t* hi,
                                const float* wx, float* out, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    float a = r0[lo[j]] + (r0[hi[j]] - r0[lo[j]]) * wx[j];
    float b = r1[lo[j]] + (r1[hi[j]] - r1[lo[j]]) * wx[j];
    out[j] = a + (b - a) * wy;
  }
}

}  // namespace

void ResizeBilinearF32(const float* x, float* y, int64_t planes, int64_t in_h, int64_t in_w, const LinearAxis& ys,
                       const LinearAxis& xs) {
  auto out_h = static_cast<int64_t>(ys.lo.size());
  auto out_w = static_cast<int64_t>(xs.lo.size());
  ParallelFor(planes * out_h, out_w * 4, [&](int64_t item) {
    int64_t p = item / out_h, i = item % out_h;
    const float* plane = x + p * in_h * in_w;
    BlendRow(plane + ys.lo[i] * in_w, plane + ys.hi[i] * in_w, ys.w[i], xs.lo.data(), xs.hi.data(), xs.w.data(),
             y + item * out_w, out_w);
  });
}

}  // namespace aic::cpu::kernels

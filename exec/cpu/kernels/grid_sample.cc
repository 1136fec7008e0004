#include "exec/cpu/kernels/grid_sample.h"

#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// Up to four taps of one output location: offsets into a channel plane and
// their weights (an outside tap: offset 0, weight 0, as zeros padding reads).
struct Taps {
  int64_t at[4];
  float w[4];
};

Taps TapsAt(const GridSampler& s, double gx, double gy, int64_t h, int64_t w) {
  Taps t{{0, 0, 0, 0}, {0, 0, 0, 0}};
  const double py = s.Pad(s.Unnormalize(gy, h), h);
  const double px = s.Pad(s.Unnormalize(gx, w), w);
  auto set = [&](int k, double yy, double xx, double weight) {
    // (Written so a NaN coordinate is outside too.)
    if (!(yy >= 0 && yy < static_cast<double>(h) && xx >= 0 && xx < static_cast<double>(w))) return;
    t.at[k] = static_cast<int64_t>(yy) * w + static_cast<int64_t>(xx);
    t.w[k] = static_cast<float>(weight);
  };
  if (s.mode == GridMode::kNearest) {
    // Ties to even, as PyTorch rounds (and the reference).
    set(0, std::nearbyint(py), std::nearbyint(px), 1.0);
    return t;
  }
  const double y0 = std::floor(py), x0 = std::floor(px);
  const double ty = py - y0, tx = px - x0;
  set(0, y0, x0, (1 - ty) * (1 - tx));
  set(1, y0, x0 + 1, (1 - ty) * tx);
  set(2, y0 + 1, x0, ty * (1 - tx));
  set(3, y0 + 1, x0 + 1, ty * tx);
  return t;
}

}  // namespace

void GridSample2dF32(const float* x, const float* grid, float* y, const GridSampleShape& shape,
                     const GridSampler& sampler) {
  const int64_t plane = shape.in_h * shape.in_w, out = shape.out_h * shape.out_w;
  ParallelFor(shape.batch, out * shape.channels * 4, [&](int64_t b) {
    std::vector<Taps> taps(static_cast<size_t>(out));
    const float* g = grid + b * out * 2;
    for (int64_t i = 0; i < out; ++i) taps[i] = TapsAt(sampler, g[2 * i], g[2 * i + 1], shape.in_h, shape.in_w);
    for (int64_t c = 0; c < shape.channels; ++c) {
      const float* src = x + (b * shape.channels + c) * plane;
      float* dst = y + (b * shape.channels + c) * out;
      for (int64_t i = 0; i < out; ++i) {
        // Taps of weight 0 are not read (an infinity there would make NaN),
        // as the reference skips them.
        const Taps& t = taps[i];
        float v = 0;
        for (int k = 0; k < 4; ++k) {
          if (t.w[k] != 0) v += t.w[k] * src[t.at[k]];
        }
        dst[i] = v;
      }
    }
  });
}

}  // namespace aic::cpu::kernels

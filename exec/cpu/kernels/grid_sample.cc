#include "exec/cpu/kernels/grid_sample.h"

#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// The four taps of every output location, one array per tap: offsets into a
// channel plane and weights (an outside tap: offset 0, weight 0, as zeros
// padding reads it). Nearest mode uses tap 0 only.
struct TapTable {
  std::vector<int32_t> at[4];
  std::vector<float> w[4];
  explicit TapTable(int64_t n) {
    for (int k = 0; k < 4; ++k) {
      at[k].assign(static_cast<size_t>(n), 0);
      w[k].assign(static_cast<size_t>(n), 0.0f);
    }
  }
};

void SetTaps(const GridSampler& s, double gx, double gy, int64_t h, int64_t w, TapTable& t, int64_t i) {
  const double py = s.Pad(s.Unnormalize(gy, h), h);
  const double px = s.Pad(s.Unnormalize(gx, w), w);
  auto set = [&](int k, double yy, double xx, double weight) {
    // (Written so a NaN coordinate is outside too.)
    if (!(yy >= 0 && yy < static_cast<double>(h) && xx >= 0 && xx < static_cast<double>(w))) return;
    t.at[k][i] = static_cast<int32_t>(static_cast<int64_t>(yy) * w + static_cast<int64_t>(xx));
    t.w[k][i] = static_cast<float>(weight);
  };
  if (s.mode == GridMode::kNearest) {
    // Ties to even, as PyTorch rounds (and the reference).
    set(0, std::nearbyint(py), std::nearbyint(px), 1.0);
    return;
  }
  const double y0 = std::floor(py), x0 = std::floor(px);
  const double ty = py - y0, tx = px - x0;
  set(0, y0, x0, (1 - ty) * (1 - tx));
  set(1, y0, x0 + 1, (1 - ty) * tx);
  set(2, y0 + 1, x0, ty * (1 - tx));
  set(3, y0 + 1, x0 + 1, ty * tx);
}

// One channel plane sampled at `n` locations by `taps` taps. A tap of weight
// 0 contributes 0 whatever it reads (an infinity there would make NaN; the
// reference does not read it): a select, so the loop stays branch-free.
AIC_KERNEL_CLONES
void SampleChannel(const float* __restrict src, float* __restrict dst, int64_t n, const int32_t* const* at,
                   const float* const* w, int taps) {
  if (taps == 1) {
    const int32_t* a0 = at[0];
    const float* w0 = w[0];
    for (int64_t i = 0; i < n; ++i) {
      const float p = w0[i] * src[a0[i]];
      dst[i] = w0[i] != 0.0f ? p : 0.0f;
    }
    return;
  }
  const int32_t *a0 = at[0], *a1 = at[1], *a2 = at[2], *a3 = at[3];
  const float *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
  for (int64_t i = 0; i < n; ++i) {
    const float p0 = w0[i] * src[a0[i]], p1 = w1[i] * src[a1[i]];
    const float p2 = w2[i] * src[a2[i]], p3 = w3[i] * src[a3[i]];
    dst[i] = ((w0[i] != 0.0f ? p0 : 0.0f) + (w1[i] != 0.0f ? p1 : 0.0f)) +
             ((w2[i] != 0.0f ? p2 : 0.0f) + (w3[i] != 0.0f ? p3 : 0.0f));
  }
}

// The n locations of `t` from `first` on.
void SampleChannel(const float* src, float* dst, int64_t n, const TapTable& t, int64_t first, int taps) {
  const int32_t* at[4] = {t.at[0].data() + first, t.at[1].data() + first, t.at[2].data() + first,
                          t.at[3].data() + first};
  const float* w[4] = {t.w[0].data() + first, t.w[1].data() + first, t.w[2].data() + first, t.w[3].data() + first};
  SampleChannel(src, dst, n, at, w, taps);
}

}  // namespace

void GridSample2dF32(const float* x, const float* grid, float* y, const GridSampleShape& shape,
                     const GridSampler& sampler) {
  const int64_t plane = shape.in_h * shape.in_w, out = shape.out_h * shape.out_w;
  const int taps = sampler.mode == GridMode::kNearest ? 1 : 4;
  // Many small samples (RAFT: 256 of 1 channel at 7x7) split by sample; few
  // large ones by location, then by channel.
  if (shape.batch > 1 && out * shape.channels < (int64_t{1} << 14)) {
    TapTable t(shape.batch * out);  // one table for all samples: one allocation
    ParallelFor(shape.batch, out * shape.channels * taps, [&](int64_t b) {
      const float* g = grid + b * out * 2;
      for (int64_t i = 0; i < out; ++i) {
        SetTaps(sampler, g[2 * i], g[2 * i + 1], shape.in_h, shape.in_w, t, b * out + i);
      }
      for (int64_t c = 0; c < shape.channels; ++c) {
        SampleChannel(x + (b * shape.channels + c) * plane, y + (b * shape.channels + c) * out, out, t, b * out, taps);
      }
    });
    return;
  }
  for (int64_t b = 0; b < shape.batch; ++b) {
    TapTable t(out);
    const float* g = grid + b * out * 2;
    ParallelFor(out, 64, [&](int64_t i) { SetTaps(sampler, g[2 * i], g[2 * i + 1], shape.in_h, shape.in_w, t, i); });
    ParallelFor(shape.channels, out * taps, [&](int64_t c) {
      SampleChannel(x + (b * shape.channels + c) * plane, y + (b * shape.channels + c) * out, out, t, 0, taps);
    });
  }
}

}  // namespace aic::cpu::kernels

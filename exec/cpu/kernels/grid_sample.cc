#include "exec/cpu/kernels/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/strided_copy.h"

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

// One output location over all C channels of a channels-last image:
// out[c] = Σ taps w_k · xt[a_k·C + c], a tap of weight 0 adding 0 (the same
// select and the same pairing as SampleChannel, so the same bits).
AIC_KERNEL_CLONES
void BlendTaps(const float* __restrict xt, int64_t channels, const int32_t* a, const float* w, int taps,
               float* __restrict out) {
  if (taps == 1) {
    const float* p = xt + static_cast<int64_t>(a[0]) * channels;
    const float w0 = w[0];
    for (int64_t c = 0; c < channels; ++c) {
      const float v = w0 * p[c];
      out[c] = w0 != 0.0f ? v : 0.0f;
    }
    return;
  }
  const float *p0 = xt + static_cast<int64_t>(a[0]) * channels, *p1 = xt + static_cast<int64_t>(a[1]) * channels;
  const float *p2 = xt + static_cast<int64_t>(a[2]) * channels, *p3 = xt + static_cast<int64_t>(a[3]) * channels;
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  for (int64_t c = 0; c < channels; ++c) {
    const float v0 = w0 * p0[c], v1 = w1 * p1[c], v2 = w2 * p2[c], v3 = w3 * p3[c];
    out[c] = ((w0 != 0.0f ? v0 : 0.0f) + (w1 != 0.0f ? v1 : 0.0f)) + ((w2 != 0.0f ? v2 : 0.0f) + (w3 != 0.0f ? v3 : 0.0f));
  }
}

// Images of many channels: sampled channels-last. The image goes to
// [H·W, C] and the result comes back from [OH·OW, C] by transposes in
// register tiles; in between each location is a few vector multiply-adds
// over its taps' channel rows. Sampled plane by plane, every tap was a
// scalar load at a computed address (the compiler's vectors only shuffled
// them in): a bilinear GridSample over [1, 64, 56, 56] ran at 1.16-1.19x ONNX
// Runtime's time.
constexpr int64_t kChannelsLastFrom = 16;

void SampleChannelsLast(const float* x, float* y, int64_t channels, int64_t plane, int64_t out, const TapTable& t,
                        int taps) {
  thread_local std::vector<float> xt, yt;
  xt.resize(static_cast<size_t>(channels * plane));
  yt.resize(static_cast<size_t>(channels * out));
  RunStridedCopy(MakeTransposeCopy({channels, plane}, {1, 0}, sizeof(float)), x, xt.data());
  const float* src = xt.data();
  float* dst = yt.data();
  constexpr int64_t kLocations = 64;
  ParallelFor((out + kLocations - 1) / kLocations, kLocations * channels * taps, [&](int64_t chunk) {
    const int64_t end = std::min(out, (chunk + 1) * kLocations);
    for (int64_t i = chunk * kLocations; i < end; ++i) {
      const int32_t a[4] = {t.at[0][i], t.at[1][i], t.at[2][i], t.at[3][i]};
      const float w[4] = {t.w[0][i], t.w[1][i], t.w[2][i], t.w[3][i]};
      BlendTaps(src, channels, a, w, taps, dst + i * channels);
    }
  });
  RunStridedCopy(MakeTransposeCopy({out, channels}, {1, 0}, sizeof(float)), yt.data(), y);
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
    if (shape.channels >= kChannelsLastFrom) {
      SampleChannelsLast(x + b * shape.channels * plane, y + b * shape.channels * out, shape.channels, plane, out, t,
                         taps);
      continue;
    }
    ParallelFor(shape.channels, out * taps, [&](int64_t c) {
      SampleChannel(x + (b * shape.channels + c) * plane, y + (b * shape.channels + c) * out, out, t, 0, taps);
    });
  }
}

}  // namespace aic::cpu::kernels

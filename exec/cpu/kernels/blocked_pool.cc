#include "exec/cpu/kernels/blocked_pool.h"

#include <limits>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vec8.h"

namespace aic::cpu::kernels {

namespace {

// The taps of one output along one axis that fall inside the input: k in
// [first, first + count) (the window's positions rise with k), and how many
// the average divides by (inside the input, or inside the declared pads).
struct AxisTaps {
  int64_t first = 0, count = 0, divisor = 0;
};

std::vector<AxisTaps> TapsAlong(int64_t out, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                int64_t pad_lead, int64_t pad_trail, bool include_pad) {
  std::vector<AxisTaps> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad_lead;
    AxisTaps& t = taps[o];
    while (t.first < kernel && start + t.first * dilation < 0) ++t.first;
    t.count = TapsWithin(start, kernel, dilation, 0, in);
    t.divisor = include_pad ? TapsWithin(start, kernel, dilation, -pad_lead, in + pad_trail) : t.count;
  }
  return taps;
}

template <bool kMax>
[[gnu::always_inline]] inline F8 Combine8(F8 acc, F8 v) {
  if constexpr (kMax) {
    return acc > v ? acc : v;  // as _mm256_max_ps(acc, v), the plain kernel's AVX2 path
  } else {
    return acc + v;
  }
}

template <bool kMax>
[[gnu::always_inline]] inline float Combine1(float acc, float v) {
  if constexpr (kMax) {
    return acc > v ? acc : v;
  } else {
    return acc + v;
  }
}

// One output row of one plane: every position's window over rows `rows`.
// kVectors: the block's vectors of eight (1 or 2: nChw8c, nChw16c), fixed so
// the accumulators stay in registers; 0 for any block (channels-last C).
// Three columns in a row, the common 3x3 window, are unrolled.
template <bool kMax, int kVectors>
AIC_KERNEL_CLONES void PoolRow(const float* plane, float* out, const WindowPoolGeometry& g, int64_t block,
                               const AxisTaps& rows, int64_t top, const std::vector<AxisTaps>& cols) {
  const float identity = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const int64_t row_stride = g.in_w * block, tap_stride = g.dw * block;
  const int64_t vectors = kVectors > 0 ? kVectors : block / 8;
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    const AxisTaps& c = cols[ow];
    const float* base = plane + (top + rows.first * g.dh) * row_stride + (ow * g.sw - g.pad_left + c.first * g.dw) * block;
    float* y = out + ow * block;
    const float scale = kMax ? 1.0f : 1.0f / static_cast<float>(rows.divisor * c.divisor);
    for (int64_t v = 0; v < vectors; ++v) {
      F8 acc = F8{} + identity;
      for (int64_t i = 0; i < rows.count; ++i) {
        const float* r = base + i * g.dh * row_stride + v * 8;
        if (c.count == 3) {
          acc = Combine8<kMax>(acc, Load8(r));
          acc = Combine8<kMax>(acc, Load8(r + tap_stride));
          acc = Combine8<kMax>(acc, Load8(r + 2 * tap_stride));
        } else {
          for (int64_t j = 0; j < c.count; ++j) acc = Combine8<kMax>(acc, Load8(r + j * tap_stride));
        }
      }
      if (!kMax) acc *= scale;
      std::memcpy(y + v * 8, &acc, sizeof acc);
    }
    if (kVectors > 0) continue;
    for (int64_t lane = vectors * 8; lane < block; ++lane) {  // a channels-last C off the vectors
      float acc = identity;
      for (int64_t i = 0; i < rows.count; ++i) {
        for (int64_t j = 0; j < c.count; ++j) acc = Combine1<kMax>(acc, base[i * g.dh * row_stride + j * tap_stride + lane]);
      }
      y[lane] = kMax ? acc : acc * scale;
    }
  }
}

template <bool kMax>
void PoolRowOf(const float* plane, float* out, const WindowPoolGeometry& g, int64_t block, const AxisTaps& rows,
               int64_t top, const std::vector<AxisTaps>& cols) {
  if (block == 8) {
    PoolRow<kMax, 1>(plane, out, g, block, rows, top, cols);
  } else if (block == 16) {
    PoolRow<kMax, 2>(plane, out, g, block, rows, top, cols);
  } else {
    PoolRow<kMax, 0>(plane, out, g, block, rows, top, cols);
  }
}

}  // namespace

void BlockedPoolF32(const float* x, float* y, const WindowPoolGeometry& g, int64_t block) {
  const std::vector<AxisTaps> rows =
      TapsAlong(g.out_h, g.in_h, g.kh, g.sh, g.dh, g.pad_top, g.pad_bottom, g.count_include_pad);
  const std::vector<AxisTaps> cols =
      TapsAlong(g.out_w, g.in_w, g.kw, g.sw, g.dw, g.pad_left, g.pad_right, g.count_include_pad);
  const int64_t in_plane = g.in_h * g.in_w * block, out_plane = g.out_h * g.out_w * block;
  ParallelFor(g.planes * g.out_h, g.out_w * block * g.kh * g.kw, [&](int64_t item) {
    const int64_t p = item / g.out_h, oh = item % g.out_h;
    const float* plane = x + p * in_plane;
    float* out = y + p * out_plane + oh * g.out_w * block;
    const int64_t top = oh * g.sh - g.pad_top;
    if (g.is_max) {
      PoolRowOf<true>(plane, out, g, block, rows[oh], top, cols);
    } else {
      PoolRowOf<false>(plane, out, g, block, rows[oh], top, cols);
    }
  });
}

}  // namespace aic::cpu::kernels

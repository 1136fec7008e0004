#include "exec/cpu/kernels/tap_conv.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"
#include "oneapi/dnnl/dnnl.h"

namespace aic::cpu::kernels {

namespace {

// Output positions o in [0, out) whose input position o + offset lies in
// [0, in): [lo, hi), empty when none.
void ValidRange(int64_t out, int64_t in, int64_t offset, int64_t* lo, int64_t* hi) {
  *lo = std::clamp<int64_t>(-offset, 0, out);
  *hi = std::clamp<int64_t>(in - offset, *lo, out);
}

AIC_KERNEL_CLONES void AddRow(float* y, const float* t, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += t[i];
}

}  // namespace

std::vector<ConvTap> LiveTaps(const TapConvGeometry& g) {
  std::vector<ConvTap> taps;
  for (int64_t i = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j) {
      ConvTap t;
      t.dy = i * g.dh - g.pad_top;
      t.dx = j * g.dw - g.pad_left;
      t.index = i * g.kw + j;
      ValidRange(g.out_h, g.in_h, t.dy, &t.oh0, &t.oh1);
      ValidRange(g.out_w, g.in_w, t.dx, &t.ow0, &t.ow1);
      if (t.positions() > 0) taps.push_back(t);
    }
  }
  return taps;
}

std::vector<float> WeightsByTap(const float* w, const TapConvGeometry& g) {
  const int64_t taps = g.kh * g.kw;
  std::vector<float> out(static_cast<size_t>(taps * g.out_c * g.in_c));
  for (int64_t m = 0; m < g.out_c; ++m) {
    for (int64_t c = 0; c < g.in_c; ++c) {
      for (int64_t t = 0; t < taps; ++t) out[(t * g.out_c + m) * g.in_c + c] = w[(m * g.in_c + c) * taps + t];
    }
  }
  return out;
}

void TapConvF32(const float* x, const float* by_tap, const float* bias, float* y, const TapConvGeometry& g,
                const std::vector<ConvTap>& taps) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local std::vector<float> packed, product;
  for (int64_t n = 0; n < g.batch; ++n) {
    const float* xn = x + n * g.in_c * in_plane;
    float* yn = y + n * g.out_c * out_plane;
    for (int64_t m = 0; m < g.out_c; ++m) std::fill(yn + m * out_plane, yn + (m + 1) * out_plane, bias ? bias[m] : 0.0f);
    for (const ConvTap& t : taps) {
      const float* wt = by_tap + t.index * g.out_c * g.in_c;
      const int64_t rows = t.oh1 - t.oh0, cols = t.ow1 - t.ow0, p = rows * cols;
      if (t.dy == 0 && t.dx == 0 && g.in_h == g.out_h && g.in_w == g.out_w) {
        // The whole map, unshifted: straight into y.
        dnnl_sgemm('N', 'N', g.out_c, p, g.in_c, 1.0f, wt, g.in_c, xn, in_plane, 1.0f, yn, out_plane);
        continue;
      }
      packed.resize(static_cast<size_t>(g.in_c * p));
      for (int64_t c = 0; c < g.in_c; ++c) {
        const float* plane = xn + c * in_plane;
        float* dst = packed.data() + c * p;
        for (int64_t r = 0; r < rows; ++r) {
          const float* src = plane + (t.oh0 + r + t.dy) * g.in_w + t.ow0 + t.dx;
          std::memcpy(dst + r * cols, src, static_cast<size_t>(cols) * sizeof(float));
        }
      }
      product.resize(static_cast<size_t>(g.out_c * p));
      dnnl_sgemm('N', 'N', g.out_c, p, g.in_c, 1.0f, wt, g.in_c, packed.data(), p, 0.0f, product.data(), p);
      for (int64_t m = 0; m < g.out_c; ++m) {
        float* plane = yn + m * out_plane;
        const float* src = product.data() + m * p;
        for (int64_t r = 0; r < rows; ++r) AddRow(plane + (t.oh0 + r) * g.out_w + t.ow0, src + r * cols, cols);
      }
    }
  }
  // The scratch outlives the call only while small: a large map's would be
  // held by the thread for the life of the process.
  constexpr size_t kKeep = size_t{1} << 20;  // floats
  if (packed.capacity() > kKeep) std::vector<float>().swap(packed);
  if (product.capacity() > kKeep) std::vector<float>().swap(product);
}

}  // namespace aic::cpu::kernels

#include "exec/cpu/kernels/depthwise_conv.h"

#include <algorithm>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

// The plane's geometry after zero padding: `padded` rows of pw = out_w +
// kw - 1 floats, out_h + kh - 1 of them.
struct PaddedPlane {
  const float* data;
  int64_t pw;
};

// Portable: row by row, each tap adding a shifted padded row.
AIC_KERNEL_CLONES void DepthwisePlaneRows(PaddedPlane in, const float* wc, float b, float* dst, int64_t out_h,
                                          int64_t out_w, int64_t kh, int64_t kw) {
  for (int64_t oy = 0; oy < out_h; ++oy) {
    float* row = dst + oy * out_w;
    for (int64_t j = 0; j < out_w; ++j) row[j] = b;
    for (int64_t ky = 0; ky < kh; ++ky) {
      for (int64_t kx = 0; kx < kw; ++kx) {
        const float k = wc[ky * kw + kx];
        const float* from = in.data + (oy + ky) * in.pw + kx;
#pragma omp simd
        for (int64_t j = 0; j < out_w; ++j) row[j] += k * from[j];
      }
    }
  }
}

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
// 16 outputs of four rows at a time, in four accumulators (one FMA chain
// waits on its latency at every tap), their kh·kw taps summed in registers
// and stored once; masked at the row's end, where lanes past it read nothing
// outside the padded row.
AIC_AVX512 void DepthwisePlaneAvx512(PaddedPlane in, const float* wc, float b, float* dst, int64_t out_h,
                                     int64_t out_w, int64_t kh, int64_t kw) {
  const int64_t pw = in.pw;
  int64_t oy = 0;
  for (; oy + 4 <= out_h; oy += 4) {
    const float* top = in.data + oy * pw;
    for (int64_t j = 0; j < out_w; j += 16) {
      const auto mask = static_cast<__mmask16>((1u << std::min<int64_t>(16, out_w - j)) - 1);
      __m512 a0 = _mm512_set1_ps(b), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t ky = 0; ky < kh; ++ky) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          const __m512 k = _mm512_set1_ps(wc[ky * kw + kx]);
          const float* r = top + ky * pw + j + kx;
          a0 = _mm512_fmadd_ps(k, _mm512_maskz_loadu_ps(mask, r), a0);
          a1 = _mm512_fmadd_ps(k, _mm512_maskz_loadu_ps(mask, r + pw), a1);
          a2 = _mm512_fmadd_ps(k, _mm512_maskz_loadu_ps(mask, r + 2 * pw), a2);
          a3 = _mm512_fmadd_ps(k, _mm512_maskz_loadu_ps(mask, r + 3 * pw), a3);
        }
      }
      float* row = dst + oy * out_w + j;
      _mm512_mask_storeu_ps(row, mask, a0);
      _mm512_mask_storeu_ps(row + out_w, mask, a1);
      _mm512_mask_storeu_ps(row + 2 * out_w, mask, a2);
      _mm512_mask_storeu_ps(row + 3 * out_w, mask, a3);
    }
  }
  for (; oy < out_h; ++oy) {
    const float* top = in.data + oy * pw;
    for (int64_t j = 0; j < out_w; j += 16) {
      const auto mask = static_cast<__mmask16>((1u << std::min<int64_t>(16, out_w - j)) - 1);
      __m512 acc = _mm512_set1_ps(b);
      for (int64_t ky = 0; ky < kh; ++ky) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          acc = _mm512_fmadd_ps(_mm512_set1_ps(wc[ky * kw + kx]),
                                _mm512_maskz_loadu_ps(mask, top + ky * pw + j + kx), acc);
        }
      }
      _mm512_mask_storeu_ps(dst + oy * out_w + j, mask, acc);
    }
  }
}

// Square 3x3, 5x5 and 7x7 windows straight from the plane, no padded copy
// (the copy and its zeroing were 31% of a [1, 64, 112, 112] 3x3 conv):
// rows above and below the plane and columns left and right of it masked
// off each load (masked lanes read nothing). Four output rows by 16
// columns at a time, each input row loaded once per column shift and added
// into every output row it reaches, its weight by the row's distance (half
// the loads of a load per tap and row, which bound the padded form: the
// FMAs then have the load ports to themselves).
template <int K>
AIC_AVX512 void DepthwisePlaneSquareAvx512(const float* src, const float* wc, float b, float* dst,
                                           const DepthwiseGeometry& g) {
  constexpr int kRows = 4;
  __m512 w[K * K];
  for (int k = 0; k < K * K; ++k) w[k] = _mm512_set1_ps(wc[k]);
  for (int64_t oy = 0; oy < g.out_h; oy += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, g.out_h - oy);
    for (int64_t j = 0; j < g.out_w; j += 16) {
      const int64_t lanes = std::min<int64_t>(16, g.out_w - j);
      // Lanes of column shift kx whose input column lies in the plane.
      __mmask16 cols[K];
      for (int kx = 0; kx < K; ++kx) {
        const int64_t first = j + kx - g.pad_left;  // lane 0's input column
        const int64_t lo = std::max<int64_t>(0, -first), hi = std::min<int64_t>(lanes, g.in_w - first);
        cols[kx] = hi > lo ? static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1)) : 0;
      }
      // Constant trip counts and no branches, so the loops unroll whole and
      // weights and sums stay in registers: a row above or below the plane
      // loads under an empty mask (zeros, nothing read).
      __m512 acc[kRows];
#pragma GCC unroll 4
      for (int o = 0; o < kRows; ++o) acc[o] = _mm512_set1_ps(b);
#pragma GCC unroll 16
      for (int i = 0; i < kRows + K - 1; ++i) {
        const int64_t iy = oy + i - g.pad_top;
        const auto inside =
            static_cast<__mmask16>(static_cast<uint64_t>(iy) < static_cast<uint64_t>(g.in_h) ? 0xFFFF : 0);
        const float* row = src + iy * g.in_w + j - g.pad_left;
#pragma GCC unroll 8
        for (int kx = 0; kx < K; ++kx) {
          const __m512 v = _mm512_maskz_loadu_ps(cols[kx] & inside, row + kx);
#pragma GCC unroll 4
          for (int o = 0; o < kRows; ++o) {
            const int ky = i - o;
            if (ky >= 0 && ky < K) acc[o] = _mm512_fmadd_ps(w[ky * K + kx], v, acc[o]);
          }
        }
      }
      const auto store = static_cast<__mmask16>((1u << lanes) - 1);
      for (int o = 0; o < rows; ++o) _mm512_mask_storeu_ps(dst + (oy + o) * g.out_w + j, store, acc[o]);
    }
  }
}

using SquarePlaneFn = void (*)(const float*, const float*, float, float*, const DepthwiseGeometry&);

SquarePlaneFn SquarePlaneKernel(int64_t kh, int64_t kw) {
  if (kh != kw) return nullptr;
  switch (kh) {
    case 3:
      return DepthwisePlaneSquareAvx512<3>;
    case 5:
      return DepthwisePlaneSquareAvx512<5>;
    case 7:
      return DepthwisePlaneSquareAvx512<7>;
    default:
      return nullptr;
  }
}
AIC_AVX512_END
#endif

}  // namespace

void DepthwiseConvF32(const float* x, const float* w, const float* bias, float* y, const DepthwiseGeometry& g) {
  const int64_t ph = g.out_h + g.kh - 1, pw = g.out_w + g.kw - 1;
  const bool avx512 = avx512::HaveAvx512();
#ifdef AIC_HAVE_AVX512_MATH
  if (SquarePlaneFn square = avx512 ? SquarePlaneKernel(g.kh, g.kw) : nullptr) {
    ParallelFor(g.planes, g.out_h * g.out_w * g.kh * g.kw, [&](int64_t p) {
      const int64_t c = p % g.channels;
      square(x + p * g.in_h * g.in_w, w + c * g.kh * g.kw, bias != nullptr ? bias[c] : 0.0f, y + p * g.out_h * g.out_w,
             g);
    });
    return;
  }
#endif
  ParallelFor(g.planes, g.out_h * g.out_w * g.kh * g.kw, [&](int64_t p) {
    // The plane copied into zeros at its padded place: every tap reads in
    // bounds, no border cases in the loops.
    thread_local std::vector<float> padded;
    padded.assign(static_cast<size_t>(ph * pw), 0.0f);
    const float* src = x + p * g.in_h * g.in_w;
    const int64_t first = std::max<int64_t>(0, g.pad_left), skip = std::max<int64_t>(0, -g.pad_left);
    const int64_t count = std::min(g.in_w - skip, pw - first);
    for (int64_t r = 0; r < ph && count > 0; ++r) {
      const int64_t iy = r - g.pad_top;
      if (iy >= 0 && iy < g.in_h) std::copy_n(src + iy * g.in_w + skip, count, padded.data() + r * pw + first);
    }
    const int64_t c = p % g.channels;
    const PaddedPlane in{padded.data(), pw};
    const float* wc = w + c * g.kh * g.kw;
    const float b = bias != nullptr ? bias[c] : 0.0f;
    float* dst = y + p * g.out_h * g.out_w;
#ifdef AIC_HAVE_AVX512_MATH
    if (avx512) {
      DepthwisePlaneAvx512(in, wc, b, dst, g.out_h, g.out_w, g.kh, g.kw);
      return;
    }
#endif
    (void)avx512;
    DepthwisePlaneRows(in, wc, b, dst, g.out_h, g.out_w, g.kh, g.kw);
  });
}

}  // namespace aic::cpu::kernels

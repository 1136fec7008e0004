#include "exec/cpu/kernels/resize_linear.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
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

namespace {

// A row of an integer upsampling by K: each input element written K times
// (a fixed K lets the compiler vectorize the interleave).
template <typename T, int K>
AIC_KERNEL_CLONES void RepeatEach(const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < K; ++k) out[i * K + k] = in[i];
  }
}

// How many output rows from r on read input row ys[r] (ys: each output
// row's source row, nondecreasing for nearest resizing).
int64_t SourceRowRun(const std::vector<int64_t>& ys, int64_t r) {
  const auto out_h = static_cast<int64_t>(ys.size());
  int64_t run = 1;
  while (r + run < out_h && ys[r + run] == ys[r]) ++run;
  return run;
}

// K when xs[c] == c / K for every c (an integer upsampling of the row), else 0.
int RepeatFactor(const std::vector<int64_t>& xs, int64_t in_w) {
  const auto out_w = static_cast<int64_t>(xs.size());
  if (in_w == 0 || out_w % in_w != 0) return 0;
  const int64_t k = out_w / in_w;
  if (k != 2 && k != 4) return 0;
  for (int64_t c = 0; c < out_w; ++c) {
    if (xs[c] != c / k) return 0;
  }
  return static_cast<int>(k);
}

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
// A 4-byte row upsampled by K (2 or 4) written to `copies` output rows
// `stride` apart straight from registers: each 16 inputs become K vectors
// by vpermd, stored to every copy (the generic path wrote one row, then
// copied it: 0.10 ms for [1, 64, 56, 56] -> 2x against ORT's 0.065).
// Lane j of output vector q reads input lane (16q + j) / K: a table in
// read-only data, not built per row (its sixteen scalar stores and the
// vector load of them stalled on store forwarding every row: a third of a
// 2x upsampling of [1, 256, 14, 14]).
template <int K>
struct RepeatIndex {
  alignas(64) int32_t lanes[K][16];
  constexpr RepeatIndex() : lanes() {
    for (int q = 0; q < K; ++q) {
      for (int j = 0; j < 16; ++j) lanes[q][j] = (q * 16 + j) / K;
    }
  }
};
template <int K>
constexpr RepeatIndex<K> kRepeatIndex;

template <int K>
AIC_AVX512 void RepeatRowsAvx512(const uint32_t* in, uint32_t* out, int64_t n, int64_t copies, int64_t stride) {
  __m512i index[K];
  for (int q = 0; q < K; ++q) index[q] = _mm512_load_si512(kRepeatIndex<K>.lanes[q]);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = std::min<int64_t>(16, n - i);
    const __m512i v = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << left) - 1), in + i);
    for (int q = 0; q < K; ++q) {
      const int64_t valid = std::clamp<int64_t>(K * left - 16 * q, 0, 16);
      if (valid == 0) break;
      const auto mask = static_cast<__mmask16>((1u << valid) - 1);
      const __m512i w = _mm512_permutexvar_epi32(index[q], v);
      for (int64_t c = 0; c < copies; ++c) _mm512_mask_storeu_epi32(out + c * stride + K * i + 16 * q, mask, w);
    }
  }
}

// Rows of at most 16 four-byte inputs (the late stages of a CNN: FPN and
// U-Net upsamplings of 7x7 to 20x20 maps) at any column mapping: the `run`
// output rows an input row fills are adjacent, one stretch of run·out_w
// values whose value j is input column xs[j % out_w], so each input row
// is one load and whole-vector permutes and stores through `table` (that
// index for j up to the longest run's stretch, a multiple of 16 long). Row
// by row, a 28-wide output row was a full and a masked store per copy plus
// the loop around them: 1.5x ONNX Runtime's time on [1, 256, 14, 14] 2x.
AIC_AVX512 void NearestShortRowsAvx512(const uint32_t* src, uint32_t* dst, int64_t in_w, int64_t out_w,
                                       const std::vector<int64_t>& ys, const std::vector<int32_t>& table) {
  const auto out_h = static_cast<int64_t>(ys.size());
  const __m512i* index = reinterpret_cast<const __m512i*>(table.data());
  const auto in_mask = static_cast<__mmask16>((1u << in_w) - 1);
  for (int64_t r = 0; r < out_h;) {
    const int64_t run = SourceRowRun(ys, r);
    const __m512i v = _mm512_maskz_loadu_epi32(in_mask, src + ys[r] * in_w);
    uint32_t* out = dst + r * out_w;
    const int64_t n = run * out_w;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      _mm512_storeu_si512(out + j, _mm512_permutexvar_epi32(_mm512_loadu_si512(index + j / 16), v));
    }
    if (j < n) {
      _mm512_mask_storeu_epi32(out + j, static_cast<__mmask16>((1u << (n - j)) - 1),
                               _mm512_permutexvar_epi32(_mm512_loadu_si512(index + j / 16), v));
    }
    r += run;
  }
}
AIC_AVX512_END

// The table NearestShortRowsAvx512 reads, or empty where its rows are longer
// than a vector or the longest stretch is over 64 vectors.
std::vector<int32_t> ShortRowsTable(const std::vector<int64_t>& ys, const std::vector<int64_t>& xs, int64_t in_w) {
  const auto out_h = static_cast<int64_t>(ys.size()), out_w = static_cast<int64_t>(xs.size());
  if (in_w > 16 || out_w == 0) return {};
  int64_t longest = 0;
  for (int64_t r = 0; r < out_h;) {
    const int64_t run = SourceRowRun(ys, r);
    longest = std::max(longest, run);
    r += run;
  }
  const int64_t n = (longest * out_w + 15) / 16 * 16;
  if (n > 64 * 16) return {};
  std::vector<int32_t> table(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    table[static_cast<size_t>(j)] = static_cast<int32_t>(xs[static_cast<size_t>(j % out_w)]);
  return table;
}
#endif

// True when the AVX-512 repeat wrote `copies` rows of `in` upsampled by K.
template <typename T>
bool RepeatRowsFast(const T* in, T* out, int64_t n, int repeat, int64_t copies, int64_t stride) {
#ifdef AIC_HAVE_AVX512_MATH
  if constexpr (sizeof(T) == 4) {
    if (!avx512::HaveAvx512()) return false;
    const auto* src = reinterpret_cast<const uint32_t*>(in);
    auto* dst = reinterpret_cast<uint32_t*>(out);
    if (repeat == 2) RepeatRowsAvx512<2>(src, dst, n, copies, stride);
    if (repeat == 4) RepeatRowsAvx512<4>(src, dst, n, copies, stride);
    return repeat == 2 || repeat == 4;
  }
#endif
  (void)in, (void)out, (void)n, (void)repeat, (void)copies, (void)stride;
  return false;
}

template <typename T>
void NearestPlanes(const T* x, T* y, int64_t planes, int64_t in_h, int64_t in_w, const std::vector<int64_t>& ys,
                   const std::vector<int64_t>& xs) {
  const auto out_h = static_cast<int64_t>(ys.size()), out_w = static_cast<int64_t>(xs.size());
#ifdef AIC_HAVE_AVX512_MATH
  if constexpr (sizeof(T) == 4) {
    const std::vector<int32_t> table = avx512::HaveAvx512() ? ShortRowsTable(ys, xs, in_w) : std::vector<int32_t>();
    if (!table.empty()) {
      ParallelFor(planes, out_h * out_w, [&](int64_t p) {
        NearestShortRowsAvx512(reinterpret_cast<const uint32_t*>(x + p * in_h * in_w),
                               reinterpret_cast<uint32_t*>(y + p * out_h * out_w), in_w, out_w, ys, table);
      });
      return;
    }
  }
#endif
  const int repeat = RepeatFactor(xs, in_w);
  ParallelFor(planes, out_h * out_w, [&](int64_t p) {
    const T* src = x + p * in_h * in_w;
    T* dst = y + p * out_h * out_w;
    for (int64_t r = 0; r < out_h;) {
      const int64_t run = SourceRowRun(ys, r);
      T* row = dst + r * out_w;
      const T* in = src + ys[r] * in_w;
      if (!RepeatRowsFast(in, row, in_w, repeat, run, out_w)) {
        if (repeat == 2) {
          RepeatEach<T, 2>(in, row, in_w);
        } else if (repeat == 4) {
          RepeatEach<T, 4>(in, row, in_w);
        } else {
          for (int64_t c = 0; c < out_w; ++c) row[c] = in[xs[c]];
        }
        for (int64_t k = 1; k < run; ++k) std::copy(row, row + out_w, row + k * out_w);
      }
      r += run;
    }
  });
}

}  // namespace

void ResizeNearest(const void* x, void* y, int64_t planes, int64_t in_h, int64_t in_w,
                   const std::vector<int64_t>& ys, const std::vector<int64_t>& xs, size_t elem) {
  switch (elem) {
    case 1: return NearestPlanes(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), planes, in_h, in_w, ys, xs);
    case 2: return NearestPlanes(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), planes, in_h, in_w, ys, xs);
    case 4: return NearestPlanes(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), planes, in_h, in_w, ys, xs);
    default: return NearestPlanes(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), planes, in_h, in_w, ys, xs);
  }
}

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

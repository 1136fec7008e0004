#include "exec/cpu/kernels/window_pool.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kLanes = 16;

int64_t RoundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// One output row's inputs: the input rows its window reads (those inside
// the input, `dilation` apart from `first`) and, for the average, how many
// of its taps the divisor counts.
struct RowWindow {
  int64_t first = 0, count = 0;
  int64_t divisor_rows = 1;
};

// One output row's work. `padded` is a row buffer whose position p holds
// input column p - pad_left (the identity outside the input), readable
// 64 + (kw-1)·dw past sw·RoundUp(out_w, 16); `reciprocal` is readable to
// RoundUp(out_w, 16).
struct RowJob {
  const float* const* rows;  // the window's input rows inside the input
  int64_t count;             // how many (at least one)
  int64_t in_w, pad_left;
  float* padded;
  float* y;
  int64_t out_w, kw, sw, dw;
  // The average's 1 / divisor per output of this row (padded to a multiple
  // of 16); null for MaxPool.
  const float* reciprocal;
  // The end of the outputs this block writes: a row's last vector may run
  // past the row up to here (the rows after it are written later, by this
  // thread), sparing the masked store where it is slow.
  const float* y_limit;
};

// A block of output rows of one plane, and what every row reads.
struct RowBlock {
  const WindowPoolGeometry* g;
  const RowWindow* windows;
  const float* reciprocals;  // (kh + 1) rows of padded_out_w; null for MaxPool
  int64_t padded_out_w;
  const float* x;  // the plane's input
  float* y;        // and output
  int64_t oh_begin, oh_end;
  float* padded;  // the row buffer (RowJob::padded)
  const float** rows;
};

using PoolBlockFn = void (*)(const RowBlock& block);

RowJob FirstJob(const RowBlock& b) {
  const WindowPoolGeometry& g = *b.g;
  const float* y_limit = b.y + b.oh_end * g.out_w;
  return RowJob{b.rows, 0, g.in_w, g.pad_left, b.padded, nullptr, g.out_w, g.kw, g.sw, g.dw, nullptr, y_limit};
}

// Points `job` at output row oh.
inline void SetRow(const RowBlock& b, int64_t oh, RowJob& job) {
  const RowWindow& w = b.windows[oh];
  const WindowPoolGeometry& g = *b.g;
  for (int64_t k = 0; k < w.count; ++k) b.rows[k] = b.x + (w.first + k * g.dh) * g.in_w;
  job.count = w.count;
  job.y = b.y + oh * g.out_w;
  if (b.reciprocals != nullptr) job.reciprocal = b.reciprocals + w.divisor_rows * b.padded_out_w;
}

template <bool kMax>
inline float Op(float a, float b) {
  if constexpr (kMax) {
    return a < b ? b : a;
  } else {
    return a + b;
  }
}

// Portable: the rows' reduction into the padded row, then y[o] = reduction
// over k of padded[o·sw + k·dw] and the average's division. Loops over taps
// outside, so the inner loops vectorize where the compiler can.
template <bool kMax>
AIC_KERNEL_CLONES void PoolRowPortable(const RowJob& j) {
  float* inside = j.padded + j.pad_left;
  std::copy(j.rows[0], j.rows[0] + j.in_w, inside);
  for (int64_t k = 1; k < j.count; ++k) {
    const float* src = j.rows[k];
    for (int64_t i = 0; i < j.in_w; ++i) inside[i] = Op<kMax>(inside[i], src[i]);
  }
  const float* r = j.padded;
  const int64_t sw = j.sw;
  float* y = j.y;
  for (int64_t o = 0; o < j.out_w; ++o) y[o] = r[o * sw];
  for (int64_t k = 1; k < j.kw; ++k) {
    const float* rk = r + k * j.dw;
    for (int64_t o = 0; o < j.out_w; ++o) y[o] = Op<kMax>(y[o], rk[o * sw]);
  }
  if (!kMax) {
    for (int64_t o = 0; o < j.out_w; ++o) y[o] *= j.reciprocal[o];
  }
}

template <bool kMax>
void PoolBlockPortable(const RowBlock& b) {
  RowJob job = FirstJob(b);
  for (int64_t oh = b.oh_begin; oh < b.oh_end; ++oh) {
    SetRow(b, oh, job);
    PoolRowPortable<kMax>(job);
  }
}

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN

template <bool kMax>
AIC_AVX512 inline __m512 Combine(__m512 a, __m512 b) {
  return kMax ? _mm512_max_ps(a, b) : _mm512_add_ps(a, b);
}

template <bool kMax>
AIC_AVX512 inline __m512 Identity() {
  return _mm512_set1_ps(kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
}

AIC_AVX512 inline __mmask16 FirstLanes(int64_t n) {
  return n >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
}

// v shifted down by `shift` lanes (0-15), the top filled from `next`:
// valignd takes its shift as an immediate.
AIC_AVX512 inline __m512 ShiftIn(__m512 v, __m512 next, int64_t shift) {
  __m512i a = _mm512_castps_si512(next), b = _mm512_castps_si512(v);
  switch (shift) {
#define AIC_POOL_SHIFT(n) \
  case n:                 \
    return _mm512_castsi512_ps(_mm512_alignr_epi32(a, b, n));
    AIC_POOL_SHIFT(1) AIC_POOL_SHIFT(2) AIC_POOL_SHIFT(3) AIC_POOL_SHIFT(4) AIC_POOL_SHIFT(5)
    AIC_POOL_SHIFT(6) AIC_POOL_SHIFT(7) AIC_POOL_SHIFT(8) AIC_POOL_SHIFT(9) AIC_POOL_SHIFT(10)
    AIC_POOL_SHIFT(11) AIC_POOL_SHIFT(12) AIC_POOL_SHIFT(13) AIC_POOL_SHIFT(14) AIC_POOL_SHIFT(15)
#undef AIC_POOL_SHIFT
    default:
      return v;
  }
}

// Padded positions [16·c, 16·c + 16) of the window's rows reduced
// vertically: masked loads of input columns 16·c - pad_left + lane, the
// identity outside the input.
// The lanes of padded positions [16·c, 16·c + 16) inside the input (input
// columns 16·c - pad_left + lane in [0, in_w)); 0 where none is.
AIC_AVX512 inline __mmask16 InputLanes(int64_t c, int64_t pad_left, int64_t in_w) {
  const int64_t first = c * kLanes - pad_left;
  const int64_t lo = std::max<int64_t>(0, -first), hi = std::min<int64_t>(kLanes, in_w - first);
  return hi > lo ? static_cast<__mmask16>(FirstLanes(hi) & ~FirstLanes(lo)) : 0;
}

template <bool kMax>
AIC_AVX512 inline __m512 ReducedColumns(const RowJob& j, int64_t c) {
  const int64_t first = c * kLanes - j.pad_left;
  const __mmask16 m = InputLanes(c, j.pad_left, j.in_w);
  if (m == 0) return Identity<kMax>();
  // Lanes outside the mask are neither read nor faulted on; the address is
  // formed from the integer so a row's lead-in needs no pointer before it.
  auto at = [&](const float* row) {
    return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) + first * sizeof(float));
  };
  __m512 acc = _mm512_mask_loadu_ps(Identity<kMax>(), m, at(j.rows[0]));
  for (int64_t k = 1; k < j.count; ++k) acc = Combine<kMax>(acc, _mm512_mask_loadu_ps(Identity<kMax>(), m, at(j.rows[k])));
  return acc;
}

AIC_AVX512 inline void StoreOutputs(const RowJob& j, int64_t o, __m512 acc, bool average) {
  if (average) acc = _mm512_mul_ps(acc, _mm512_loadu_ps(j.reciprocal + o));
  _mm512_mask_storeu_ps(j.y + o, FirstLanes(j.out_w - o), acc);
}

// Undilated stride 1 (kw <= 16) and stride 2 (kw <= 32), all in registers:
// the rows are reduced sixteen columns at a time, and each output vector's
// taps are those columns shifted (stride 1), or the even and odd elements of
// 32 of them shifted (stride 2): tap 2i of sixteen stride-2 outputs is the
// evens shifted by i lanes, tap 2i+1 the odds. Nothing is stored but the
// outputs: reading back a row buffer just written with masked stores stalled
// on store forwarding, most of the time on short rows. kKw > 0 fixes the
// window's width, so each tap's shift is an immediate, not a jump through
// ShiftIn's switch (as in the AVX2 form below).
// Sixteen outputs' windows along the row, from the reduced columns they
// read: v0, v1 at stride 1 (taps: v0 shifted by k lanes, v1 shifted in),
// v0-v3 at stride 2 (the even and odd positions of v0:v1 and v2:v3, tap 2i
// the evens shifted by i lanes, tap 2i+1 the odds).
template <bool kMax, int kStride>
AIC_AVX512 inline __m512 WindowsAlongRow(int64_t kw, __m512 v0, __m512 v1, __m512 v2, __m512 v3) {
  if constexpr (kStride == 1) {
    __m512 acc = v0;
    for (int64_t k = 1; k < kw; ++k) acc = Combine<kMax>(acc, ShiftIn(v0, v1, k));
    return acc;
  } else {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512 e = _mm512_permutex2var_ps(v0, even, v1), od = _mm512_permutex2var_ps(v0, odd, v1);
    const __m512 e2 = _mm512_permutex2var_ps(v2, even, v3), od2 = _mm512_permutex2var_ps(v2, odd, v3);
    __m512 acc = e;
    for (int64_t k = 1; k < kw; ++k)
      acc = Combine<kMax>(acc, (k & 1) ? ShiftIn(od, od2, k / 2) : ShiftIn(e, e2, k / 2));
    return acc;
  }
}

template <bool kMax, int kStride, int kKw>
AIC_AVX512 void PoolRowInRegisters(const RowJob& j) {
  const int64_t kw = kKw > 0 ? kKw : j.kw;
  if constexpr (kStride == 1) {
    __m512 cur = ReducedColumns<kMax>(j, 0);
    for (int64_t o = 0; o < j.out_w; o += kLanes) {
      __m512 next = ReducedColumns<kMax>(j, o / kLanes + 1);
      StoreOutputs(j, o, WindowsAlongRow<kMax, 1>(kw, cur, next, cur, next), !kMax);
      cur = next;
    }
  } else {
    __m512 v0 = ReducedColumns<kMax>(j, 0), v1 = ReducedColumns<kMax>(j, 1);
    for (int64_t o = 0; o < j.out_w; o += kLanes) {
      const int64_t c = 2 * (o / kLanes);
      __m512 v2 = ReducedColumns<kMax>(j, c + 2), v3 = ReducedColumns<kMax>(j, c + 3);
      StoreOutputs(j, o, WindowsAlongRow<kMax, 2>(kw, v0, v1, v2, v3), !kMax);
      v0 = v2;
      v1 = v3;
    }
  }
}

// Any stride and dilation: the vertical pass into the padded row sixteen
// columns at a time (the last ones masked), then sixteen outputs at a time,
// their taps gathered from it.
template <bool kMax>
AIC_AVX512 void PoolRowGathered(const RowJob& j) {
  float* inside = j.padded + j.pad_left;
  for (int64_t i = 0; i < j.in_w; i += kLanes) {
    const __mmask16 m = FirstLanes(j.in_w - i);
    __m512 acc = _mm512_maskz_loadu_ps(m, j.rows[0] + i);
    for (int64_t k = 1; k < j.count; ++k) acc = Combine<kMax>(acc, _mm512_maskz_loadu_ps(m, j.rows[k] + i));
    _mm512_mask_storeu_ps(inside + i, m, acc);
  }
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(j.sw)));
  for (int64_t o = 0; o < j.out_w; o += kLanes) {
    const float* p = j.padded + o * j.sw;
    __m512 acc = _mm512_i32gather_ps(step, p, 4);
    for (int64_t k = 1; k < j.kw; ++k) acc = Combine<kMax>(acc, _mm512_i32gather_ps(step, p + k * j.dw, 4));
    StoreOutputs(j, o, acc, !kMax);
  }
}

// The rows of a block, each row inlined with its constants kept in
// registers (kStride 0: gathered).
template <bool kMax, int kStride, int kKw>
AIC_AVX512 void PoolBlockAvx512(const RowBlock& b) {
  RowJob job = FirstJob(b);
  for (int64_t oh = b.oh_begin; oh < b.oh_end; ++oh) {
    SetRow(b, oh, job);
    if constexpr (kStride == 0) {
      PoolRowGathered<kMax>(job);
    } else {
      PoolRowInRegisters<kMax, kStride, kKw>(job);
    }
  }
}

// The block function for an undilated window in registers: the common
// widths (3 and 5 at stride 1, 2 and 3 at stride 2) fixed.
template <bool kMax>
PoolBlockFn PoolBlockAvx512For(const WindowPoolGeometry& g) {
  if (g.sw == 1) {
    if (g.kw == 3) return PoolBlockAvx512<kMax, 1, 3>;
    return g.kw == 5 ? PoolBlockAvx512<kMax, 1, 5> : PoolBlockAvx512<kMax, 1, 0>;
  }
  if (g.kw == 2) return PoolBlockAvx512<kMax, 2, 2>;
  return g.kw == 3 ? PoolBlockAvx512<kMax, 2, 3> : PoolBlockAvx512<kMax, 2, 0>;
}

// Output rows of one vector or less (out_w <= 16: the late stages of a CNN,
// [1, 256, 14, 14] pooled 2x2 to [1, 256, 7, 7]), in registers as above.
// Such a row is a dozen vector operations, and the row loop's bookkeeping
// (the window's row pointers, the masks, the row of reciprocals) took four
// times that: 1.5x ONNX Runtime's time on that pool (perf: three quarters
// of the samples on scalar instructions). Every plane has the same geometry,
// so here the planes are the inner loop of each output row, with the row's
// offsets, masks and reciprocals held in registers across them.
struct ShortRows {
  const WindowPoolGeometry* g;
  const RowWindow* windows;
  const float* reciprocals;  // as RowBlock's
  int64_t padded_out_w;
  const float* x;  // the first plane's input
  float* y;        // and output
  int64_t planes;  // how many, from x and y on
  int64_t oh_begin, oh_end;
};

using ShortRowsFn = void (*)(const ShortRows& block);

// Sixteen columns of a window's `count` input rows (`row_bytes` apart, the
// first at address `at`) reduced, lanes outside m the identity (not read).
template <bool kMax>
AIC_AVX512 inline __m512 ShortColumns(uintptr_t at, int64_t count, uintptr_t row_bytes, __mmask16 m) {
  __m512 acc = Identity<kMax>();
  if (m == 0) return acc;
  for (int64_t k = 0; k < count; ++k, at += row_bytes) {
    acc = Combine<kMax>(acc, _mm512_mask_loadu_ps(Identity<kMax>(), m, reinterpret_cast<const float*>(at)));
  }
  return acc;
}

template <bool kMax, int kStride, int kKw>
AIC_AVX512 void PoolShortRowsAvx512(const ShortRows& b) {
  const WindowPoolGeometry& g = *b.g;
  const int64_t kw = kKw > 0 ? kKw : g.kw;
  // The reduced columns a row's outputs read: padded positions 0 to
  // sw·(out_w - 1) + kw - 1, sixteen a vector (two at stride 1, four at 2:
  // what the row's one output vector reads in PoolRowInRegisters). Those
  // with no input column are the identity.
  const int64_t last = kStride * (g.out_w - 1) + kw - 1;
  auto column_mask = [&](int64_t c) -> __mmask16 { return c * kLanes <= last ? InputLanes(c, g.pad_left, g.in_w) : 0; };
  // Named, not an array: an array of vectors indexed in a loop was kept on
  // the stack, each one stored and loaded back per row.
  const __mmask16 m0 = column_mask(0), m1 = column_mask(1);
  const __mmask16 m2 = kStride == 2 ? column_mask(2) : 0, m3 = kStride == 2 ? column_mask(3) : 0;
  const __mmask16 out_mask = FirstLanes(g.out_w);
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  const auto row_bytes = static_cast<uintptr_t>(g.dh * g.in_w * 4);
  for (int64_t oh = b.oh_begin; oh < b.oh_end; ++oh) {
    const RowWindow& w = b.windows[oh];
    const int64_t count = w.count;
    const __m512 reciprocal =
        kMax ? _mm512_setzero_ps() : _mm512_loadu_ps(b.reciprocals + w.divisor_rows * b.padded_out_w);
    // The address arithmetic in integers: a row's lead-in (its first
    // columns left of the input) is masked off, never read, and needs no
    // pointer before the input.
    const uintptr_t top = reinterpret_cast<uintptr_t>(b.x + w.first * g.in_w) - static_cast<uintptr_t>(g.pad_left * 4);
    float* y = b.y + oh * g.out_w;
    for (int64_t p = 0; p < b.planes; ++p) {
      const uintptr_t base = top + static_cast<uintptr_t>(p * in_plane * 4);
      const __m512 v0 = ShortColumns<kMax>(base, count, row_bytes, m0);
      const __m512 v1 = ShortColumns<kMax>(base + 64, count, row_bytes, m1);
      // Stride 1 reads no third or fourth vector (m2, m3 are 0).
      const __m512 v2 = ShortColumns<kMax>(base + 128, count, row_bytes, m2);
      const __m512 v3 = ShortColumns<kMax>(base + 192, count, row_bytes, m3);
      __m512 acc = WindowsAlongRow<kMax, kStride>(kw, v0, v1, v2, v3);
      if (!kMax) acc = _mm512_mul_ps(acc, reciprocal);
      _mm512_mask_storeu_ps(y + p * out_plane, out_mask, acc);
    }
  }
}

// The short-row function for g (the widths PoolBlockAvx512For fixes), or
// null where rows are longer than a vector or the window is not one the
// register paths take.
template <bool kMax>
ShortRowsFn PoolShortRowsAvx512For(const WindowPoolGeometry& g) {
  if (g.out_w > kLanes || g.dw != 1) return nullptr;
  if (g.sw == 1 && g.kw <= kLanes) {
    if (g.kw == 3) return PoolShortRowsAvx512<kMax, 1, 3>;
    return g.kw == 5 ? PoolShortRowsAvx512<kMax, 1, 5> : PoolShortRowsAvx512<kMax, 1, 0>;
  }
  if (g.sw != 2 || g.kw > 2 * kLanes) return nullptr;
  if (g.kw == 2) return PoolShortRowsAvx512<kMax, 2, 2>;
  return g.kw == 3 ? PoolShortRowsAvx512<kMax, 2, 3> : PoolShortRowsAvx512<kMax, 2, 0>;
}
AIC_AVX512_END

#endif


#ifdef AIC_HAVE_AVX2_MATH
// The register paths with 8 lanes, for CPUs with AVX2 but not AVX-512 (the
// portable row's strided taps do not vectorize: 1.3-2.2x ONNX Runtime's time
// on a Zen 3 EPYC, bench/OPS.md). Same scheme as the 16-lane forms above;
// AVX2 has no masked max, so a partial load blends in the identity, and a
// shift across two vectors is a 128-bit half swap then a byte align.
namespace pool_avx2 {

constexpr int64_t kLanes8 = 8;

template <bool kMax>
AIC_AVX2 inline __m256 Combine(__m256 a, __m256 b) {
  return kMax ? _mm256_max_ps(a, b) : _mm256_add_ps(a, b);
}

template <bool kMax>
AIC_AVX2 inline __m256 Identity() {
  return _mm256_set1_ps(kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
}

// Lanes [lo, hi) set.
AIC_AVX2 inline __m256i LaneMask(int64_t lo, int64_t hi) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i at_least_lo = _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1));
  __m256i below_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane);
  return _mm256_and_si256(at_least_lo, below_hi);
}

// Lanes shift..shift+7 of the 16 lanes (v, next), shift 0-7.
AIC_AVX2 inline __m256 ShiftIn(__m256 v, __m256 next, int64_t shift) {
  // (v's high half, next's low half): with v and next, every 4-lane window.
  const __m256i mid = _mm256_castps_si256(_mm256_permute2f128_ps(v, next, 0x21));
  const __m256i a = _mm256_castps_si256(v), b = _mm256_castps_si256(next);
  switch (shift) {
    case 1: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, a, 4));
    case 2: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, a, 8));
    case 3: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, a, 12));
    case 4: return _mm256_castsi256_ps(mid);
    case 5: return _mm256_castsi256_ps(_mm256_alignr_epi8(b, mid, 4));
    case 6: return _mm256_castsi256_ps(_mm256_alignr_epi8(b, mid, 8));
    case 7: return _mm256_castsi256_ps(_mm256_alignr_epi8(b, mid, 12));
    default: return v;
  }
}

// Padded positions [8·c, 8·c + 8) of the window's rows reduced vertically,
// the identity outside the input (ReducedColumns with 8 lanes).
template <bool kMax>
AIC_AVX2 inline __m256 Reduced8(const RowJob& j, int64_t c) {
  const int64_t first = c * kLanes8 - j.pad_left;
  const int64_t lo = std::max<int64_t>(0, -first), hi = std::min<int64_t>(kLanes8, j.in_w - first);
  if (hi <= lo) return Identity<kMax>();
  if (lo == 0 && hi == kLanes8) {
    __m256 acc = _mm256_loadu_ps(j.rows[0] + first);
    for (int64_t k = 1; k < j.count; ++k) acc = Combine<kMax>(acc, _mm256_loadu_ps(j.rows[k] + first));
    return acc;
  }
  const __m256i m = LaneMask(lo, hi);
  // Masked-off lanes are neither read nor faulted on; the address is formed
  // from the integer so a row's lead-in needs no pointer before it.
  auto at = [&](const float* row) {
    return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(row) + first * sizeof(float));
  };
  __m256 acc = _mm256_maskload_ps(at(j.rows[0]), m);
  for (int64_t k = 1; k < j.count; ++k) acc = Combine<kMax>(acc, _mm256_maskload_ps(at(j.rows[k]), m));
  // maskload zeroes the lanes it skips: the sum's identity, not the max's.
  if (kMax) acc = _mm256_blendv_ps(Identity<kMax>(), acc, _mm256_castsi256_ps(m));
  return acc;
}

AIC_AVX2 inline void Store8(const RowJob& j, int64_t o, __m256 acc, bool average) {
  if (average) acc = _mm256_mul_ps(acc, _mm256_loadu_ps(j.reciprocal + o));
  // A masked store (vmaskmovps) took a quarter of a 2x2 stride-2 MaxPool
  // of 14-wide rows on a Zen 3: the block's last vector goes through the
  // stack instead.
  if (j.y + o + kLanes8 <= j.y_limit) {
    _mm256_storeu_ps(j.y + o, acc);
  } else {
    alignas(32) float lanes[kLanes8];
    _mm256_store_ps(lanes, acc);
    std::copy(lanes, lanes + (j.out_w - o), j.y + o);
  }
}

// The even and odd lanes of the 16 (a, b): a shuffle within 128-bit halves,
// then the 64-bit pairs put in order.
AIC_AVX2 inline __m256 Evens(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
}
AIC_AVX2 inline __m256 Odds(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

// PoolRowInRegisters with 8 lanes: undilated stride 1 (kw <= 8) and 2
// (kw <= 16, the evens and odds of 16 columns by a shuffle within 128-bit
// halves and a 64-bit permute). kKw > 0 fixes the window's width, so each
// tap's shift is an immediate: a jump through ShiftIn's switch per tap took
// a fifth of a 3x3 stride-1 average on a Zen 3.
template <bool kMax, int kStride, int kKw>
AIC_AVX2 void PoolRow8(const RowJob& j) {
  const int64_t kw = kKw > 0 ? kKw : j.kw;
  if constexpr (kStride == 1) {
    __m256 cur = Reduced8<kMax>(j, 0);
    for (int64_t o = 0; o < j.out_w; o += kLanes8) {
      __m256 next = Reduced8<kMax>(j, o / kLanes8 + 1);
      __m256 acc = cur;
      for (int64_t k = 1; k < kw; ++k) acc = Combine<kMax>(acc, ShiftIn(cur, next, k));
      Store8(j, o, acc, !kMax);
      cur = next;
    }
  } else {
    __m256 v0 = Reduced8<kMax>(j, 0), v1 = Reduced8<kMax>(j, 1);
    for (int64_t o = 0; o < j.out_w; o += kLanes8) {
      const int64_t c = 2 * (o / kLanes8);
      __m256 v2 = Reduced8<kMax>(j, c + 2), v3 = Reduced8<kMax>(j, c + 3);
      __m256 e = Evens(v0, v1), od = Odds(v0, v1);
      __m256 acc = e;
      if (kw > 1) acc = Combine<kMax>(acc, od);
      if (kw > 2) {
        __m256 e2 = Evens(v2, v3), od2 = Odds(v2, v3);
        for (int64_t k = 2; k < kw; ++k) acc = Combine<kMax>(acc, (k & 1) ? ShiftIn(od, od2, k / 2) : ShiftIn(e, e2, k / 2));
      }
      Store8(j, o, acc, !kMax);
      v0 = v2;
      v1 = v3;
    }
  }
}

template <bool kMax, int kStride, int kKw>
AIC_AVX2 void PoolBlockAvx2(const RowBlock& b) {
  RowJob job = FirstJob(b);
  for (int64_t oh = b.oh_begin; oh < b.oh_end; ++oh) {
    SetRow(b, oh, job);
    PoolRow8<kMax, kStride, kKw>(job);
  }
}

// The block function for g: the common windows (3 wide at stride 1, 2 and 3
// wide at stride 2) with their width fixed.
template <bool kMax>
PoolBlockFn PoolBlockAvx2For(const WindowPoolGeometry& g) {
  if (g.sw == 1) return g.kw == 3 ? PoolBlockAvx2<kMax, 1, 3> : PoolBlockAvx2<kMax, 1, 0>;
  if (g.kw == 2) return PoolBlockAvx2<kMax, 2, 2>;
  return g.kw == 3 ? PoolBlockAvx2<kMax, 2, 3> : PoolBlockAvx2<kMax, 2, 0>;
}

}  // namespace pool_avx2
#endif

PoolBlockFn PoolBlockFor(const WindowPoolGeometry& g, bool* uses_buffer) {
  *uses_buffer = true;
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) {
    if (g.dw == 1 && ((g.sw == 1 && g.kw <= kLanes) || (g.sw == 2 && g.kw <= 2 * kLanes))) {
      *uses_buffer = false;
      return g.is_max ? PoolBlockAvx512For<true>(g) : PoolBlockAvx512For<false>(g);
    }
    return g.is_max ? PoolBlockAvx512<true, 0, 0> : PoolBlockAvx512<false, 0, 0>;
  }
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma() && g.dw == 1 && ((g.sw == 1 && g.kw <= 8) || (g.sw == 2 && g.kw <= 16))) {
    *uses_buffer = false;
    return g.is_max ? pool_avx2::PoolBlockAvx2For<true>(g) : pool_avx2::PoolBlockAvx2For<false>(g);
  }
#endif
  return g.is_max ? PoolBlockPortable<true> : PoolBlockPortable<false>;
}

}  // namespace

int64_t TapsWithin(int64_t start, int64_t kernel, int64_t dilation, int64_t lo, int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t p = start + k * dilation;
    count += p >= lo && p < hi;
  }
  return count;
}

bool EveryWindowTouchesInput(const WindowPoolGeometry& g) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    if (TapsWithin(oh * g.sh - g.pad_top, g.kh, g.dh, 0, g.in_h) == 0) return false;
  }
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    if (TapsWithin(ow * g.sw - g.pad_left, g.kw, g.dw, 0, g.in_w) == 0) return false;
  }
  return true;
}

void WindowPoolF32(const float* x, float* y, const WindowPoolGeometry& g) {
  const int64_t padded_out_w = RoundUp(g.out_w, kLanes);
  const int64_t row_len =
      std::max(g.pad_left + g.in_w, g.sw * padded_out_w + (g.kw - 1) * g.dw + 1) + 4 * kLanes;
  const float identity = g.is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
  // The average's divisor is (taps counted in the window's rows) x (in its
  // columns): the taps inside the input, or inside the declared pads too.
  // Its reciprocals, one row of them per distinct row count (at most kh), so
  // a row multiplies: a 512-bit division per sixteen outputs took a third of
  // a stride-1 3x3 average's time. The quotient moves by at most an ulp.
  const int64_t col_lo = g.count_include_pad ? -g.pad_left : 0;
  const int64_t col_hi = g.count_include_pad ? g.in_w + g.pad_right : g.in_w;
  const int64_t row_lo = g.count_include_pad ? -g.pad_top : 0;
  const int64_t row_hi = g.count_include_pad ? g.in_h + g.pad_bottom : g.in_h;
  std::vector<RowWindow> windows(g.out_h);
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const int64_t top = oh * g.sh - g.pad_top;
    RowWindow& w = windows[oh];
    int64_t k = 0;
    while (k < g.kh && top + k * g.dh < 0) ++k;
    w.first = top + k * g.dh;
    w.count = TapsWithin(top, g.kh, g.dh, 0, g.in_h);
    w.divisor_rows = TapsWithin(top, g.kh, g.dh, row_lo, row_hi);
  }
  std::vector<float> reciprocals;
  if (!g.is_max) {
    reciprocals.assign((g.kh + 1) * padded_out_w, 0.0f);
    for (int64_t rows = 1; rows <= g.kh; ++rows) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t cols = TapsWithin(ow * g.sw - g.pad_left, g.kw, g.dw, col_lo, col_hi);
        reciprocals[rows * padded_out_w + ow] = 1.0f / static_cast<float>(rows * cols);
      }
    }
  }
  // Items: planes (runs of planes for short rows), each cut into row blocks
  // when planes alone would leave a thread idle.
  const int threads = omp_get_max_threads();
  const int64_t blocks_per_plane =
      g.planes >= 4 * threads ? 1 : std::min(g.out_h, (4 * threads + g.planes - 1) / g.planes);
  const int64_t rows_per_block = (g.out_h + blocks_per_plane - 1) / blocks_per_plane;
  const int64_t work_per_block = rows_per_block * (g.kh * g.in_w + g.kw * g.out_w);
#ifdef AIC_HAVE_AVX512_MATH
  const ShortRowsFn short_rows = !avx512::HaveAvx512() ? nullptr
                                 : g.is_max            ? PoolShortRowsAvx512For<true>(g)
                                                       : PoolShortRowsAvx512For<false>(g);
  if (short_rows != nullptr) {
    const int64_t runs = std::min<int64_t>(g.planes, 4 * threads);
    ParallelFor(runs * blocks_per_plane, work_per_block * (g.planes / runs), [&](int64_t item) {
      const int64_t run = item / blocks_per_plane, block = item % blocks_per_plane;
      const int64_t p0 = run * g.planes / runs, p1 = (run + 1) * g.planes / runs;
      short_rows(ShortRows{&g, windows.data(), g.is_max ? nullptr : reciprocals.data(), padded_out_w,
                           x + p0 * g.in_h * g.in_w, y + p0 * g.out_h * g.out_w, p1 - p0, block * rows_per_block,
                           std::min(g.out_h, (block + 1) * rows_per_block)});
    });
    return;
  }
#endif
  bool uses_buffer = true;
  const PoolBlockFn pool_block = PoolBlockFor(g, &uses_buffer);
  ParallelFor(g.planes * blocks_per_plane, work_per_block, [&](int64_t item) {
    const int64_t plane = item / blocks_per_plane;
    // The padded row (its input part on a 64-byte boundary, so the vertical
    // pass stores whole lines) and the window's row pointers, per thread.
    thread_local std::vector<float> buffer;
    thread_local std::vector<const float*> rows;
    float* padded = nullptr;
    if (uses_buffer) {
      const int64_t lead = (kLanes - g.pad_left % kLanes) % kLanes;
      buffer.assign(kLanes + lead + row_len, identity);
      const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(buffer.data()) / sizeof(float) % kLanes);
      padded = buffer.data() + (kLanes - misaligned) % kLanes + lead;
    }
    rows.resize(g.kh);
    RowBlock block{&g,
                   windows.data(),
                   g.is_max ? nullptr : reciprocals.data(),
                   padded_out_w,
                   x + plane * g.in_h * g.in_w,
                   y + plane * g.out_h * g.out_w,
                   (item % blocks_per_plane) * rows_per_block,
                   std::min(g.out_h, (item % blocks_per_plane + 1) * rows_per_block),
                   padded,
                   rows.data()};
    pool_block(block);
  });
}

}  // namespace aic::cpu::kernels

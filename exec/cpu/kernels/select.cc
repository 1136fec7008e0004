// TopK keeps, per lane, the k best seen so far: for small k an insertion
// list (one compare against the current k-th for almost every element), for
// larger k nth_element then a sort of the k chosen (O(n + k log k)). Lanes
// along a non-last axis are gathered into a contiguous buffer first.
#include "exec/cpu/kernels/select.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vec8.h"
#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

namespace {

// Below this k the insertion list beats nth_element.
constexpr int64_t kInsertionListMax = 32;

template <bool kLargest>
inline bool Better(float a, float b) {
  return kLargest ? a > b : a < b;
}

// The first index in [j, n) whose element is better than t (n if none).
// Once the list is full almost nothing enters it (about k·ln(n/k) of n
// elements on unordered data), so the scan compares 32 elements a step
// against the k-th best; a compare and branch per element took 1.3x ONNX
// Runtime's time over one row of 32000 (k 5, Zen 3). A NaN never beats t,
// nor anything a NaN t, as Better's ordered compares.
#ifdef AIC_HAVE_AVX2_MATH
template <bool kLargest>
AIC_AVX2 int64_t NextBetterAvx2(const float* v, int64_t j, int64_t n, float t) {
  constexpr int kPredicate = kLargest ? _CMP_GT_OQ : _CMP_LT_OQ;
  const __m256 tv = _mm256_set1_ps(t);
  for (; j + 32 <= n; j += 32) {
    const __m256 c0 = _mm256_cmp_ps(_mm256_loadu_ps(v + j), tv, kPredicate);
    const __m256 c1 = _mm256_cmp_ps(_mm256_loadu_ps(v + j + 8), tv, kPredicate);
    const __m256 c2 = _mm256_cmp_ps(_mm256_loadu_ps(v + j + 16), tv, kPredicate);
    const __m256 c3 = _mm256_cmp_ps(_mm256_loadu_ps(v + j + 24), tv, kPredicate);
    const __m256 any = _mm256_or_ps(_mm256_or_ps(c0, c1), _mm256_or_ps(c2, c3));
    if (!_mm256_testz_ps(any, any)) break;  // the one(s) to insert are in these 32
  }
  for (; j < n; ++j) {
    if (Better<kLargest>(v[j], t)) return j;
  }
  return n;
}
#endif

template <bool kLargest>
int64_t NextBetter(const float* v, int64_t j, int64_t n, float t) {
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return NextBetterAvx2<kLargest>(v, j, n, t);
#endif
  for (; j < n; ++j) {
    if (Better<kLargest>(v[j], t)) return j;
  }
  return n;
}

template <bool kLargest>
void TopKLane(const float* v, int64_t n, int64_t k, float* out_v, int64_t* out_i, std::vector<int64_t>& order) {
  if (k == 0) return;
  if (k <= kInsertionListMax) {
    int64_t filled = 0;
    // Element j enters the list ahead of the strictly worse ones (ties keep
    // the lower index), the k-th dropping out once it is full.
    auto insert = [&](int64_t j) {
      const float x = v[j];
      int64_t pos = filled < k ? filled++ : k - 1;
      while (pos > 0 && Better<kLargest>(x, out_v[pos - 1])) {
        out_v[pos] = out_v[pos - 1];
        out_i[pos] = out_i[pos - 1];
        --pos;
      }
      out_v[pos] = x;
      out_i[pos] = j;
    };
    int64_t j = 0;
    for (; j < n && filled < k; ++j) insert(j);
    while ((j = NextBetter<kLargest>(v, j, n, out_v[k - 1])) < n) insert(j++);
    return;
  }
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  auto before = [v](int64_t a, int64_t b) {
    return Better<kLargest>(v[a], v[b]) || (!Better<kLargest>(v[b], v[a]) && a < b);
  };
  if (k < n) std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), before);
  std::sort(order.begin(), order.begin() + k, before);
  for (int64_t j = 0; j < k; ++j) {
    out_i[j] = order[static_cast<size_t>(j)];
    out_v[j] = v[out_i[j]];
  }
}

}  // namespace

void TopKF32(const float* x, const AxisLanes& l, int64_t k, bool largest, float* values, int64_t* indices) {
  int64_t lanes = l.outer * l.inner;
  ParallelFor(lanes, l.dim * 4, [&](int64_t lane) {
    thread_local std::vector<int64_t> order;
    thread_local std::vector<float> gathered, best_v;
    thread_local std::vector<int64_t> best_i;
    int64_t o = lane / l.inner, i = lane % l.inner;
    const float* v = x + o * l.dim * l.inner + i;
    float* out_v = values + o * k * l.inner + i;
    int64_t* out_i = indices + o * k * l.inner + i;
    if (l.inner != 1) {
      gathered.resize(static_cast<size_t>(l.dim));
      for (int64_t j = 0; j < l.dim; ++j) gathered[j] = v[j * l.inner];
      v = gathered.data();
    }
    best_v.resize(static_cast<size_t>(k));
    best_i.resize(static_cast<size_t>(k));
    if (largest) {
      TopKLane<true>(v, l.dim, k, best_v.data(), best_i.data(), order);
    } else {
      TopKLane<false>(v, l.dim, k, best_v.data(), best_i.data(), order);
    }
    for (int64_t j = 0; j < k; ++j) {
      out_v[j * l.inner] = best_v[j];
      out_i[j * l.inner] = best_i[j];
    }
  });
}

namespace {

// The best index of one contiguous lane, as the scan from v[0] taking
// each later element that beats the best so far (strictly; or also when
// equal, for select_last) finds it: a NaN is never taken, and a NaN v[0]
// stays. Past v[0] the elements go through 32 lanes (vec8.h) of which each
// keeps its own best, starting from v[0]: the first (last) index of the
// greatest lane value is the scan's answer, and the rest of the run, past
// the lanes, continues the scan from it. (The one-at-a-time scan ran at a
// compare and a branch an element: ArgMax over the rows of [8, 512, 768]
// took 2.0 ms.)
template <bool kMax>
[[gnu::always_inline]] inline bool Beats(float v, float b, bool or_equal) {
  return or_equal ? (kMax ? v >= b : v <= b) : (kMax ? v > b : v < b);
}

// One vector of lanes takes the eight elements at p (indices `at`) that beat it.
template <bool kMax, bool kLast>
[[gnu::always_inline]] inline void TakeBetter(F8& best, I8& best_at, const float* p, I8 at) {
  const F8 x = Load8(p);
  I8 take;
  if constexpr (kLast) {
    take = kMax ? x >= best : x <= best;
  } else {
    take = kMax ? x > best : x < best;
  }
  best = take ? x : best;
  best_at = take ? at : best_at;
}

template <bool kMax, bool kLast>
AIC_KERNEL_CLONES int64_t ArgOfLaneAs(const float* v, int64_t n) {
  int64_t best = 0;
  float b = v[0];
  int64_t j = 1;
  constexpr int64_t kLanes = 32;
  if (b == b && n > kLanes && n < (int64_t{1} << 31)) {
    F8 b0 = F8{} + b, b1 = b0, b2 = b0, b3 = b0;
    I8 i0 = {}, i1 = {}, i2 = {}, i3 = {};
    const I8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    for (; j + kLanes <= n; j += kLanes) {
      const I8 at = lane + static_cast<int32_t>(j);
      TakeBetter<kMax, kLast>(b0, i0, v + j, at);
      TakeBetter<kMax, kLast>(b1, i1, v + j + 8, at + 8);
      TakeBetter<kMax, kLast>(b2, i2, v + j + 16, at + 16);
      TakeBetter<kMax, kLast>(b3, i3, v + j + 24, at + 24);
    }
    // The lanes' bests: the greatest value, ties to the first (last) index.
    const F8 bs[4] = {b0, b1, b2, b3};
    const I8 is[4] = {i0, i1, i2, i3};
    for (int q = 0; q < 4; ++q) {
      for (int k = 0; k < 8; ++k) {
        const float x = bs[q][k];
        const int64_t at = is[q][k];
        if (Beats<kMax>(x, b, false) || (x == b && (kLast ? at > best : at < best))) {
          b = x;
          best = at;
        }
      }
    }
  }
  for (; j < n; ++j) {
    if (Beats<kMax>(v[j], b, kLast)) best = j, b = v[j];
  }
  return best;
}

template <bool kMax>
int64_t ArgOfLane(const float* v, int64_t n, bool select_last) {
  return select_last ? ArgOfLaneAs<kMax, true>(v, n) : ArgOfLaneAs<kMax, false>(v, n);
}

// Lanes a chunk of the non-last-axis scan keeps in registers and L1.
constexpr int64_t kArgChunk = 4096;

// `lanes` side-by-side lanes of `dim` rows `stride` apart: each lane's
// best row index into idx. Branch-free selects on 32-bit indices (the
// width of the values, so the loop vectorizes; dim < 2^31 is checked by
// the caller), widened at the end.
template <bool kMax>
AIC_KERNEL_CLONES void ArgRowsChunk(const float* base, int64_t dim, int64_t stride, int64_t lanes, bool select_last,
                                    int64_t* idx) {
  float best[kArgChunk];
  int32_t at[kArgChunk];
  for (int64_t i = 0; i < lanes; ++i) {
    best[i] = base[i];
    at[i] = 0;
  }
  for (int64_t j = 1; j < dim; ++j) {
    const float* row = base + j * stride;
    const auto row_index = static_cast<int32_t>(j);
    if (select_last) {
#pragma omp simd
      for (int64_t i = 0; i < lanes; ++i) {
        const float v = row[i];
        const bool take = kMax ? v >= best[i] : v <= best[i];
        best[i] = take ? v : best[i];
        at[i] = take ? row_index : at[i];
      }
    } else {
#pragma omp simd
      for (int64_t i = 0; i < lanes; ++i) {
        const float v = row[i];
        const bool take = kMax ? v > best[i] : v < best[i];
        best[i] = take ? v : best[i];
        at[i] = take ? row_index : at[i];
      }
    }
  }
  for (int64_t i = 0; i < lanes; ++i) idx[i] = at[i];
}

}  // namespace

void ArgExtremeF32(const float* x, const AxisLanes& l, bool is_max, bool select_last, int64_t* out) {
  if (l.inner == 1) {
    ParallelFor(l.outer, l.dim, [&](int64_t o) {
      const float* v = x + o * l.dim;
      out[o] = is_max ? ArgOfLane<true>(v, l.dim, select_last) : ArgOfLane<false>(v, l.dim, select_last);
    });
    return;
  }
  // Along a non-last axis: rows of `inner` lanes side by side, compared row
  // by row in chunks of lanes (so the chunks, not just the outer blocks,
  // spread over threads: ArgMax over the channels of [1, 64, 112, 112] is
  // one outer block).
  const int64_t chunks = (l.inner + kArgChunk - 1) / kArgChunk;
  ParallelFor(l.outer * chunks, l.dim * std::min(l.inner, kArgChunk), [&](int64_t item) {
    const int64_t o = item / chunks, c = item % chunks;
    const int64_t first = c * kArgChunk, lanes = std::min(kArgChunk, l.inner - first);
    const float* base = x + o * l.dim * l.inner + first;
    int64_t* idx = out + o * l.inner + first;
    if (is_max) {
      ArgRowsChunk<true>(base, l.dim, l.inner, lanes, select_last, idx);
    } else {
      ArgRowsChunk<false>(base, l.dim, l.inner, lanes, select_last, idx);
    }
  });
}

}  // namespace aic::cpu::kernels

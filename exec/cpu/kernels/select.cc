// TopK keeps, per lane, the k best seen so far: for small k an insertion
// list (one compare against the current k-th for almost every element), for
// larger k nth_element then a sort of the k chosen (O(n + k log k)). Lanes
// along a non-last axis are gathered into a contiguous buffer first.
#include "exec/cpu/kernels/select.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// Below this k the insertion list beats nth_element.
constexpr int64_t kInsertionListMax = 32;

template <bool kLargest>
inline bool Better(float a, float b) {
  return kLargest ? a > b : a < b;
}

template <bool kLargest>
void TopKLane(const float* v, int64_t n, int64_t k, float* out_v, int64_t* out_i, std::vector<int64_t>& order) {
  if (k == 0) return;
  if (k <= kInsertionListMax) {
    int64_t filled = 0;
    for (int64_t j = 0; j < n; ++j) {
      float x = v[j];
      // A later element only enters ahead of strictly worse ones (ties keep the lower index).
      if (filled == k && !Better<kLargest>(x, out_v[k - 1])) continue;
      int64_t pos = filled < k ? filled++ : k - 1;
      while (pos > 0 && Better<kLargest>(x, out_v[pos - 1])) {
        out_v[pos] = out_v[pos - 1];
        out_i[pos] = out_i[pos - 1];
        --pos;
      }
      out_v[pos] = x;
      out_i[pos] = j;
    }
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

// The best index of one contiguous lane.
template <bool kMax>
int64_t ArgOfLane(const float* v, int64_t n, bool select_last) {
  int64_t best = 0;
  float b = v[0];
  if (select_last) {
    for (int64_t j = 1; j < n; ++j) {
      if (kMax ? v[j] >= b : v[j] <= b) best = j, b = v[j];
    }
  } else {
    for (int64_t j = 1; j < n; ++j) {
      if (kMax ? v[j] > b : v[j] < b) best = j, b = v[j];
    }
  }
  return best;
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

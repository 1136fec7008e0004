#include "exec/cpu/kernels/gather_elements.h"

#include <algorithm>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

std::optional<AxisIndexMap> MakeAxisIndexMap(const std::vector<int64_t>& data_dims,
                                             const std::vector<int64_t>& index_dims, int64_t axis) {
  auto rank = static_cast<int64_t>(data_dims.size());
  if (static_cast<int64_t>(index_dims.size()) != rank || axis < 0 || axis >= rank) return std::nullopt;
  std::vector<int64_t> strides(data_dims.size(), 1);
  for (int64_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * data_dims[d];
  AxisIndexMap m;
  bool outer_same = true, inner_same = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && index_dims[d] > data_dims[d]) return std::nullopt;
    if (d < axis) {
      m.outer *= index_dims[d];
      outer_same = outer_same && index_dims[d] == data_dims[d];
    } else if (d > axis) {
      m.inner *= index_dims[d];
      inner_same = inner_same && index_dims[d] == data_dims[d];
    }
  }
  m.axis_len = index_dims[axis];
  m.axis_dim = data_dims[axis];
  m.axis_stride = strides[axis];
  m.outer_stride = m.axis_dim * m.axis_stride;
  // The data offsets of the positions of index_dims[lo, hi), in row-major order.
  auto offsets = [&](int64_t lo, int64_t hi, int64_t count) {
    std::vector<int64_t> table(static_cast<size_t>(count), 0);
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
    for (int64_t t = 0; t < count; ++t) {
      int64_t off = 0;
      for (int64_t d = lo; d < hi; ++d) off += pos[d] * strides[d];
      table[t] = off;
      for (int64_t d = hi - 1; d >= lo; --d) {
        if (++pos[d] < index_dims[d]) break;
        pos[d] = 0;
      }
    }
    return table;
  };
  if (!outer_same) m.outer_base = offsets(0, axis, m.outer);
  if (!inner_same) m.inner_offset = offsets(axis + 1, rank, m.inner);
  return m;
}

namespace {

// out[t] = src[k_t * ks + t * ts] for t in [0, n), k_t = idx[t] wrapped
// (all in range: the callers check first). A negative index reads from the
// end of the axis (`end`) rather than being wrapped arithmetically: a
// branch, predicted for any sign pattern but a random one, where a select
// costs every element. Unrolled by 4, the unit case (ks 1, ts 0: along the
// last axis) on its own with no multiplies: on rows of 128 in a loop timed
// alone, 0.62 of the time of the plain loop with a select (0.84 along a
// middle axis), and far less sensitive to where the loop lands in the code.
template <typename T, typename I>
[[gnu::always_inline]] inline void GatherLine(const T* src, const I* idx, T* out, int64_t n, int64_t ts, int64_t ks,
                                              int64_t dim) {
  const T* end = src + dim * ks;
  auto at = [](const T* s, const T* e, int64_t k) { return k < 0 ? e[k] : s[k]; };
  int64_t t = 0;
  if (ks == 1 && ts == 0) {
    for (; t + 4 <= n; t += 4) {
      T v0 = at(src, end, idx[t]), v1 = at(src, end, idx[t + 1]);
      T v2 = at(src, end, idx[t + 2]), v3 = at(src, end, idx[t + 3]);
      out[t] = v0;
      out[t + 1] = v1;
      out[t + 2] = v2;
      out[t + 3] = v3;
    }
    for (; t < n; ++t) out[t] = at(src, end, idx[t]);
    return;
  }
  for (; t + 4 <= n; t += 4) {
    T v0 = at(src, end, idx[t] * ks), v1 = at(src + ts, end + ts, idx[t + 1] * ks);
    T v2 = at(src + 2 * ts, end + 2 * ts, idx[t + 2] * ks), v3 = at(src + 3 * ts, end + 3 * ts, idx[t + 3] * ks);
    out[t] = v0;
    out[t + 1] = v1;
    out[t + 2] = v2;
    out[t + 3] = v3;
    src += 4 * ts;
    end += 4 * ts;
  }
  for (; t < n; ++t, src += ts, end += ts) out[t] = at(src, end, idx[t] * ks);
}

// GatherLine after checking its indices; false, with nothing written, when
// one is out of range.
template <typename T, typename I>
AIC_KERNEL_CLONES bool GatherRun(const T* src, const I* idx, T* out, int64_t n, int64_t ts, int64_t ks, int64_t dim) {
  if (!AllInRange(idx, n, dim)) return false;
  GatherLine(src, idx, out, n, ts, ks, dim);
  return true;
}

// GatherRun over `rows` rows of n indices, row r reading from src + r * rs:
// short rows several to a call (the call cost more than a top-k row of 5).
template <typename T, typename I>
AIC_KERNEL_CLONES bool GatherRows(const T* src, int64_t rs, const I* idx, T* out, int64_t rows, int64_t n, int64_t ks,
                                  int64_t dim) {
  if (!AllInRange(idx, rows * n, dim)) return false;
  for (int64_t r = 0; r < rows; ++r) GatherLine(src + r * rs, idx + r * n, out + r * n, n, 0, ks, dim);
  return true;
}

// GatherRun with the inner positions' data offsets from a table.
template <typename T, typename I>
AIC_KERNEL_CLONES bool GatherRunTabled(const T* src, const int64_t* offset, const I* idx, T* out, int64_t n,
                                       int64_t ks, int64_t dim) {
  if (!AllInRange(idx, n, dim)) return false;
  for (int64_t t = 0; t < n; ++t) {
    auto k = static_cast<int64_t>(idx[t]);
    k += k < 0 ? dim : 0;
    out[t] = src[k * ks + offset[t]];
  }
  return true;
}

template <typename T, typename I>
int64_t GatherElementsAs(const AxisIndexMap& m, const void* data, const void* indices, void* out) {
  const T* x = static_cast<const T*>(data);
  const I* idx = static_cast<const I*>(indices);
  T* y = static_cast<T*>(out);
  const int64_t ks = m.axis_stride, dim = m.axis_dim;
  std::atomic<int64_t> first_bad{-1};
  // Elements [p, p + n) of the indices and the output; f(t0, len) gathers a checked block.
  auto run = [&](int64_t p, int64_t n, auto&& f) {
    int64_t bad = ForCheckedBlocks(idx + p, n, dim, f);
    if (bad >= 0) RecordBad(first_bad, p + bad);
  };
  if (m.inner == 1 && m.outer_base.empty() && m.axis_len < kIndexBlock) {
    // Short rows along the last axis (or any axis the indices end at), each
    // reading one line of the data: several rows to a call.
    int64_t group = kIndexBlock / m.axis_len, groups = (m.outer + group - 1) / group;
    ParallelFor(groups, group * m.axis_len, [&](int64_t g) {
      int64_t o = g * group, rows = std::min(group, m.outer - o), p = o * m.axis_len;
      if (!GatherRows(x + o * m.outer_stride, m.outer_stride, idx + p, y + p, rows, m.axis_len, ks, dim)) {
        RecordBad(first_bad, p + FirstBadIn(idx + p, rows * m.axis_len, dim));
      }
    });
    return first_bad.load();
  }
  if (m.inner == 1) {
    // Long rows along the last axis, or rows placed by a table: cut into
    // pieces so every thread gets some.
    int64_t pieces = PiecesPerRow(m.outer, m.axis_len);
    int64_t len = (m.axis_len + pieces - 1) / pieces;
    ParallelFor(m.outer * pieces, len, [&](int64_t item) {
      int64_t o = item / pieces, j0 = item % pieces * len;
      int64_t n = std::min(len, m.axis_len - j0);
      if (n <= 0) return;
      int64_t p = o * m.axis_len + j0;
      const T* src = x + m.OuterBase(o);
      run(p, n, [&](int64_t t0, int64_t l) { return GatherRun(src, idx + p + t0, y + p + t0, l, 0, ks, dim); });
    });
    return first_bad.load();
  }
  int64_t pieces = PiecesPerRow(m.outer, m.axis_len * m.inner);
  int64_t len = (m.inner + pieces - 1) / pieces;
  ParallelFor(m.outer * pieces, m.axis_len * len, [&](int64_t item) {
    int64_t o = item / pieces, i0 = item % pieces * len;
    int64_t n = std::min(len, m.inner - i0);
    if (n <= 0) return;
    const T* src = x + m.OuterBase(o);
    for (int64_t j = 0; j < m.axis_len; ++j) {
      int64_t p = (o * m.axis_len + j) * m.inner + i0;
      if (m.inner_offset.empty()) {
        run(p, n, [&](int64_t t0, int64_t l) {
          return GatherRun(src + i0 + t0, idx + p + t0, y + p + t0, l, 1, ks, dim);
        });
      } else {
        const int64_t* off = m.inner_offset.data() + i0;
        run(p, n, [&](int64_t t0, int64_t l) {
          return GatherRunTabled(src, off + t0, idx + p + t0, y + p + t0, l, ks, dim);
        });
      }
    }
  });
  return first_bad.load();
}

}  // namespace

int64_t GatherElements(const AxisIndexMap& m, const void* data, const void* indices, size_t index_bytes, void* out,
                       size_t elem_bytes) {
  return WithElementAndIndex(elem_bytes, index_bytes, [&](auto elem, auto index) {
    using T = decltype(elem);
    using I = decltype(index);
    return GatherElementsAs<T, I>(m, data, indices, out);
  });
}

}  // namespace aic::cpu::kernels

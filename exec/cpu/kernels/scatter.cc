#include "exec/cpu/kernels/scatter.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// d (r)= v as the reference kernel computes it (ops/tensor/scatter.cc): max
// and min are std::max(d, v) and std::min(d, v), so a NaN already in d
// stays; integer add and mul wrap, computed unsigned (the reference's signed
// overflow, without its undefined behaviour).
struct Assign {
  template <typename T>
  static T Of(T, T v) { return v; }
};
struct Add {
  template <typename T>
  static T Of(T d, T v) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(d) + static_cast<U>(v)));
    } else {
      return d + v;
    }
  }
};
struct Mul {
  template <typename T>
  static T Of(T d, T v) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(d) * static_cast<U>(v)));
    } else {
      return d * v;
    }
  }
};
struct Max {
  template <typename T>
  static T Of(T d, T v) { return std::max(d, v); }
};
struct Min {
  template <typename T>
  static T Of(T d, T v) { return std::min(d, v); }
};

// f(T{}, I{}, Op{}): the element type (an unsigned integer of the element's
// size for plain writes, the dtype's arithmetic type for reductions), the
// index type and the reduction.
template <typename F>
auto WithTypes(ScatterReduction r, DType dtype, size_t index_bytes, F&& f) {
  if (r == ScatterReduction::kNone) {
    return WithElementAndIndex(ElementSize(dtype), index_bytes, [&](auto elem, auto index) {
      return f(elem, index, Assign{});
    });
  }
  auto with_type = [&](auto elem) {
    auto with_op = [&](auto op) { return index_bytes == 4 ? f(elem, int32_t{}, op) : f(elem, int64_t{}, op); };
    switch (r) {
      case ScatterReduction::kAdd: return with_op(Add{});
      case ScatterReduction::kMul: return with_op(Mul{});
      case ScatterReduction::kMax: return with_op(Max{});
      default: return with_op(Min{});
    }
  };
  switch (dtype) {
    case DType::kFloat: return with_type(float{});
    case DType::kDouble: return with_type(double{});
    case DType::kInt32: return with_type(int32_t{});
    default: return with_type(int64_t{});
  }
}

// out = data, split across threads when large; nothing when out took the
// data's bytes in place.
void CopyData(void* out, const void* data, size_t bytes) {
  if (out == data) return;
  constexpr size_t kChunk = size_t{1} << 16;
  auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  ParallelFor(chunks, static_cast<int64_t>(kChunk / 4), [&](int64_t c) {
    size_t at = static_cast<size_t>(c) * kChunk;
    std::memcpy(static_cast<char*>(out) + at, static_cast<const char*>(data) + at, std::min(kChunk, bytes - at));
  });
}

// d[c] (op)= u[c]: a slice of the output and one of the updates, never
// overlapping (the output takes the data's bytes at most, never the updates').
template <typename Op, typename T>
AIC_KERNEL_CLONES void ReduceInto(T* d, const T* u, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) d[c] = Op::Of(d[c], u[c]);
}

// --- ScatterND ---

template <typename I>
int64_t FirstBadTuple(const TupleIndexMap& m, const I* idx) {
  for (int64_t t = 0; t < m.tuples; ++t) {
    bool bad = false;
    m.Offset(idx + t * m.k, bad);
    if (bad) return t * m.k + m.FirstBad(idx + t * m.k);
  }
  return -1;
}

// Threads take column ranges of the slices, each walking every tuple in
// order: two tuples naming one slice never race.
int64_t ColumnPieces(int64_t tuples, int64_t slice) {
  int threads = omp_get_max_threads();
  if (threads <= 1 || tuples * slice < kMinParallelWork) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(threads, slice / 1024));
}

template <typename T, typename I, typename Op>
void ScatterNDAs(const TupleIndexMap& m, const void* indices, const void* updates, void* out) {
  const I* idx = static_cast<const I*>(indices);
  const T* upd = static_cast<const T*>(updates);
  T* y = static_cast<T*>(out);
  int64_t pieces = ColumnPieces(m.tuples, m.slice);
  int64_t len = (m.slice + pieces - 1) / pieces;
  len = pieces > 1 ? (len + 15) / 16 * 16 : len;  // whole cache lines of f32 per thread
  ParallelFor(pieces, m.tuples * len, [&](int64_t p) {
    int64_t c0 = p * len, n = std::min(len, m.slice - c0);
    if (n <= 0) return;
    for (int64_t t = 0; t < m.tuples; ++t) {
      bool bad = false;  // checked before: none
      T* d = y + m.Offset(idx + t * m.k, bad) + c0;
      const T* u = upd + t * m.slice + c0;
      if constexpr (std::is_same_v<Op, Assign>) {
        if (n == 1) {
          *d = *u;
        } else {
          std::memcpy(d, u, static_cast<size_t>(n) * sizeof(T));
        }
      } else {
        ReduceInto<Op>(d, u, n);
      }
    }
  });
}

// --- ScatterElements ---

// dst[k_t * ks + t * ts] (op)= u[t] for t in [0, n) in order, k_t = idx[t]
// wrapped; false, with nothing written, when one of them is out of range.
// Negative indices count from the end of the axis by a branch, as in
// GatherRun (gather_elements.cc).
template <typename Op, typename T, typename I>
AIC_KERNEL_CLONES bool ScatterRun(T* dst, const I* idx, const T* u, int64_t n, int64_t ts, int64_t ks, int64_t dim) {
  if (!AllInRange(idx, n, dim)) return false;
  T* end = dst + dim * ks;
  for (int64_t t = 0; t < n; ++t) {
    int64_t k = static_cast<int64_t>(idx[t]) * ks;
    T& d = k < 0 ? end[k] : dst[k];
    d = Op::Of(d, u[t]);
    dst += ts;
    end += ts;
  }
  return true;
}

template <typename Op, typename T, typename I>
AIC_KERNEL_CLONES bool ScatterRunTabled(T* dst, const int64_t* offset, const I* idx, const T* u, int64_t n,
                                        int64_t ks, int64_t dim) {
  if (!AllInRange(idx, n, dim)) return false;
  for (int64_t t = 0; t < n; ++t) {
    auto k = static_cast<int64_t>(idx[t]);
    k += k < 0 ? dim : 0;
    T& d = dst[k * ks + offset[t]];
    d = Op::Of(d, u[t]);
  }
  return true;
}

template <typename T, typename I, typename Op>
int64_t ScatterElementsAs(const AxisIndexMap& m, const void* indices, const void* updates, void* out) {
  const I* idx = static_cast<const I*>(indices);
  const T* upd = static_cast<const T*>(updates);
  T* y = static_cast<T*>(out);
  const int64_t ks = m.axis_stride, dim = m.axis_dim;
  std::atomic<int64_t> first_bad{-1};
  // Elements [p, p + n) of the indices and updates; f(t0, len) scatters a checked block.
  auto run = [&](int64_t p, int64_t n, auto&& f) {
    int64_t bad = ForCheckedBlocks(idx + p, n, dim, f);
    if (bad >= 0) RecordBad(first_bad, p + bad);
  };
  if (m.inner == 1) {
    // One row of indices along the axis per outer row; a row may name one
    // element twice, so it stays on one thread.
    ParallelFor(m.outer, m.axis_len, [&](int64_t o) {
      int64_t p = o * m.axis_len;
      T* dst = y + m.OuterBase(o);
      run(p, m.axis_len,
          [&](int64_t t0, int64_t l) { return ScatterRun<Op>(dst, idx + p + t0, upd + p + t0, l, 0, ks, dim); });
    });
    return first_bad.load();
  }
  // Inner positions never meet: pieces of them go to threads, each walking
  // the axis in order.
  int64_t pieces = PiecesPerRow(m.outer, m.axis_len * m.inner);
  int64_t len = (m.inner + pieces - 1) / pieces;
  ParallelFor(m.outer * pieces, m.axis_len * len, [&](int64_t item) {
    int64_t o = item / pieces, i0 = item % pieces * len;
    int64_t n = std::min(len, m.inner - i0);
    if (n <= 0) return;
    T* dst = y + m.OuterBase(o);
    for (int64_t j = 0; j < m.axis_len; ++j) {
      int64_t p = (o * m.axis_len + j) * m.inner + i0;
      if (m.inner_offset.empty()) {
        run(p, n, [&](int64_t t0, int64_t l) {
          return ScatterRun<Op>(dst + i0 + t0, idx + p + t0, upd + p + t0, l, 1, ks, dim);
        });
      } else {
        const int64_t* off = m.inner_offset.data() + i0;
        run(p, n, [&](int64_t t0, int64_t l) {
          return ScatterRunTabled<Op>(dst, off + t0, idx + p + t0, upd + p + t0, l, ks, dim);
        });
      }
    }
  });
  return first_bad.load();
}

}  // namespace

bool ScatterSupports(ScatterReduction r, DType dtype) {
  if (r == ScatterReduction::kNone) return !IsSubByte(dtype) && AxisIndexElementSize(ElementSize(dtype));
  return dtype == DType::kFloat || dtype == DType::kDouble || dtype == DType::kInt32 || dtype == DType::kInt64;
}

int64_t ScatterND(const TupleIndexMap& m, const void* data, int64_t data_elements, const void* indices,
                  size_t index_bytes, const void* updates, void* out, DType dtype, ScatterReduction r) {
  int64_t bad = index_bytes == 4 ? FirstBadTuple(m, static_cast<const int32_t*>(indices))
                                 : FirstBadTuple(m, static_cast<const int64_t*>(indices));
  if (bad >= 0) return bad;
  CopyData(out, data, static_cast<size_t>(data_elements) * ElementSize(dtype));
  WithTypes(r, dtype, index_bytes, [&](auto elem, auto index, auto op) {
    ScatterNDAs<decltype(elem), decltype(index), decltype(op)>(m, indices, updates, out);
  });
  return -1;
}

int64_t ScatterElements(const AxisIndexMap& m, const void* data, int64_t data_elements, const void* indices,
                        size_t index_bytes, const void* updates, void* out, DType dtype, ScatterReduction r) {
  CopyData(out, data, static_cast<size_t>(data_elements) * ElementSize(dtype));
  return WithTypes(r, dtype, index_bytes, [&](auto elem, auto index, auto op) {
    return ScatterElementsAs<decltype(elem), decltype(index), decltype(op)>(m, indices, updates, out);
  });
}

}  // namespace aic::cpu::kernels

// GatherElements (and, mirrored, ScatterElements in scatter.h): each element
// of the indices picks one element of the data along one axis. The indices
// are viewed as [outer, axis_len, inner]; element (o, j, i) with index k
// stands for data[base(o) + k * axis_stride + offset(i)]. Where the indices
// have the data's extent on every other axis, base and offset are affine
// (no tables); where they are smaller there, both are tables made once per
// shape by MakeAxisIndexMap. Any element size; int32 or int64 indices.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace aic::cpu::kernels {

struct AxisIndexMap {
  int64_t outer = 1, axis_len = 1, inner = 1;  // the indices (and output) as [outer, axis_len, inner]
  int64_t axis_dim = 1;     // the data's extent along the axis: indices lie in [-axis_dim, axis_dim)
  int64_t axis_stride = 1;  // the data's stride along the axis, in elements
  int64_t outer_stride = 0;          // data offset of outer row o is o * outer_stride ...
  std::vector<int64_t> outer_base;   // ... or outer_base[o] when not empty
  std::vector<int64_t> inner_offset;  // data offset of inner position i; empty: i itself

  int64_t OuterBase(int64_t o) const { return outer_base.empty() ? o * outer_stride : outer_base[o]; }
};

// The map for indices of `index_dims` into data of `data_dims` along `axis`
// (normalized); nullopt when the ranks differ or the indices exceed the data
// on another axis.
std::optional<AxisIndexMap> MakeAxisIndexMap(const std::vector<int64_t>& data_dims,
                                             const std::vector<int64_t>& index_dims, int64_t axis);

// out[o, j, i] = data[base(o) + k * axis_stride + offset(i)], k = indices[o, j, i]
// wrapped when negative; `index_bytes` 4 (int32) or 8 (int64), `elem_bytes`
// 1, 2, 4, 8 or 16. Returns the flat position in the indices of the first
// out-of-range index, or -1 when all were valid (out is then complete).
int64_t GatherElements(const AxisIndexMap& m, const void* data, const void* indices, size_t index_bytes, void* out,
                       size_t elem_bytes);

// Whether GatherElements and ScatterElements move elements of this size.
inline bool AxisIndexElementSize(size_t elem_bytes) {
  return elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8 || elem_bytes == 16;
}

// --- shared by the indexing kernels (gather_elements.cc, gather.cc, scatter.cc) ---

// index wrapped into [0, dim) when negative; one outside [-dim, dim) sets
// `bad` and gives 0, so a loop stays branch-free and in bounds.
template <typename I>
inline int64_t WrapIndex(I index, int64_t dim, bool& bad) {
  auto k = static_cast<int64_t>(index);
  k += k < 0 ? dim : 0;
  bool ok = static_cast<uint64_t>(k) < static_cast<uint64_t>(dim);
  bad |= !ok;
  return ok ? k : 0;
}

// Whether every index in idx[0, n) lies in [-dim, dim), so the loop after
// it indexes without clamping: one unsigned compare of index + dim per
// element, or-reduced (it vectorizes; min/max reductions came out 1.7x
// slower on rows of 128), short runs (a top-k row of 5) without the vector
// loop's setup. Always inlined: the kernels' AVX-512 and AVX2 clones
// vectorize it in place (out of line it is built for baseline x86-64).
template <typename I>
[[gnu::always_inline]] inline bool AllInRange(const I* idx, int64_t n, int64_t dim) {
  if (n < 16) {
    bool ok = true;
    for (int64_t t = 0; t < n; ++t) ok &= idx[t] >= -dim && idx[t] < dim;
    return ok;
  }
  const uint64_t range = 2 * static_cast<uint64_t>(dim);
  uint64_t bad = 0;
#pragma omp simd reduction(| : bad)
  for (int64_t t = 0; t < n; ++t) bad |= static_cast<uint64_t>(static_cast<int64_t>(idx[t]) + dim) >= range;
  return bad == 0;
}

// The position of the first index in idx[0, n) outside [-dim, dim) (n if none).
template <typename I>
int64_t FirstBadIn(const I* idx, int64_t n, int64_t dim) {
  for (int64_t t = 0; t < n; ++t) {
    if (idx[t] < -dim || idx[t] >= dim) return t;
  }
  return n;
}

// Indices a kernel checks and then uses at a time: still in L1 when used.
inline constexpr int64_t kIndexBlock = 512;

// f(t0, len) over [0, n) a block of indices at a time; f checks its block
// with AllInRange before using it (inside the kernel's own clone, where the
// check vectorizes) and returns false, having done nothing, when one is
// bad. Returns the position of the first bad index, or -1.
template <typename I, typename F>
int64_t ForCheckedBlocks(const I* idx, int64_t n, int64_t dim, F&& f) {
  for (int64_t t0 = 0; t0 < n; t0 += kIndexBlock) {
    int64_t len = n - t0 < kIndexBlock ? n - t0 : kIndexBlock;
    if (!f(t0, len)) return t0 + FirstBadIn(idx + t0, len, dim);
  }
  return -1;
}

// first = min(first, pos), -1 standing for none yet: threads report the
// lowest bad position whatever order they ran in.
inline void RecordBad(std::atomic<int64_t>& first, int64_t pos) {
  int64_t cur = first.load();
  while ((cur < 0 || pos < cur) && !first.compare_exchange_weak(cur, pos)) {
  }
}

// An element of 16 bytes (complex128), moved whole.
struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

// f(T{}, I{}) with T the unsigned integer of `elem_bytes` (Bytes16 for 16)
// and I int32_t or int64_t for `index_bytes` 4 or 8.
template <typename F>
auto WithElementAndIndex(size_t elem_bytes, size_t index_bytes, F&& f) {
  auto with_index = [&](auto elem) {
    return index_bytes == 4 ? f(elem, int32_t{}) : f(elem, int64_t{});
  };
  switch (elem_bytes) {
    case 1: return with_index(uint8_t{});
    case 2: return with_index(uint16_t{});
    case 4: return with_index(uint32_t{});
    case 8: return with_index(uint64_t{});
    default: return with_index(Bytes16{});
  }
}

}  // namespace aic::cpu::kernels

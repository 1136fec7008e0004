#include "exec/cpu/kernels/gather.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "exec/cpu/kernels/copy_bytes.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// Items ahead of the one being moved whose source rows a row copy asks the
// memory for first, and the most bytes of each it asks for (longer rows the
// hardware prefetcher follows by itself once their first lines arrive).
constexpr int64_t kPrefetchItemsAhead = 2;
constexpr size_t kPrefetchMaxBytes = 4096;
constexpr size_t kPrefetchMinRowBytes = 256;
constexpr size_t kPrefetchMinDataBytes = size_t{4} << 20;

// Items [0, outer·num_indices) in chunks of about 16 KB of output, each a
// run of (o, j) pairs walked without a division per item:
// move(item, o·axis_dim + wrapped index j). With `prefetch`, the source rows
// kPrefetchItemsAhead items on are requested while an item moves: rows of an
// embedding table far larger than the caches each come from memory, one
// after another (a [30522, 768] table by [8, 512] tokens: 12 MB of 3 KB rows
// from random places, 0.97-1.04 ms a pass without, 0.73-0.86 with, in a
// C++ loop on a Zen 4).
template <typename I, typename Move>
void GatherItems(const I* idx, int64_t num_indices, int64_t outer, int64_t axis_dim, size_t slice_bytes,
                 const char* prefetch, Move move) {
  const int64_t items = outer * num_indices;
  const int64_t per_chunk = std::max<int64_t>(1, 16384 / static_cast<int64_t>(std::max<size_t>(slice_bytes, 1)));
  const int64_t chunks = (items + per_chunk - 1) / per_chunk;
  const size_t prefetch_bytes = std::min(slice_bytes, kPrefetchMaxBytes);
  auto source = [&](int64_t o, int64_t j) {
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += axis_dim;
    return o * axis_dim + k;
  };
  ParallelFor(chunks, per_chunk * (static_cast<int64_t>(slice_bytes) / 4 + 1), [&](int64_t c) {
    int64_t item = c * per_chunk;
    const int64_t end = std::min(items, item + per_chunk);
    int64_t o = item / num_indices, j = item % num_indices;
    // (o, j) of item + kPrefetchItemsAhead.
    int64_t ahead_o = (item + kPrefetchItemsAhead) / num_indices, ahead_j = (item + kPrefetchItemsAhead) % num_indices;
    for (; item < end; ++item) {
      if (prefetch != nullptr && item + kPrefetchItemsAhead < items) {
        const char* row = prefetch + static_cast<size_t>(source(ahead_o, ahead_j)) * slice_bytes;
        for (size_t line = 0; line < prefetch_bytes; line += 64) __builtin_prefetch(row + line, 0, 3);
        if (++ahead_j == num_indices) {
          ahead_j = 0;
          ++ahead_o;
        }
      }
      move(item, source(o, j));
      if (++j == num_indices) {
        j = 0;
        ++o;
      }
    }
  });
}

}  // namespace

int64_t Gather(const void* data, const void* indices, size_t index_bytes, int64_t num_indices, void* out,
               int64_t outer, int64_t axis_dim, size_t slice_bytes) {
  // The same indices serve every outer row: checked once, before anything
  // is written, so the first bad one is reported whatever the threads do.
  for (int64_t j = 0; j < num_indices; ++j) {
    const int64_t k = index_bytes == 4 ? static_cast<int64_t>(static_cast<const int32_t*>(indices)[j])
                                       : static_cast<const int64_t*>(indices)[j];
    if (k < -axis_dim || k >= axis_dim) return j;
  }
  if (outer * num_indices == 0) return -1;
  // Slices of one element move as that type; a memcpy call of run-time
  // size per slice, and a division per item, were most of a gather of 4-byte
  // slices (ArrayFeatureExtractor over [256, 12]: 2 µs for 512 values).
  if (AxisIndexElementSize(slice_bytes)) {
    WithElementAndIndex(slice_bytes, index_bytes, [&](auto elem, auto index) {
      using T = decltype(elem);
      const T* src = static_cast<const T*>(data);
      T* dst = static_cast<T*>(out);
      GatherItems(static_cast<const decltype(index)*>(indices), num_indices, outer, axis_dim, slice_bytes, nullptr,
                  [&](int64_t item, int64_t from) { dst[item] = src[from]; });
      return 0;
    });
    return -1;
  }
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  auto copy = [&](int64_t item, int64_t from) {
    CopyBytes(dst + static_cast<size_t>(item) * slice_bytes, src + static_cast<size_t>(from) * slice_bytes,
                slice_bytes);
  };
  // Rows worth asking for early: long ones from data the per-core caches do not hold.
  const bool far = slice_bytes >= kPrefetchMinRowBytes &&
                   static_cast<size_t>(outer * axis_dim) * slice_bytes >= kPrefetchMinDataBytes;
  const char* prefetch = far ? src : nullptr;
  if (index_bytes == 4) {
    GatherItems(static_cast<const int32_t*>(indices), num_indices, outer, axis_dim, slice_bytes, prefetch, copy);
  } else {
    GatherItems(static_cast<const int64_t*>(indices), num_indices, outer, axis_dim, slice_bytes, prefetch, copy);
  }
  return -1;
}

std::optional<TupleIndexMap> MakeTupleIndexMap(const std::vector<int64_t>& data_dims,
                                               const std::vector<int64_t>& index_dims, int64_t batch_dims) {
  auto rank = static_cast<int64_t>(data_dims.size());
  auto index_rank = static_cast<int64_t>(index_dims.size());
  if (index_rank < 1 || batch_dims < 0 || batch_dims >= index_rank) return std::nullopt;
  TupleIndexMap m;
  m.k = index_dims.back();
  if (m.k < 1 || batch_dims + m.k > rank) return std::nullopt;
  m.tuples = 1;
  for (int64_t d = 0; d + 1 < index_rank; ++d) m.tuples *= index_dims[d];
  if (m.tuples == 0) return std::nullopt;
  int64_t batches = 1;
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (index_dims[d] != data_dims[d]) return std::nullopt;
    batches *= data_dims[d];
  }
  m.tuples_per_batch = batches > 0 ? m.tuples / batches : 0;
  m.batch_stride = 1;
  for (int64_t d = batch_dims; d < rank; ++d) m.batch_stride *= data_dims[d];
  for (int64_t d = batch_dims + m.k; d < rank; ++d) m.slice *= data_dims[d];
  m.dims.assign(data_dims.begin() + batch_dims, data_dims.begin() + batch_dims + m.k);
  m.strides.assign(static_cast<size_t>(m.k), m.slice);
  for (int64_t j = m.k - 1; j > 0; --j) m.strides[j - 1] = m.strides[j] * m.dims[j];
  return m;
}

namespace {

template <typename T, typename I>
int64_t GatherNDAs(const TupleIndexMap& m, const void* data, const void* indices, void* out) {
  const T* x = static_cast<const T*>(data);
  const I* idx = static_cast<const I*>(indices);
  T* y = static_cast<T*>(out);
  std::atomic<int64_t> first_bad{-1};
  const size_t slice_bytes = static_cast<size_t>(m.slice) * sizeof(T);
  ParallelFor(m.tuples, m.slice + m.k, [&](int64_t t) {
    const I* tuple = idx + t * m.k;
    bool bad = false;
    int64_t src = t / m.tuples_per_batch * m.batch_stride + m.Offset(tuple, bad);
    if (bad) {
      RecordBad(first_bad, t * m.k + m.FirstBad(tuple));
    } else if (m.slice == 1) {
      y[t] = x[src];
    } else {
      std::memcpy(y + t * m.slice, x + src, slice_bytes);
    }
  });
  return first_bad.load();
}

}  // namespace

int64_t GatherND(const TupleIndexMap& m, const void* data, const void* indices, size_t index_bytes, void* out,
                 size_t elem_bytes) {
  return WithElementAndIndex(elem_bytes, index_bytes, [&](auto elem, auto index) {
    return GatherNDAs<decltype(elem), decltype(index)>(m, data, indices, out);
  });
}

}  // namespace aic::cpu::kernels

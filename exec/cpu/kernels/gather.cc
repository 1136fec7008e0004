#include "exec/cpu/kernels/gather.h"

#include <atomic>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

int64_t Gather(const void* data, const void* indices, size_t index_bytes, int64_t num_indices, void* out,
               int64_t outer, int64_t axis_dim, size_t slice_bytes) {
  std::atomic<int64_t> bad{-1};
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  auto index = [&](int64_t j) {
    return index_bytes == 4 ? static_cast<int64_t>(static_cast<const int32_t*>(indices)[j])
                            : static_cast<const int64_t*>(indices)[j];
  };
  int64_t work = static_cast<int64_t>(slice_bytes) / 4 + 1;
  ParallelFor(outer * num_indices, work, [&](int64_t item) {
    int64_t o = item / num_indices, j = item % num_indices;
    int64_t k = index(j);
    if (k < 0) k += axis_dim;
    if (k < 0 || k >= axis_dim) {
      int64_t expected = -1;
      bad.compare_exchange_strong(expected, j);
      return;
    }
    std::memcpy(dst + static_cast<size_t>(item) * slice_bytes,
                src + static_cast<size_t>(o * axis_dim + k) * slice_bytes, slice_bytes);
  });
  return bad.load();
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

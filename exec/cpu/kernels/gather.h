// Gather along one axis for any element type: the data is viewed as
// [outer, axis_dim, inner] and each index copies one `inner`-sized slice.
// GatherND (and ScatterND, scatter.h): each tuple of k indices picks one
// slice of the data, the strides of the indexed dims computed once per shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "exec/cpu/kernels/gather_elements.h"

namespace aic::cpu::kernels {

// out[o, j, :] = data[o, idx[j], :] with idx wrapped when negative; indices
// are int32 (`index_bytes` 4) or int64 (8). Returns the position of the first
// out-of-range index (nothing written then), or -1 when all were valid.
int64_t Gather(const void* data, const void* indices, size_t index_bytes, int64_t num_indices, void* out,
               int64_t outer, int64_t axis_dim, size_t slice_bytes);

// The indices as [tuples, k]: tuple t picks the slice at data[batch(t),
// t's k indices, ...], batch(t) = t / tuples_per_batch over GatherND's
// batch_dims leading dims (one batch without them).
struct TupleIndexMap {
  int64_t tuples = 0;
  int64_t k = 1;
  int64_t tuples_per_batch = 1;
  int64_t batch_stride = 0;             // data elements per batch
  int64_t slice = 1;                    // elements per slice
  std::vector<int64_t> dims, strides;  // the k indexed dims of the data, their strides in elements

  // The data offset of the slice `tuple` (k indices) names, without its
  // batch; an index out of range sets `bad` and counts as 0.
  template <typename I>
  int64_t Offset(const I* tuple, bool& bad) const {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) off += WrapIndex(tuple[j], dims[j], bad) * strides[j];
    return off;
  }
  // The position in `tuple` of its first index out of range (k if none).
  template <typename I>
  int64_t FirstBad(const I* tuple) const {
    for (int64_t j = 0; j < k; ++j) {
      if (tuple[j] < -dims[j] || tuple[j] >= dims[j]) return j;
    }
    return k;
  }
};

// The map for indices of `index_dims` (the last is k) into data of
// `data_dims` with `batch_dims` leading batch dims; nullopt where the shapes
// do not fit (k < 1, batch_dims + k past the data's rank, batch dims that differ).
std::optional<TupleIndexMap> MakeTupleIndexMap(const std::vector<int64_t>& data_dims,
                                               const std::vector<int64_t>& index_dims, int64_t batch_dims);

// out[t, :] = the slice tuple t picks (GatherND); elem_bytes 1, 2, 4, 8 or
// 16. Returns the flat position in the indices of the first out-of-range
// index, or -1 when all were valid (out is then complete).
int64_t GatherND(const TupleIndexMap& m, const void* data, const void* indices, size_t index_bytes, void* out,
                 size_t elem_bytes);

}  // namespace aic::cpu::kernels

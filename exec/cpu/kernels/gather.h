// Gather along one axis for any element type: the data is viewed as
// [outer, axis_dim, inner] and each index copies one `inner`-sized slice.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aic::cpu::kernels {

// out[o, j, :] = data[o, idx[j], :] with idx wrapped when negative; indices
// are int32 (`index_bytes` 4) or int64 (8). Returns the position of the first
// out-of-range index, or -1 when all were valid (out is then complete).
int64_t Gather(const void* data, const void* indices, size_t index_bytes, int64_t num_indices, void* out,
               int64_t outer, int64_t axis_dim, size_t slice_bytes);

}  // namespace aic::cpu::kernels

// Strided copies over dense tensors of any dtype: out[i0, i1, ..] =
// in[offset + i0·s0 + i1·s1 + ..] with per-output-axis source strides in
// elements. Slice with any steps (negative included: a step times the axis's
// dense stride), Transpose (the permuted dense strides) and Tile (each axis
// split as [repeat, extent] with stride 0 over the repeats) are all one.
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

struct StridedCopyPlan {
  std::vector<int64_t> dims;     // output dims, collapsed
  std::vector<int64_t> strides;  // source strides in elements, per output dim
  int64_t offset = 0;            // source element of output index 0
  int64_t elem_size = 4;
  int64_t elements = 0;
};

// The plan of the slice of `in_dims` starting at `starts` with `steps` and
// output `out_dims` (all full rank); dims merged where the source stays
// contiguous across them.
StridedCopyPlan MakeStridedCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims,
                                int64_t elem_size);

// out (dense, `out_dims`) from the source element offset + Σ i_k·src_strides[k].
StridedCopyPlan MakeCopy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& src_strides,
                         int64_t offset, int64_t elem_size);

// out = Transpose(in, perm).
StridedCopyPlan MakeTransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                                  int64_t elem_size);

// out = Tile(in, repeats).
StridedCopyPlan MakeTileCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& repeats,
                             int64_t elem_size);

void RunStridedCopy(const StridedCopyPlan& plan, const void* in, void* out);

}  // namespace aic::cpu::kernels

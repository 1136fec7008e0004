// Host-side index math that fills the kernel descriptors of kernels.h:
// broadcast strides, dimension coalescing, and the strided copies that
// express Transpose, Slice, Concat and Expand. Pure functions, no CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "exec/cuda/kernels.h"

namespace aic::cuda {

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims);

// Strides (in elements) reading a dense tensor of `in` dims at each index of
// `out` dims under numpy broadcasting: `in` padded with 1s on the left, 0 along
// broadcast dims. nullopt when `in` does not broadcast to `out`.
std::optional<std::vector<int64_t>> BroadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Merges adjacent dims every operand walks contiguously across and drops
// size-1 dims; `strides[j]` are operand j's strides over `dims`. Changes
// neither the element order nor any operand's addresses.
void Coalesce(std::vector<int64_t>& dims, std::vector<std::vector<int64_t>>& strides);

// Fills an EltProgram's dims/strides from output dims and per-input dims
// (already coalesced); false when the rank exceeds kMaxRank or an input does not broadcast.
bool SetEltShape(EltProgram& p, const std::vector<int64_t>& out_dims,
                 const std::vector<std::vector<int64_t>>& input_dims);

// y = Transpose(x, perm).
std::optional<StridedCopy> TransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                                         int elem_size);
// y = x[starts[d] : : steps[d]] along every dim, giving out_dims (starts already clamped).
std::optional<StridedCopy> SliceCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims,
                                     int elem_size);
// The part of Concat(axis) contributed by one input placed at `axis_offset`.
std::optional<StridedCopy> ConcatPartCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                                          int64_t axis, int64_t axis_offset, int elem_size);
// y = Expand(x, out_dims) (numpy broadcast).
std::optional<StridedCopy> ExpandCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                                      int elem_size);

// Reduction of `in_dims` over `axes` (normalized, sorted), keepdims not needed here.
std::optional<ReduceDesc> MakeReduce(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& axes,
                                     ReduceOp op);

}  // namespace aic::cuda

// Cutting a tensor into pieces along one axis and gluing pieces back: what
// SplitToSequence / ConcatFromSequence do, and what Loop and Scan do with
// their per-iteration slices and scan outputs. Works for every dtype with a
// fixed element size, and for strings.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace aic {

// Elements [start, start + length) along `axis` (kept, now of size `length`).
// Requires 0 <= axis < rank and the range inside the dim.
Tensor SliceAlongAxis(const Tensor& t, int64_t axis, int64_t start, int64_t length);

// The sub-tensor at `index` along `axis`, with that axis removed.
Tensor TakeAlongAxis(const Tensor& t, int64_t axis, int64_t index);

// Concatenates `parts` along `axis` (new_axis = false: every part has that
// axis and equal other dims) or stacks them along a new axis inserted at
// `axis` (new_axis = true: every part has equal dims). `axis` is already
// normalized. Fails on empty `parts`, mixed dtypes or mismatched dims.
absl::StatusOr<Tensor> ConcatAlongAxis(const std::vector<Tensor>& parts, int64_t axis,
                                       bool new_axis);

}  // namespace aic

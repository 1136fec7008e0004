// Slice's parameters, however its opset spells them (attributes before
// opset 10, inputs 1-4 from 10 on, axes and steps optional), and numpy's
// clamping of one axis. The one decoder for shape inference, the reference
// kernel, both backends' lowerings and the rewriter's shape rules.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;  // one entry per sliced axis
};

struct AxisRange {
  int64_t start = 0, step = 1, count = 0;
};

// Clamps one axis's slice to a dim as numpy does (negative steps included).
AxisRange ClampSlice(int64_t start, int64_t end, int64_t step, int64_t dim);

// Reads the slice parameters; nullopt when some are not known (`input(i)`
// gives input i's integer values when known). Axes are normalized against
// `rank` (or left as given when the rank is unknown, rank < 0). Errors:
// lengths that differ, a step of 0, an axis out of range.
absl::StatusOr<std::optional<SliceParams>> SliceParamsOf(
    const Node& node, int64_t opset, int64_t rank,
    const std::function<std::optional<std::vector<int64_t>>(size_t)>& input);

}  // namespace aic

// Pad's parameters, however its opset spells them: the `paddings` attribute
// (opset 1), `pads` and `value` attributes (2-10), inputs pads, constant_value
// (11+) and axes (18+). The one decoder for shape inference, the reference
// kernel, the CPU lowering and the rewriter's Pad rules.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace aic {

using IntsInputFn = std::function<std::optional<std::vector<int64_t>>(size_t)>;

// (before, after) pads per axis of an input of `rank` (axes expanded; rank <
// 0: unknown, allowed when no axes are given, the rank then follows from the
// pads). nullopt when the pads or axes are inputs whose values `input(i)`
// does not know. Errors: a pads list of the wrong length, an axis out of range.
absl::StatusOr<std::optional<std::vector<std::pair<int64_t, int64_t>>>> PadsOf(const Node& pad, int64_t opset,
                                                                                int64_t rank, const IntsInputFn& input);

// The constant fill value: the `value` attribute before opset 11, else input
// 2 (0 when it is absent or empty); nullopt when input 2 is given but
// `input_value(2)` does not know it.
std::optional<double> PadConstantOf(const Node& pad, int64_t opset,
                                    const std::function<const Tensor*(size_t)>& input_value);

}  // namespace aic

// Which axes a Reduce* node reduces, and the shape that results. The axes
// moved from an attribute to an optional input (ReduceSum at opset 13, the
// other Reduce* ops at 18), and `noop_with_empty_axes` came with the input;
// this file is the one place that knows those rules, for shape inference
// (axes maybe unknown) and for the kernels (axes always known).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace aic {

// True when `op_type` at `opset` takes its axes as input 1 instead of an attribute.
bool ReduceAxesIsInput(const std::string& op_type, int64_t opset);

// The resolved reduction of one node for an input of known rank.
struct ReduceAxes {
  std::vector<bool> reduced;  // per input axis; all false for a noop
  bool keepdims = true;
  bool noop = false;          // noop_with_empty_axes with empty axes: y = f(x) elementwise
};

// Resolves the axes. `axes_input` is input 1's value when axes come as input
// (nullptr when that input is absent); `axes_input_present` says whether the node
// has input 1 at all (given but not constant at inference time → nullopt).
// Errors: an axis out of range.
absl::StatusOr<std::optional<ReduceAxes>> ResolveReduceAxes(const Node& node, int64_t opset,
                                                            bool axes_input_present,
                                                            const Tensor* axes_input,
                                                            int64_t rank);

// The output shape for `input`; dims not reduced flow through (symbols too).
Shape ReducedShape(const Shape& input, const ReduceAxes& axes);
std::vector<int64_t> ReducedDims(const std::vector<int64_t>& input, const ReduceAxes& axes);

// "[1, 2]" for the reduced axes, "all" when every axis is reduced.
std::string ReducedAxesText(const ReduceAxes& axes);

}  // namespace aic

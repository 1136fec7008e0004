// Clip's bounds, however its opset spells them: attributes `min`/`max`
// before opset 11, optional scalar inputs 1 and 2 from opset 11 on. The one
// decoder for the op's traits and reference kernel, both backends'
// lowerings and the rewriter's rules, so "no bound" means one thing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "graph/graph.h"
#include "graph/tensor.h"

namespace aic {

struct ClipBounds {
  std::optional<double> lo;  // nullopt: no lower bound (or not known)
  std::optional<double> hi;  // nullopt: no upper bound (or not known)
  // False when that bound is an input whose value is not known (not a
  // constant, or not one element).
  bool lo_known = true;
  bool hi_known = true;
  bool known() const { return lo_known && hi_known; }
};

// `input_value(i)` gives input i's value when it is known (a constant at
// compile time, the runtime tensor in a kernel), else nullptr.
ClipBounds DecodeClipBounds(const Node& clip, int64_t opset,
                            const std::function<const Tensor*(size_t)>& input_value);

}  // namespace aic

// Evaluating one node before anything runs: the one mechanism behind the
// rewriter's e-class analysis (rewrite/egraph), the backends' compile-time
// folding (exec/common/lowering_frame.h) and the report's constant
// propagation (analysis/constants.h). Shape inference gives the output types
// and whatever values it can prove without data (Shape and Size of a tensor
// with static dims, a Gather of a shape...); when every input is known, the
// reference kernel computes the outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/tensor.h"
#include "graph/type_info.h"

namespace aic {

struct EvaluateLimits {
  // The kernel runs only when the known inputs hold at most this many
  // elements in total, and keeps only outputs of at most this many.
  int64_t max_input_elements = std::numeric_limits<int64_t>::max();
  int64_t max_output_elements = std::numeric_limits<int64_t>::max();
};

struct Evaluation {
  bool has_def = false;                      // the op has an OpDef at this opset
  bool nondeterministic = false;             // Random*, training ops: never a constant
  std::vector<TypeInfo> types;               // per output (unknown when inference failed)
  std::vector<std::optional<Tensor>> values; // per output, when known
  bool AllValuesKnown() const;               // every output present in the node has a value
};

// `input_types[i]` and `input_values[i]` describe input i (an unknown type
// and nullptr for an absent or unknown one). `fresh_symbol` names dims that
// cannot be known (null: inference's default names). Nodes with subgraphs
// are inferred but never run: their bodies may read values from outside.
Evaluation EvaluateNode(const Node& node, int64_t opset, const std::vector<TypeInfo>& input_types,
                        const std::vector<const Tensor*>& input_values, const EvaluateLimits& limits = {},
                        std::function<std::string()> fresh_symbol = nullptr);

}  // namespace aic

// What the OpDef registry says of one node: its traits and its cost, from
// the node's value types and the constants known for its inputs. The one
// place the report asks ops/ (the logical graph for every node, the idioms
// for a fused node).
#pragma once

#include <functional>

#include "graph/model.h"
#include "ops/traits.h"

namespace aic::analysis {

struct NodeFacts {
  Traits traits;
  Cost cost;
};

// An op without an OpDef (or without those hooks) gets the neutral
// defaults: its op type as name, bytes only. `constant_of` gives an input's
// known value (nullptr when it has none).
NodeFacts FactsOf(const Model& model, const Node& node,
                  const std::function<const Tensor*(const Value*)>& constant_of);

}  // namespace aic::analysis

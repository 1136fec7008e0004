// Topological order of a graph's nodes, counting the outer-scope values that a
// node's subgraphs read as dependencies of that node.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

// Nodes in an order where every producer precedes its consumers. Stable: among
// ready nodes, the original order is kept. Fails with InvalidArgument naming a
// node on a cycle.
absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph);

// Reorders graph.nodes() topologically (no-op when already sorted).
absl::Status SortTopologically(Graph& graph);

}  // namespace aic

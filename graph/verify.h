// Structural verification of a graph (and its subgraphs, recursively).
#pragma once

#include "absl/status/status.h"
#include "graph/graph.h"

namespace aic {

// InvalidArgument naming the offending node or value when the graph has: a
// cycle; a node input that nothing defines (not a graph input, initializer,
// node output, or a value of an enclosing graph); a value produced by two
// nodes (or produced by a node and also a graph input/initializer); a graph
// output that nothing produces.
absl::Status Verify(const Graph& graph);

}  // namespace aic

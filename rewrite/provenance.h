// Where each node of an optimized graph came from, for `aic-onnx opt --html`:
// the rule that made it and the original nodes it stands for, and, for each
// original node no optimized node stands for, why it went. Recorded by
// Optimize only when OptimizeOptions::record_provenance asks (the tracing is
// cheap, but opt's time is a measured target), for the main graph only: the
// bodies of If/Loop/Scan are optimized as graphs of their own and not traced.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace aic::rewrite {

// The "rule" of a node whose e-node came from the graph as imported.
inline constexpr char kOriginalRule[] = "original";

struct NodeProvenance {
  // The rule whose apply() created the chosen e-node (kOriginalRule for the
  // import's; "inline_known_if" for a branch inlined into its holder;
  // "graph output copy" for the Identity emission adds where an output is an
  // input or a constant).
  std::string rule;
  // Indices into OptimizeProvenance::original->nodes(): first the `producers`
  // original nodes that computed this node's output values (one when a node
  // is kept, several when equal nodes were merged), then the original nodes
  // between this node's inputs and those, whose values no optimized node
  // computes any more (a fused chain's interior). A rule's intermediate (the
  // HardSigmoid of x * HardSigmoid(x)) has no producers: it lists the
  // interior of what the nodes reading it replaced.
  std::vector<int32_t> replaced;
  int32_t producers = 0;
};

struct OptimizeProvenance {
  // The main graph as it was optimized (inputs fixed, types inferred): kept
  // rather than destroyed, and what `replaced` indexes.
  std::shared_ptr<const Graph> original;
  std::vector<NodeProvenance> nodes;  // per node of the optimized main graph, in nodes() order
  // Per original node: "" when some optimized node stands for it, else why it
  // went, starting with one word: "folded ..." (its value, or what it fed,
  // became an initializer), "bypassed ..." (its output is a graph input or a
  // value of an enclosing graph), "unused ..." (nothing the outputs read
  // needs it).
  std::vector<std::string> removed;
};

}  // namespace aic::rewrite

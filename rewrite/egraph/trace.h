// Provenance of one extraction (rewrite/provenance.h), from what import,
// the driver and emission already know: the class each source value landed
// in (ImportResult::value_class), the rule each e-node was added by (the
// driver's tags), and the e-node and class behind each emitted node and value
// (EmitTrace). Nothing here changes the e-graph or the graphs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "rewrite/egraph/convert.h"
#include "rewrite/egraph/egraph.h"
#include "rewrite/provenance.h"

namespace aic::rewrite {

// Per e-node, the index into `rule_names` of what added it (0: the import).
struct ENodeOrigins {
  std::vector<int16_t> tag;
  std::vector<std::string> rule_names;
};

struct GraphProvenance {
  std::vector<NodeProvenance> nodes;  // per node of the emitted graph, in nodes() order
  std::vector<std::string> removed;   // per node of the source graph
};

GraphProvenance TraceProvenance(const Graph& source, const ImportResult& imported, const EGraph& eg,
                                const ENodeOrigins& origins, const Graph& emitted, const EmitTrace& trace);

// `second` traced a rewrite of the graph `first` produced: the provenance of
// second's nodes in terms of first's source graph (of `num_original` nodes).
GraphProvenance ComposeProvenance(const GraphProvenance& first, const GraphProvenance& second,
                                  size_t num_original);

}  // namespace aic::rewrite

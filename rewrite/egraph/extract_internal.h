// Private to rewrite/egraph (callers use ExtractGraph in convert.h): the seam
// between the two halves of extraction, which live in separate files so that
// each does one job. extract.cc picks one e-node per e-class; emit.cc builds
// the Graph from those picks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "rewrite/egraph/convert.h"
#include "rewrite/egraph/egraph.h"

namespace aic::rewrite {

// The chosen e-node of every class, indexed by class id (read through
// Find): an index into EGraph::node(), or -1 where the class has no
// extractable e-node (every choice reads itself).
using Choice = std::vector<int32_t>;

// One e-node per class, the cheapest under the cost model (cost_model.h)
// with shared classes paid once (extract.cc).
Choice ChooseENodes(const EGraph& egraph);

// The graph the chosen e-nodes compute, reached from `source`'s outputs
// (emit.cc).
absl::StatusOr<std::unique_ptr<Graph>> EmitGraph(const EGraph& egraph, const Choice& choice,
                                                 const Graph& source, const ImportResult& imported,
                                                 EmitTrace* trace = nullptr);

}  // namespace aic::rewrite

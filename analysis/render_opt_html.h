// `aic-onnx opt ... --html FILE`: one self-contained page showing what the
// rewriter changed. The original and the optimized main graph side by side,
// each drawn node by node with the report's drawing (svg_graph.h, Graphviz
// layout, cut into pieces past 2000 nodes); every optimized node links to the
// original nodes it stands for and names the rule that made it, every
// original node to what replaced it or why it went (rewrite/provenance.h);
// the before/after op table and the rule counts beside them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "rewrite/optimize.h"
#include "session/optimize_and_verify.h"

namespace aic::analysis {

struct OptPage {
  std::string input_path;
  std::string output_path;
  const Graph* optimized = nullptr;
  // From OptimizeStats::provenance; null when the rewriter did not run (-O0,
  // or it failed and the model stays as loaded): both sides are then the
  // optimized graph, every node kept.
  const rewrite::OptimizeProvenance* provenance = nullptr;
  const rewrite::OptimizeStats* stats = nullptr;  // may be null
  std::vector<session::OpTableRow> op_table;
  std::string unchanged_reason;  // why the model was left as loaded, if it was
};

// FailedPrecondition when Graphviz's layout plugin is missing (graph_layout.h).
absl::StatusOr<std::string> RenderOptHtml(const OptPage& page);

}  // namespace aic::analysis

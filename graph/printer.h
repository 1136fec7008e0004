// Human-readable text rendering of a graph: used by `aic-onnx info` and by
// tests and debug dumps.
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/model.h"

namespace aic {

// One line per node: "  %y = Gemm(%x, %w, %b) {transB=1}  'name'".
std::string PrintGraph(const Graph& graph);

// The `info` summary: header, inputs/outputs with shapes, op histogram,
// initializer count and bytes, then the node list.
std::string PrintModelSummary(const Model& model, const std::string& path);

}  // namespace aic

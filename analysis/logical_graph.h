// The graph the report talks about: ONNX nodes grouped into logical nodes
// (a Linear layer exported as MatMul + bias Add is one node), constant
// plumbing folded away, each node carrying its op's traits and cost from the
// OpDef registry, and the data edges between logical nodes.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analysis/constants.h"
#include "analysis/idioms.h"
#include "analysis/report.h"
#include "graph/model.h"

namespace aic::analysis {

struct LogicalGraph {
  // Static facts per node (traits, cost, shapes, layer geometry); the report's
  // nodes start as a copy of these.
  std::vector<ReportNode> nodes;
  std::vector<std::vector<const Node*>> members;       // ONNX nodes, in execution order
  std::vector<std::vector<const Value*>> data_inputs;  // non-constant inputs
  std::vector<std::vector<const Value*>> outputs;      // values seen outside the node
  std::vector<const Tensor*> weights;                  // layers: the weight tensor
  std::vector<int64_t> largest_internal_bytes;         // of a group's values not seen outside it
  // Data edges: for each node, the nodes its data inputs come from (no
  // duplicates), and the nodes that read its outputs.
  std::vector<std::vector<int>> producers;
  std::vector<std::vector<int>> consumers;
  std::vector<bool> feeds_graph_output;
  absl::flat_hash_map<const Node*, int> index_of;  // ONNX node -> logical node

  // Parameters: the stored tensors behind the learned constants, each once
  // (shared initializers, a table read through a Slice, tied copies).
  int64_t total_params = 0;
  std::vector<std::string> notes;  // tied copies found
};

// `order`: the main graph's topological order. `idioms` (analysis/idioms.h),
// when given, group the nodes of each idiom into one logical node.
absl::StatusOr<LogicalGraph> BuildLogicalGraph(
    const Model& model, const ConstantValues& constants, const std::vector<Node*>& order,
    const absl::flat_hash_map<const Node*, Idiom>* idioms = nullptr);

}  // namespace aic::analysis

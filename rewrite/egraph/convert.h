// Graph -> EGraph (import) and EGraph -> Graph (extraction + emission).
//
// Import walks the graph in topological order: graph inputs become kInput
// leaves, initializers kConst leaves keyed by content (duplicates merge), ops
// with an OpDef kOp e-nodes, everything else opaque. Extraction picks one
// e-node per e-class with a greedy, DAG-aware cost (shared classes are paid
// once): per-kernel overhead + MACs + bytes moved, and weight-only classes
// cost (almost) nothing, so foldable subgraphs fold. Emitting only what the
// graph outputs reach is the dead-code elimination.
//
// Import is import.cc; extraction is cost_model.cc (what an e-node costs),
// extract.cc (which e-node per class) and emit.cc (the Graph they compute).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/model.h"
#include "rewrite/egraph/egraph.h"

namespace aic::rewrite {

struct ImportResult {
  std::vector<ClassId> outputs;  // one per graph output
  absl::flat_hash_map<const Value*, ClassId> value_class;
  int64_t opaque_nodes = 0;
  // Values of enclosing graphs a body reads, as the leaves standing for them.
  std::vector<std::pair<ClassId, Value*>> outer_leaves;
};

// Why a node must stay opaque ("" when it may be rewritten).
std::string OpaqueReason(const Node& node, int64_t opset);

absl::StatusOr<ImportResult> ImportGraph(const Graph& graph, EGraph& egraph);

// Imports the nodes of `branch`, a body held by a node of `graph` (an If's
// branch, no inputs), into the e-graph `graph` was imported into, its reads
// of `graph`'s values resolved through `imported`; returns the classes of the
// branch's outputs. `imported` learns the branch's values (bodies nested in
// the branch are re-pointed at them when emitted).
absl::StatusOr<std::vector<ClassId>> ImportBranch(const Graph& graph, const Graph& branch, EGraph& egraph,
                                                  ImportResult& imported);

// What emission did, for provenance (rewrite/provenance.h); filled only when
// asked for.
struct EmitTrace {
  // Per node of the emitted graph, in nodes() order: the e-node it was
  // emitted from (-1 for the Identity that copies an input or a constant
  // under an output's name).
  std::vector<int32_t> node_enode;
  // The e-class each value of the emitted graph computes (inputs, outer
  // values and initializers included).
  absl::flat_hash_map<const Value*, ClassId> value_class;
};

// Builds the extracted graph. `source` is the imported graph: its inputs,
// outputs (names), initializer-backed inputs and opaque nodes are carried over.
absl::StatusOr<std::unique_ptr<Graph>> ExtractGraph(const EGraph& egraph, const Graph& source,
                                                    const ImportResult& imported, EmitTrace* trace = nullptr);

}  // namespace aic::rewrite

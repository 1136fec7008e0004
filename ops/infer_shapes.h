// Whole-model shape and dtype inference: walks each graph in topological order
// and asks every node's OpDef for its output types. Small constant values are
// propagated (running reference kernels on constant inputs) so that shape
// arithmetic (Shape → Gather → Concat → Reshape) resolves to concrete dims.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "graph/model.h"

namespace aic {

// The prefix of the symbols InferShapes makes for dims it cannot know
// ("unk__g0", "unk__g1", ... within one run). Distinct from what other
// inferences write into files ("unk__12" from onnx or ONNX Runtime) and from
// the rewriter's ("unk__rw3"), so a consumer can tell this run's names, which
// never stand for two dims, from a file's.
inline constexpr char kInferredSymbolPrefix[] = "unk__g";

struct InferOptions {
  // Largest constant (in elements) computed during inference.
  int64_t max_fold_elements = 1 << 16;
  // Keep going past a node whose inference fails (its outputs stay unknown).
  bool best_effort = true;
  // The main graph's topological order, when the caller has it already (the
  // report computes it once for every pass); null: computed here.
  const std::vector<Node*>* main_order = nullptr;
};

struct InferStats {
  int64_t nodes = 0;
  int64_t opaque_nodes = 0;   // no OpDef: outputs keep what the file declared
  int64_t failed_nodes = 0;   // inference error, tolerated under best_effort
  absl::Status first_error;
};

// Fills Value types for every node output. Returns the first error when
// !best_effort; otherwise OK, with what went wrong in `stats`.
absl::Status InferShapes(Model& model, const InferOptions& options = {}, InferStats* stats = nullptr);

}  // namespace aic

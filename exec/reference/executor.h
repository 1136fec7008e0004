// The seed's minimal executor: runs a model on the CPU node by node in
// topological order with the reference kernels, and lets the caller see every
// intermediate value. It is the oracle every faster path is checked against,
// so it favours obviousness over speed.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "ops/kernel_context.h"
#include "ops/runtime_value.h"

namespace aic {

struct ReferenceRunOptions {
  // Called after each node of the main graph with that node's outputs.
  std::function<void(const Node&, const std::vector<RuntimeValue>&)> on_node_done;
  // And after each node of an If/Loop/Scan body, each time the body runs
  // (not inside model-local functions, whose bodies are copies made per call).
  bool observe_subgraphs = false;
};

class ReferenceExecutor {
 public:
  explicit ReferenceExecutor(const Model& model);

  // Feeds: graph input name -> value. Inputs with an initializer default may be
  // omitted. Returns the graph outputs in order.
  absl::StatusOr<std::vector<RuntimeValue>> Run(const std::map<std::string, RuntimeValue>& feeds,
                                                const ReferenceRunOptions& options = {}) const;

  // Unimplemented naming op, domain, opset and node for the first node with no
  // reference kernel (checked before running), else OK.
  absl::Status CheckSupported() const;

  const Model& model() const { return model_; }

 private:
  const Model& model_;
};

// For executors that run a control-flow node's reference kernel themselves
// (exec/cpu's fallback steps): runs the node's bodies with the reference
// kernels, the values they read from enclosing graphs given in `outer_scope`
// (Node::ImplicitInputs() of the node, with their current values).
std::unique_ptr<SubgraphRunner> MakeReferenceSubgraphRunner(
    const Model& model, std::vector<std::pair<const Value*, RuntimeValue>> outer_scope);

// For the same executors: runs `call`, a call of one of `model`'s local
// functions, with its inputs (null for omitted ones); returns its outputs.
absl::StatusOr<std::vector<RuntimeValue>> RunReferenceFunctionCall(const Model& model, const Node& call,
                                                                   const std::vector<const RuntimeValue*>& inputs);

}  // namespace aic

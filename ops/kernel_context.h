// KernelContext: what a reference kernel sees when it runs one node: the
// node (attributes), the opset, input values, and slots for its outputs.
// Control-flow kernels (If/Loop/Scan) run their bodies through the
// SubgraphRunner that the executor provides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "ops/runtime_value.h"

namespace aic {

// Implemented by executors: runs `body` with its formal inputs bound to
// `inputs` (outer-scope values are looked up in the executor's environment)
// and returns the body's outputs.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual absl::StatusOr<std::vector<RuntimeValue>> RunSubgraph(
      const Graph& body, const std::vector<RuntimeValue>& inputs) = 0;
};

class KernelContext {
 public:
  KernelContext(const Node& node, int64_t opset, std::vector<const RuntimeValue*> inputs,
                SubgraphRunner* runner = nullptr);

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }

  size_t num_inputs() const { return inputs_.size(); }
  // Present means given and not an empty optional.
  bool has_input(size_t i) const;
  // Requires a tensor input.
  const Tensor& input(size_t i) const;
  const RuntimeValue& input_value(size_t i) const;

  size_t num_outputs() const { return outputs_.size(); }
  // Whether the graph uses output i (an omitted optional output is not requested).
  bool output_requested(size_t i) const { return node_.output(i) != nullptr; }
  void set_output(size_t i, Tensor t);
  void set_output_value(size_t i, RuntimeValue v);
  std::vector<RuntimeValue>& outputs() { return outputs_; }

  SubgraphRunner* subgraph_runner() const { return runner_; }

  // InvalidArgument "Conv 'conv_12': <message>".
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(node_.Describe(), ": ", args...));
  }
  template <typename... Args>
  absl::Status Unimplemented(const Args&... args) const {
    return absl::UnimplementedError(absl::StrCat(node_.Describe(), ": ", args...));
  }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<const RuntimeValue*> inputs_;
  std::vector<RuntimeValue> outputs_;
  SubgraphRunner* runner_;
};

}  // namespace aic

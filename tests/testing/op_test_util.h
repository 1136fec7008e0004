// Helpers for op tests: run or infer one node built from tensors, without a
// model file. Shared by every tests/ops/*_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder.h"
#include "graph/model.h"
#include "ops/runtime_value.h"
#include "ops/traits.h"

namespace aic::testing {

struct SingleNode {
  std::string op_type;
  std::string domain;
  std::vector<Attribute> attributes;
  int64_t opset = 17;
  size_t num_outputs = 1;
};

// Builds a one-node model whose inputs are graph inputs (fed with `inputs`;
// an undefined Tensor means "omitted optional input") and runs it through the
// reference executor.
absl::StatusOr<std::vector<Tensor>> RunNode(const SingleNode& spec,
                                            const std::vector<Tensor>& inputs);

// Same model, but with the given input types and constants (non-null entries
// become initializers); runs shape inference and returns the output types.
absl::StatusOr<std::vector<TypeInfo>> InferNode(const SingleNode& spec,
                                                const std::vector<TypeInfo>& input_types,
                                                const std::vector<const Tensor*>& constants = {});

// A float32 tensor of `dims` drawn from N(0, scale²), the same for the same seed.
Tensor NormalTensor(const std::vector<int64_t>& dims, uint32_t seed, float scale = 1.0f);

// A SingleNode spec without designated initializers (they warn on omitted fields).
SingleNode Op(std::string op_type, std::vector<Attribute> attributes = {}, int64_t opset = 17,
              size_t num_outputs = 1);

TypeInfo F32(std::vector<Dim> dims);

// The traits and cost a node's OpDef computes, the way analysis asks for them:
// `inputs[i]` gives input i's type, `constants[i]` (when non-null) its value.
struct TraitsAndCost {
  Traits traits;
  Cost cost;
};
TraitsAndCost NodeTraits(const SingleNode& spec, const std::vector<TypeInfo>& inputs,
                         const std::vector<const Tensor*>& constants);

// A model-local function with an attribute reference:
// local.MyLeaky(a) = LeakyRelu(a, alpha=@alpha), opset 17 inside.
Function LocalLeakyReluFunction();

// Max |a-b| over elements (both converted to double); dims and dtype must match.
double MaxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace aic::testing

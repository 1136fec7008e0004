// Test helper for the MatMul/Conv/pool/normalization/softmax/dropout op
// tests: builds one node (constants become initializers), runs shape
// inference, and evaluates its OpDef's traits and cost the way analysis does.
#pragma once

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic::testing {

struct TraitsAndCost {
  Traits traits;
  Cost cost;
};

// `inputs[i]` gives input i's type; `constants[i]` (when non-null) its value.
inline TraitsAndCost NodeTraits(const SingleNode& spec, const std::vector<TypeInfo>& inputs,
                                const std::vector<const Tensor*>& constants) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = absl::StrCat("in", i);
    if (!inputs[i].known()) {
      ins.push_back(nullptr);
    } else if (i < constants.size() && constants[i] != nullptr) {
      ins.push_back(b.Constant(name, *constants[i]));
    } else {
      ins.push_back(b.Input(name, inputs[i]));
    }
  }
  std::vector<Value*> outs = b.OpN(spec.op_type, ins, spec.num_outputs, spec.attributes);
  for (Value* v : outs) b.Output(v);
  Node* node = b.last_node();
  std::unique_ptr<Model> model = b.Build(spec.opset);
  AIC_CHECK(InferShapes(*model).ok(), "inference failed");
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (Value* v : node->inputs()) {
    types.push_back(v ? v->type() : TypeInfo());
    consts.push_back(v ? v->initializer() : nullptr);
  }
  OpContext ctx(*node, spec.opset, types, consts, nullptr);
  for (size_t i = 0; i < node->num_outputs(); ++i) ctx.set_output_type(i, node->output(i)->type());
  const OpDef* def = OpRegistry::Global().Find("", spec.op_type, spec.opset);
  AIC_CHECK(def != nullptr && def->traits && def->cost, "no traits/cost for ", spec.op_type);
  return {def->traits(ctx), def->cost(ctx)};
}

// A SingleNode without designated initializers (they warn on omitted fields).
inline SingleNode Op(std::string op_type, std::vector<Attribute> attributes = {},
                     int64_t opset = 17, size_t num_outputs = 1) {
  SingleNode s;
  s.op_type = std::move(op_type);
  s.attributes = std::move(attributes);
  s.opset = opset;
  s.num_outputs = num_outputs;
  return s;
}

inline TypeInfo F32(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }

}  // namespace aic::testing

#include "tests/testing/op_test_util.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "exec/reference/executor.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"

namespace aic::testing {

namespace {

std::unique_ptr<Model> BuildModel(const SingleNode& spec, const std::vector<TypeInfo>& types,
                                  const std::vector<const Tensor*>& constants) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!types[i].known()) {
      ins.push_back(nullptr);
      continue;
    }
    std::string name = absl::StrCat("in", i);
    if (i < constants.size() && constants[i] != nullptr) {
      ins.push_back(b.Constant(name, *constants[i]));
    } else {
      ins.push_back(b.Input(name, types[i]));
    }
  }
  std::vector<Value*> outs = b.OpN(spec.op_type, ins, spec.num_outputs, spec.attributes, spec.domain);
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i]->set_name(absl::StrCat("out", i));
    b.Output(outs[i]);
  }
  auto model = b.Build(spec.opset);
  if (!spec.domain.empty()) model->opset_imports.push_back({spec.domain, 1});
  return model;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunNode(const SingleNode& spec,
                                            const std::vector<Tensor>& inputs) {
  std::vector<TypeInfo> types;
  for (const Tensor& t : inputs) {
    types.push_back(t.defined() ? TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims()))
                                : TypeInfo());
  }
  auto model = BuildModel(spec, types, {});
  std::map<std::string, RuntimeValue> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) feeds[absl::StrCat("in", i)] = RuntimeValue(inputs[i]);
  }
  ReferenceExecutor exec(*model);
  AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, exec.Run(feeds));
  std::vector<Tensor> result;
  for (RuntimeValue& rv : outs) {
    if (!rv.is_tensor()) return absl::InternalError("output is not a tensor");
    result.push_back(std::move(rv.tensor));
  }
  return result;
}

absl::StatusOr<std::vector<TypeInfo>> InferNode(const SingleNode& spec,
                                                const std::vector<TypeInfo>& input_types,
                                                const std::vector<const Tensor*>& constants) {
  auto model = BuildModel(spec, input_types, constants);
  InferOptions options;
  options.best_effort = false;
  AIC_RETURN_IF_ERROR(InferShapes(*model, options));
  std::vector<TypeInfo> out;
  for (const Value* v : model->graph->outputs()) out.push_back(v->type());
  return out;
}

SingleNode Op(std::string op_type, std::vector<Attribute> attributes, int64_t opset,
              size_t num_outputs) {
  SingleNode s;
  s.op_type = std::move(op_type);
  s.attributes = std::move(attributes);
  s.opset = opset;
  s.num_outputs = num_outputs;
  return s;
}

TypeInfo F32(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }

TraitsAndCost NodeTraits(const SingleNode& spec, const std::vector<TypeInfo>& inputs,
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

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.dims() != b.dims() || a.dtype() != b.dtype()) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double x = a.ElementAsDouble(i), y = b.ElementAsDouble(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    m = std::max(m, std::fabs(x - y));
  }
  return m;
}

Function LocalLeakyReluFunction() {
  Function fn;
  fn.name = "MyLeaky";
  fn.domain = "local";
  fn.attribute_names = {"alpha"};
  fn.opset_imports = {{"", 17}};
  fn.body = std::make_shared<Graph>();
  Value* a = fn.body->AddValue("a");
  fn.body->AddInput(a);
  Value* r = fn.body->AddValue("r");
  Node* n = fn.body->AddNode("LeakyRelu", {a}, {r});
  Attribute ref;
  ref.name = "alpha";
  ref.type = AttrType::kFloat;
  ref.ref_attr_name = "alpha";
  n->attributes.push_back(ref);
  fn.body->AddOutput(r);
  return fn;
}

Tensor NormalTensor(const std::vector<int64_t>& dims, uint32_t seed, float scale) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (float& v : t.mutable_span<float>()) v = normal(rng);
  return t;
}

}  // namespace aic::testing

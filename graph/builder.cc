#include "graph/builder.h"

#include "absl/strings/str_cat.h"

namespace aic {

GraphBuilder::GraphBuilder() : model_(std::make_unique<Model>()), graph_(model_->graph.get()) {
  graph_->name = "main";
}

Value* GraphBuilder::Input(const std::string& name, DType dtype, const std::vector<Dim>& dims) {
  return Input(name, TypeInfo::Tensor(dtype, Shape(dims)));
}

Value* GraphBuilder::Input(const std::string& name, TypeInfo type) {
  Value* v = graph_->AddValue(name, std::move(type));
  graph_->AddInput(v);
  return v;
}

Value* GraphBuilder::Constant(const std::string& name, Tensor value) {
  Value* v = graph_->AddValue(name, TypeInfo::Tensor(value.dtype(), Shape::FromValues(value.dims())));
  graph_->SetInitializer(v, std::move(value));
  return v;
}

std::string GraphBuilder::FreshName(const std::string& base) {
  return absl::StrCat(base, "_", counter_++);
}

Value* GraphBuilder::Op(const std::string& op_type, const std::vector<Value*>& inputs,
                        std::vector<Attribute> attributes, const std::string& output_name) {
  Value* out = graph_->AddValue(output_name.empty() ? FreshName(op_type) : output_name);
  last_node_ = graph_->AddNode(op_type, inputs, {out}, FreshName(op_type + "_node"));
  last_node_->attributes = std::move(attributes);
  return out;
}

std::vector<Value*> GraphBuilder::OpN(const std::string& op_type, const std::vector<Value*>& inputs,
                                      size_t num_outputs, std::vector<Attribute> attributes,
                                      const std::string& domain) {
  std::vector<Value*> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back(graph_->AddValue(FreshName(op_type)));
  last_node_ = graph_->AddNode(op_type, inputs, outs, FreshName(op_type + "_node"), domain);
  last_node_->attributes = std::move(attributes);
  return outs;
}

void GraphBuilder::Output(Value* v) { graph_->AddOutput(v); }

std::unique_ptr<Model> GraphBuilder::Build(int64_t opset, int64_t ir_version) {
  AIC_CHECK(model_ != nullptr, "Build() on a builder that does not own its graph");
  model_->ir_version = ir_version;
  model_->opset_imports = {{"", opset}};
  model_->producer_name = "aic-onnx";
  return std::move(model_);
}

}  // namespace aic

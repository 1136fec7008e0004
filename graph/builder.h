// GraphBuilder: terse construction of graphs in tests and generators.
//
//   GraphBuilder b;
//   Value* x = b.Input("x", DType::kFloat, {1, 10});
//   Value* w = b.Constant("w", Tensor::FromVector<float>(..., {10, 20}));
//   Value* y = b.Op("MatMul", {x, w});
//   b.Output(y);
//   std::unique_ptr<Model> m = b.Build(/*opset=*/17);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/model.h"

namespace aic {

class GraphBuilder {
 public:
  GraphBuilder();
  explicit GraphBuilder(Graph* graph) : graph_(graph) {}  // builds into an existing graph

  Value* Input(const std::string& name, DType dtype, const std::vector<Dim>& dims);
  Value* Input(const std::string& name, TypeInfo type);
  // An initializer (a constant value, not a node).
  Value* Constant(const std::string& name, Tensor value);
  // A single-output node; its output is named "<op_type>_<n>" unless given.
  Value* Op(const std::string& op_type, const std::vector<Value*>& inputs,
            std::vector<Attribute> attributes = {}, const std::string& output_name = "");
  // A multi-output node.
  std::vector<Value*> OpN(const std::string& op_type, const std::vector<Value*>& inputs,
                          size_t num_outputs, std::vector<Attribute> attributes = {},
                          const std::string& domain = "");
  void Output(Value* v);
  Node* last_node() const { return last_node_; }
  Graph& graph() { return *graph_; }

  // Hands over the model (only for a builder that owns its graph).
  std::unique_ptr<Model> Build(int64_t opset = 17, int64_t ir_version = 8);

 private:
  std::string FreshName(const std::string& base);
  std::unique_ptr<Model> model_;
  Graph* graph_;
  Node* last_node_ = nullptr;
  int counter_ = 0;
};

}  // namespace aic

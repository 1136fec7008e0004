// The typed graph IR: Values connected by Nodes, in SSA form (one producer per
// Value). A Graph owns its Values and Nodes; nested subgraphs (If/Loop/Scan
// bodies) are Graphs held by node attributes, whose nodes may read Values of
// enclosing graphs directly (outer-scope references are plain pointers).
//
// Names matter: ONNX is name-based, so every Value keeps the name it had in the
// file and the saver writes it back. Omitted optional inputs/outputs ("" in
// ONNX) are nullptr.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "graph/type_info.h"

namespace aic {

class Graph;
class Node;

class Value {
 public:
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Graph* owner() const { return owner_; }

  const TypeInfo& type() const { return type_; }
  void set_type(TypeInfo type) { type_ = std::move(type); }
  // Convenience for tensor values.
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }

  // The node producing this value and which of its outputs it is; null for graph
  // inputs, initializers and undefined names.
  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }

  // Constant data when this value is an initializer.
  const Tensor* initializer() const { return initializer_ ? &*initializer_ : nullptr; }
  bool is_graph_input() const { return is_graph_input_; }
  bool is_initializer() const { return initializer_.has_value(); }

  // Whether the file listed this value in graph.value_info (the saver writes it back).
  bool in_value_info = false;
  std::string doc_string;

 private:
  friend class Graph;
  friend class Node;
  Value(Graph* owner, std::string name) : name_(std::move(name)), owner_(owner) {}
  std::string name_;
  Graph* owner_;
  TypeInfo type_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  std::optional<Tensor> initializer_;
  bool is_graph_input_ = false;
};

class Node {
 public:
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain ("ai.onnx" is normalized to "")
  std::string name;
  std::string doc_string;
  std::vector<Attribute> attributes;

  Graph* owner() const { return owner_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  bool has_input(size_t i) const { return input(i) != nullptr; }

  void set_input(size_t i, Value* v);
  void add_input(Value* v) { inputs_.push_back(v); }
  // Makes this node the producer of `v` as output i (claims v even if another
  // node produces it already; Verify() reports such duplicates).
  void set_output(size_t i, Value* v);

  const Attribute* FindAttr(std::string_view attr_name) const;
  Attribute* FindAttr(std::string_view attr_name);
  bool HasAttr(std::string_view attr_name) const { return FindAttr(attr_name) != nullptr; }
  int64_t GetInt(std::string_view attr_name, int64_t default_value) const;
  float GetFloat(std::string_view attr_name, float default_value) const;
  std::string GetString(std::string_view attr_name, std::string default_value) const;
  std::vector<int64_t> GetInts(std::string_view attr_name, std::vector<int64_t> default_value = {}) const;
  std::vector<float> GetFloats(std::string_view attr_name, std::vector<float> default_value = {}) const;
  // Replaces an attribute of the same name, or appends.
  void SetAttr(Attribute attr);

  // Subgraphs held by graph / graphs attributes, in attribute order.
  std::vector<Graph*> Subgraphs() const;
  // Values of enclosing graphs that this node's subgraphs read (recursively):
  // dependencies that topological order must respect.
  std::vector<Value*> ImplicitInputs() const;

  // "Conv 'conv_12'" (or "Conv (#3)" for an unnamed node), for error messages.
  std::string Describe() const;

 private:
  friend class Graph;
  explicit Node(Graph* owner) : owner_(owner) {}
  Graph* owner_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
};

class Graph {
 public:
  explicit Graph(Graph* parent = nullptr) : parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::string doc_string;
  // Serialized SparseTensorProto initializers and TensorAnnotation entries, kept
  // verbatim for the round trip (no op here reads them).
  std::vector<std::string> opaque_sparse_initializers;
  std::vector<std::string> opaque_quantization_annotations;

  Graph* parent() const { return parent_; }
  void set_parent(Graph* parent) { parent_ = parent; }

  // Creates a value owned by this graph.
  Value* AddValue(std::string name, TypeInfo type = {});
  // Creates a node; outputs are given as existing values (or nullptr for an
  // omitted optional output).
  Node* AddNode(std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                std::string name = "", std::string domain = "");
  void AddInput(Value* v);
  void AddOutput(Value* v) { outputs_.push_back(v); }
  void SetInitializer(Value* v, Tensor t);
  void ClearInitializer(Value* v);
  void set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }
  void set_inputs(std::vector<Value*> inputs);
  // Removes nodes for which `pred` is true (values stay; see PruneValues).
  template <typename Pred>
  void RemoveNodesIf(Pred pred);
  // Reorders nodes_ to `order`, which must be a permutation of nodes().
  void SetNodeOrder(const std::vector<Node*>& order);

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Initializers in the order they were added.
  const std::vector<Value*>& initializers() const { return initializers_; }
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t num_nodes() const { return nodes_.size(); }
  const std::deque<std::unique_ptr<Value>>& values() const { return values_; }

  // The value of this graph with that name, or nullptr (does not search parents).
  Value* FindValue(std::string_view name) const;
  // Looks in this graph, then enclosing graphs.
  Value* LookupValue(std::string_view name) const;

  // Number of nodes here and in all nested subgraphs.
  size_t TotalNodeCount() const;

 private:
  Graph* parent_;
  std::deque<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Value*> initializers_;
};

template <typename Pred>
void Graph::RemoveNodesIf(Pred pred) {
  std::vector<std::unique_ptr<Node>> kept;
  kept.reserve(nodes_.size());
  for (auto& n : nodes_) {
    if (pred(*n)) {
      for (Value* v : n->outputs_) {
        if (v != nullptr && v->producer_ == n.get()) {
          v->producer_ = nullptr;
          v->producer_output_ = -1;
        }
      }
    } else {
      kept.push_back(std::move(n));
    }
  }
  nodes_ = std::move(kept);
}

}  // namespace aic

#include "graph/graph.h"

#include <algorithm>
#include <unordered_set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/model.h"

namespace aic {

// ---- Node ----------------------------------------------------------------

void Node::set_input(size_t i, Value* v) {
  if (inputs_.size() <= i) inputs_.resize(i + 1, nullptr);
  inputs_[i] = v;
}

void Node::set_output(size_t i, Value* v) {
  if (outputs_.size() <= i) outputs_.resize(i + 1, nullptr);
  outputs_[i] = v;
  if (v != nullptr && v->producer_ == nullptr) {
    v->producer_ = this;
    v->producer_output_ = static_cast<int>(i);
  }
}

const Attribute* Node::FindAttr(std::string_view attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

Attribute* Node::FindAttr(std::string_view attr_name) {
  for (Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

int64_t Node::GetInt(std::string_view attr_name, int64_t default_value) const {
  const Attribute* a = FindAttr(attr_name);
  return a != nullptr && a->type == AttrType::kInt ? a->i : default_value;
}

float Node::GetFloat(std::string_view attr_name, float default_value) const {
  const Attribute* a = FindAttr(attr_name);
  return a != nullptr && a->type == AttrType::kFloat ? a->f : default_value;
}

std::string Node::GetString(std::string_view attr_name, std::string default_value) const {
  const Attribute* a = FindAttr(attr_name);
  return a != nullptr && a->type == AttrType::kString ? a->s : default_value;
}

std::vector<int64_t> Node::GetInts(std::string_view attr_name,
                                   std::vector<int64_t> default_value) const {
  const Attribute* a = FindAttr(attr_name);
  return a != nullptr && a->type == AttrType::kInts ? a->ints : default_value;
}

std::vector<float> Node::GetFloats(std::string_view attr_name,
                                   std::vector<float> default_value) const {
  const Attribute* a = FindAttr(attr_name);
  return a != nullptr && a->type == AttrType::kFloats ? a->floats : default_value;
}

void Node::SetAttr(Attribute attr) {
  if (Attribute* existing = FindAttr(attr.name)) {
    *existing = std::move(attr);
  } else {
    attributes.push_back(std::move(attr));
  }
}

std::vector<Graph*> Node::Subgraphs() const {
  std::vector<Graph*> out;
  for (const Attribute& a : attributes) {
    if (a.type == AttrType::kGraph && a.g) out.push_back(a.g.get());
    if (a.type == AttrType::kGraphs) {
      for (const auto& g : a.graphs) {
        if (g) out.push_back(g.get());
      }
    }
  }
  return out;
}

namespace {

bool IsAncestorOrSelf(const Graph* maybe_ancestor, const Graph* g) {
  for (; g != nullptr; g = g->parent()) {
    if (g == maybe_ancestor) return true;
  }
  return false;
}

void CollectOuterReads(const Graph& sub, const Graph* node_owner, std::vector<Value*>& out,
                       std::unordered_set<Value*>& seen) {
  for (const auto& n : sub.nodes()) {
    for (Value* v : n->inputs()) {
      // A read from node_owner or one of its ancestors is an outer-scope read.
      if (v != nullptr && v->owner() != nullptr && IsAncestorOrSelf(v->owner(), node_owner) &&
          seen.insert(v).second) {
        out.push_back(v);
      }
    }
    for (Graph* g : n->Subgraphs()) CollectOuterReads(*g, node_owner, out, seen);
  }
  // Subgraph outputs may be outer values passed straight through.
  for (Value* v : sub.outputs()) {
    if (v != nullptr && v->owner() != nullptr && IsAncestorOrSelf(v->owner(), node_owner) &&
        seen.insert(v).second) {
      out.push_back(v);
    }
  }
}

}  // namespace

std::vector<Value*> Node::ImplicitInputs() const {
  std::vector<Value*> out;
  std::unordered_set<Value*> seen;
  for (Graph* g : Subgraphs()) CollectOuterReads(*g, owner_, out, seen);
  return out;
}

std::string Node::Describe() const {
  std::string op = domain.empty() ? op_type : absl::StrCat(domain, "::", op_type);
  if (!name.empty()) return absl::StrCat(op, " '", name, "'");
  if (owner_ != nullptr) {
    const auto& nodes = owner_->nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].get() == this) return absl::StrCat(op, " (node #", i, ")");
    }
  }
  return op;
}

// ---- Graph ---------------------------------------------------------------

Value* Graph::AddValue(std::string value_name, TypeInfo type) {
  values_.push_back(std::unique_ptr<Value>(new Value(this, std::move(value_name))));
  Value* v = values_.back().get();
  v->type_ = std::move(type);
  return v;
}

Node* Graph::AddNode(std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                     std::string node_name, std::string domain) {
  nodes_.push_back(std::unique_ptr<Node>(new Node(this)));
  Node* n = nodes_.back().get();
  n->op_type = std::move(op_type);
  n->name = std::move(node_name);
  n->domain = std::move(domain);
  n->inputs_ = std::move(inputs);
  for (size_t i = 0; i < outputs.size(); ++i) n->set_output(i, outputs[i]);
  return n;
}

void Graph::AddInput(Value* v) {
  v->is_graph_input_ = true;
  inputs_.push_back(v);
}

void Graph::set_inputs(std::vector<Value*> inputs) {
  for (Value* v : inputs_) v->is_graph_input_ = false;
  inputs_ = std::move(inputs);
  for (Value* v : inputs_) v->is_graph_input_ = true;
}

void Graph::SetInitializer(Value* v, Tensor t) {
  if (!v->initializer_.has_value()) initializers_.push_back(v);
  v->initializer_ = std::move(t);
}

void Graph::ClearInitializer(Value* v) {
  if (!v->initializer_.has_value()) return;
  v->initializer_.reset();
  initializers_.erase(std::remove(initializers_.begin(), initializers_.end(), v),
                      initializers_.end());
}

void Graph::SetNodeOrder(const std::vector<Node*>& order) {
  AIC_CHECK(order.size() == nodes_.size(), "SetNodeOrder: not a permutation");
  std::vector<std::unique_ptr<Node>> reordered;
  reordered.reserve(nodes_.size());
  absl::flat_hash_map<Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  for (Node* n : order) {
    auto it = index.find(n);
    AIC_CHECK(it != index.end() && nodes_[it->second] != nullptr, "SetNodeOrder: not a permutation");
    reordered.push_back(std::move(nodes_[it->second]));
  }
  nodes_ = std::move(reordered);
}

Value* Graph::FindValue(std::string_view value_name) const {
  // Values are few per lookup site (loader builds its own index); a scan is fine
  // for tests and tools, and keeps the graph free of a second name index to maintain.
  for (const auto& v : values_) {
    if (v->name() == value_name) return v.get();
  }
  return nullptr;
}

Value* Graph::LookupValue(std::string_view value_name) const {
  for (const Graph* g = this; g != nullptr; g = g->parent()) {
    if (Value* v = g->FindValue(value_name)) return v;
  }
  return nullptr;
}

size_t Graph::TotalNodeCount() const {
  size_t n = nodes_.size();
  for (const auto& node : nodes_) {
    for (Graph* g : node->Subgraphs()) n += g->TotalNodeCount();
  }
  return n;
}

// ---- Model ---------------------------------------------------------------

std::string NormalizeDomain(std::string_view domain) {
  if (domain == "ai.onnx") return "";
  return std::string(domain);
}

int64_t Model::OpsetFor(std::string_view domain) const {
  std::string d = NormalizeDomain(domain);
  for (const OpsetImport& o : opset_imports) {
    if (NormalizeDomain(o.domain) == d) return o.version;
  }
  return -1;
}

const Function* Model::FindFunction(std::string_view fn_domain, std::string_view fn_name) const {
  for (const Function& f : functions) {
    if (f.name == fn_name && NormalizeDomain(f.domain) == NormalizeDomain(fn_domain)) return &f;
  }
  return nullptr;
}

}  // namespace aic

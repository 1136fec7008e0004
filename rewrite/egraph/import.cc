// Graph -> EGraph. See convert.h.
#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "ops/registry.h"
#include "rewrite/egraph/convert.h"

namespace aic::rewrite {

std::string OpaqueReason(const Node& node, int64_t opset) {
  if (!node.domain.empty()) return "custom domain '" + node.domain + "'";
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
  if (def == nullptr) return "no OpDef for " + node.op_type;
  if (def->nondeterministic) return "nondeterministic";
  if (!node.Subgraphs().empty()) return "has subgraphs";
  for (const Attribute& a : node.attributes) {
    if (!a.ref_attr_name.empty()) return "attribute reference";
    if (a.type == AttrType::kSparseTensor || a.type == AttrType::kSparseTensors ||
        a.type == AttrType::kTypeProto || a.type == AttrType::kTypeProtos) {
      return "opaque attribute";
    }
  }
  // Training-mode ops compute different things than inference.
  if (node.GetInt("training_mode", 0) != 0) return "training mode";
  if (node.op_type == "Dropout" && node.num_inputs() > 2 && node.input(2) != nullptr) {
    const Tensor* t = node.input(2)->initializer();
    if (t == nullptr || node.input(2)->is_graph_input() || t->ElementAsDouble(0) != 0) {
      return "training mode";
    }
  }
  for (const Value* v : node.outputs()) {
    if (v != nullptr && v->type().known() && !v->type().is_tensor()) return "non-tensor output";
  }
  for (const Value* v : node.inputs()) {
    if (v != nullptr && v->type().known() && !v->type().is_tensor()) return "non-tensor input";
  }
  return "";
}

namespace {

// Outer values this small are given to the body's analysis as known values
// (shape arithmetic, small tables); larger ones, weights, stay plain leaves.
constexpr int64_t kKnownOuterElements = int64_t{1} << 16;

// Imports nodes of `graph` (the graph being optimized, or a branch inlined
// into it) into the e-graph, filling `r.value_class`.
class Importer {
 public:
  Importer(const Graph& graph, EGraph& eg, ImportResult& r) : graph_(graph), eg_(eg), r_(r) {}

  // The class of v: imported already, or a leaf for a value of an enclosing
  // graph (with its value when it is a small initializer there).
  ClassId Lookup(const Value* v) {
    auto it = r_.value_class.find(v);
    if (it != r_.value_class.end()) return it->second;
    if (v->owner() == &graph_ || v->owner() == current_) return kNoClass;  // not defined (yet)
    const Tensor* known = v->initializer();
    if (known != nullptr && (v->is_graph_input() || known->num_elements() > kKnownOuterElements)) known = nullptr;
    ClassId leaf = eg_.AddInput(-1 - static_cast<int64_t>(r_.outer_leaves.size()), v->type(), v->name(), known);
    r_.outer_leaves.emplace_back(leaf, const_cast<Value*>(v));
    r_.value_class[v] = leaf;
    return leaf;
  }

  absl::Status ImportNodes(const Graph& g) {
    current_ = &g;
    for (const Value* v : g.initializers()) {
      if (v->is_graph_input()) continue;  // an overridable default stays an input
      r_.value_class[v] = eg_.AddConst(*v->initializer(), v->name());
    }
    AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(g));
    for (const Node* node : order) AIC_RETURN_IF_ERROR(ImportNode(*node));
    return absl::OkStatus();
  }

 private:
  absl::Status ImportNode(const Node& node) {
    std::vector<ClassId> children;
    for (const Value* v : node.inputs()) {
      if (v == nullptr) {
        children.push_back(kNoClass);
        continue;
      }
      ClassId c = Lookup(v);
      if (c == kNoClass) {
        return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": input '", v->name(), "' is not defined"));
      }
      children.push_back(c);
    }
    int num_outputs = static_cast<int>(node.num_outputs());
    std::string reason = OpaqueReason(node, eg_.opset());
    ClassId id;
    if (!reason.empty()) {
      for (const Value* v : node.ImplicitInputs()) {
        ClassId c = Lookup(v);
        if (c != kNoClass) children.push_back(c);
      }
      std::vector<TypeInfo> types;
      for (const Value* v : node.outputs()) types.push_back(v ? v->type() : TypeInfo());
      id = eg_.AddOpaque(node, std::move(children), num_outputs, std::move(types));
      ++r_.opaque_nodes;
    } else {
      id = eg_.AddOpLike(node, std::move(children), num_outputs);
      std::vector<TypeInfo> inferred;
      for (const Value* v : node.outputs()) inferred.push_back(v ? v->type() : TypeInfo());
      eg_.AdoptImportedTypes(id, inferred);
    }
    if (!node.name.empty()) eg_.set_node_name(id, node.name);
    if (num_outputs == 1) {
      if (node.output(0) != nullptr) {
        r_.value_class[node.output(0)] = id;
        eg_.set_name(id, node.output(0)->name());
      }
    } else {
      for (int i = 0; i < num_outputs; ++i) {
        const Value* out = node.output(i);
        if (out == nullptr) continue;
        ClassId p = eg_.Proj(id, i);
        r_.value_class[out] = p;
        eg_.set_name(p, out->name());
      }
    }
    return absl::OkStatus();
  }

  const Graph& graph_;
  const Graph* current_ = nullptr;  // graph_, or the branch being inlined
  EGraph& eg_;
  ImportResult& r_;
};

}  // namespace

absl::StatusOr<ImportResult> ImportGraph(const Graph& graph, EGraph& eg) {
  ImportResult r;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* v = graph.inputs()[i];
    r.value_class[v] = eg.AddInput(static_cast<int64_t>(i), v->type(), v->name());
  }
  Importer importer(graph, eg, r);
  AIC_RETURN_IF_ERROR(importer.ImportNodes(graph));
  for (const Value* v : graph.outputs()) {
    ClassId c = importer.Lookup(v);
    if (c == kNoClass) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", v->name(), "' is not defined"));
    }
    r.outputs.push_back(c);
  }
  eg.Rebuild();
  return r;
}

absl::StatusOr<std::vector<ClassId>> ImportBranch(const Graph& graph, const Graph& branch, EGraph& eg,
                                                  ImportResult& imported) {
  if (!branch.inputs().empty()) return absl::InvalidArgumentError("a branch with inputs");
  Importer importer(graph, eg, imported);
  AIC_RETURN_IF_ERROR(importer.ImportNodes(branch));
  std::vector<ClassId> outputs;
  for (const Value* v : branch.outputs()) {
    ClassId c = importer.Lookup(v);
    if (c == kNoClass) return absl::InvalidArgumentError(absl::StrCat("branch output '", v->name(), "' is not defined"));
    outputs.push_back(c);
  }
  return outputs;
}

}  // namespace aic::rewrite

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

absl::StatusOr<ImportResult> ImportGraph(const Graph& graph, EGraph& eg) {
  ImportResult r;
  auto& vc = r.value_class;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* v = graph.inputs()[i];
    vc[v] = eg.AddInput(static_cast<int64_t>(i), v->type(), v->name());
  }
  for (const Value* v : graph.initializers()) {
    if (v->is_graph_input()) continue;  // an overridable default stays an input
    vc[v] = eg.AddConst(*v->initializer(), v->name());
  }
  // A body (If/Loop/Scan) reads values of enclosing graphs: they are leaves here.
  auto lookup = [&](const Value* v) -> ClassId {
    auto it = vc.find(v);
    if (it != vc.end()) return it->second;
    if (v->owner() == &graph) return kNoClass;
    ClassId leaf = eg.AddInput(-1 - static_cast<int64_t>(r.outer_leaves.size()), v->type(), v->name());
    r.outer_leaves.emplace_back(leaf, const_cast<Value*>(v));
    vc[v] = leaf;
    return leaf;
  };
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  for (const Node* node : order) {
    std::vector<ClassId> children;
    for (const Value* v : node->inputs()) {
      if (v == nullptr) {
        children.push_back(kNoClass);
        continue;
      }
      ClassId c = lookup(v);
      if (c == kNoClass) {
        return absl::InvalidArgumentError(
            absl::StrCat(node->Describe(), ": input '", v->name(), "' is not defined"));
      }
      children.push_back(c);
    }
    int num_outputs = static_cast<int>(node->num_outputs());
    std::string reason = OpaqueReason(*node, eg.opset());
    ClassId id;
    if (!reason.empty()) {
      for (const Value* v : node->ImplicitInputs()) {
        ClassId c = lookup(v);
        if (c != kNoClass) children.push_back(c);
      }
      std::vector<TypeInfo> types;
      for (const Value* v : node->outputs()) types.push_back(v ? v->type() : TypeInfo());
      id = eg.AddOpaque(*node, std::move(children), num_outputs, std::move(types));
      ++r.opaque_nodes;
    } else {
      id = eg.AddOpLike(*node, std::move(children), num_outputs);
    }
    if (!node->name.empty()) eg.set_node_name(id, node->name);
    if (num_outputs == 1) {
      if (node->output(0) != nullptr) {
        vc[node->output(0)] = id;
        eg.set_name(id, node->output(0)->name());
      }
    } else {
      for (int i = 0; i < num_outputs; ++i) {
        const Value* out = node->output(i);
        if (out == nullptr) continue;
        ClassId p = eg.Proj(id, i);
        vc[out] = p;
        eg.set_name(p, out->name());
      }
    }
  }
  for (const Value* v : graph.outputs()) {
    ClassId c = lookup(v);
    if (c == kNoClass) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", v->name(), "' is not defined"));
    }
    r.outputs.push_back(c);
  }
  eg.Rebuild();
  return r;
}

}  // namespace aic::rewrite

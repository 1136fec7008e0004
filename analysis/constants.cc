#include "analysis/constants.h"

#include <vector>

#include "graph/topo.h"
#include "ops/registry.h"

namespace aic::analysis {

const Tensor* ConstantValues::Find(const Value* v) const {
  if (v == nullptr) return nullptr;
  if (const Tensor* t = v->initializer()) return v->is_graph_input() ? nullptr : t;
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : &it->second;
}

bool ConstantValues::TryInferConstant(const Node& node, const OpDef& def, int64_t opset) {
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (const Value* v : node.inputs()) {
    types.push_back(v ? v->type() : TypeInfo());
    consts.push_back(Find(v));
  }
  OpContext ctx(node, opset, std::move(types), consts, nullptr);
  if (!def.infer(ctx).ok()) return false;
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr && !ctx.output_constants()[i].has_value()) return false;
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) values_[node.output(i)] = *ctx.output_constants()[i];
  }
  return true;
}

ConstantValues ConstantValues::Fold(const Model& model, int64_t max_input_elements) {
  ConstantValues out;
  auto order = TopologicalOrder(*model.graph);
  if (!order.ok()) return out;  // the report says the graph is cyclic elsewhere
  for (const Node* node : *order) {
    if (!node->Subgraphs().empty() || node->num_outputs() == 0) continue;
    const OpDef* def =
        OpRegistry::Global().Find(node->domain, node->op_type, model.OpsetFor(node->domain));
    if (def == nullptr || !def->kernel || def->nondeterministic) continue;
    std::vector<RuntimeValue> inputs(node->num_inputs());
    std::vector<const RuntimeValue*> ptrs(node->num_inputs(), nullptr);
    int64_t elements = 0;
    bool all_known = true;
    for (size_t i = 0; i < node->num_inputs() && all_known; ++i) {
      if (node->input(i) == nullptr) continue;
      const Tensor* t = out.Find(node->input(i));
      if (t == nullptr) {
        all_known = false;
        break;
      }
      elements += t->num_elements();
      inputs[i] = RuntimeValue(*t);
      ptrs[i] = &inputs[i];
    }
    if (!all_known) {
      // Shape and Size of a static activation are known without its data:
      // their inference records the value.
      if (def->infer && out.TryInferConstant(*node, *def, model.OpsetFor(node->domain))) {
        out.folded_.insert(node);
      }
      continue;
    }
    if (elements > max_input_elements) continue;
    KernelContext ctx(*node, model.OpsetFor(node->domain), ptrs);
    if (!def->kernel(ctx).ok()) continue;  // the executor will report it if it matters
    bool all_tensors = true;
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i) != nullptr && !ctx.outputs()[i].is_tensor()) all_tensors = false;
    }
    if (!all_tensors) continue;
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i) != nullptr) out.values_[node->output(i)] = ctx.outputs()[i].tensor;
    }
    out.folded_.insert(node);
  }
  return out;
}

}  // namespace aic::analysis

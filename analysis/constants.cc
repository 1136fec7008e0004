#include "analysis/constants.h"

#include <vector>

#include "ops/evaluate.h"

namespace aic::analysis {

const Tensor* ConstantValues::Find(const Value* v) const {
  if (v == nullptr) return nullptr;
  if (const Tensor* t = v->initializer()) return v->is_graph_input() ? nullptr : t;
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : &it->second;
}

ConstantValues ConstantValues::Fold(const Model& model, const std::vector<Node*>& order,
                                    int64_t max_input_elements) {
  ConstantValues out;
  EvaluateLimits limits;
  limits.max_input_elements = max_input_elements;
  for (const Node* node : order) {
    if (!node->Subgraphs().empty() || node->num_outputs() == 0) continue;
    std::vector<TypeInfo> types;
    std::vector<const Tensor*> values;
    for (const Value* v : node->inputs()) {
      types.push_back(v != nullptr ? v->type() : TypeInfo());
      values.push_back(out.Find(v));
    }
    // Shape and Size of a static activation are known without its data (inference
    // proves them); anything whose inputs are all known runs its reference kernel.
    Evaluation ev = EvaluateNode(*node, model.OpsetFor(node->domain), types, values, limits);
    if (ev.nondeterministic || !ev.AllValuesKnown()) continue;
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      if (node->output(i) != nullptr) out.values_[node->output(i)] = std::move(*ev.values[i]);
    }
    out.folded_.insert(node);
  }
  return out;
}

}  // namespace aic::analysis

#include "analysis/constants.h"

#include <algorithm>
#include <vector>

#include "ops/evaluate.h"

namespace aic::analysis {

const Tensor* ConstantValues::Find(const Value* v) const {
  if (v == nullptr) return nullptr;
  if (const Tensor* t = v->initializer()) return v->is_graph_input() ? nullptr : t;
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : &it->second;
}

std::vector<const Value*> ConstantValues::Origins(const Value* v) const {
  if (v == nullptr || Find(v) == nullptr) return {};
  auto it = origins_.find(v);
  return it == origins_.end() ? std::vector<const Value*>{v} : it->second;
}

namespace {

// Ops whose outputs are their inputs' elements, moved, repeated or converted.
bool MovesElements(const Node& n) {
  static const char* const kOps[] = {"Identity", "Transpose", "Reshape", "Flatten", "Squeeze",
                                     "Unsqueeze", "Slice", "Gather", "Concat", "Split", "Expand",
                                     "Tile", "Cast", "CastLike", "DequantizeLinear"};
  return n.domain.empty() && std::find(std::begin(kOps), std::end(kOps), n.op_type) != std::end(kOps);
}

}  // namespace

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
    // A node without inputs (Constant) is where its value is stored. A value
    // stands for the stored tensors it comes from when the op only moves or
    // converts elements (a weight transposed, cast or dequantized, a table
    // sliced, a class token expanded over the batch) unless it broadcasts a
    // single number (a mask's fill value); after arithmetic, only while it
    // holds no more elements than they do: a rotary table computed from its
    // frequencies, a causal mask from one scalar, are computed constants.
    std::vector<const Value*> origins;
    int64_t origin_elements = 0;
    for (const Value* v : node->inputs()) {
      for (const Value* o : out.Origins(v)) {
        if (std::find(origins.begin(), origins.end(), o) != origins.end()) continue;
        origins.push_back(o);
        origin_elements += out.Find(o)->num_elements();
      }
    }
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Value* y = node->output(i);
      if (y == nullptr) continue;
      bool expanded = ev.values[i]->num_elements() > origin_elements &&
                      (!MovesElements(*node) || origin_elements <= 1);
      out.values_[y] = std::move(*ev.values[i]);
      if (!node->inputs().empty()) {
        out.origins_[y] = expanded ? std::vector<const Value*>{} : origins;
      }
    }
    out.folded_.insert(node);
  }
  return out;
}

}  // namespace aic::analysis

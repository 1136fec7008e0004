#include "analysis/idioms.h"

#include <algorithm>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "graph/clone.h"
#include "analysis/node_facts.h"
#include "rewrite/optimize.h"

namespace aic::analysis {

namespace {

// The rewriter's rules that recognise one op spelled out in several. Not
// the ones that merge layers (Conv+BN, MatMul+Add -> Gemm): the report keeps
// each layer it can name.
const std::set<std::string>& IdiomRules() {
  static const std::set<std::string> rules = {
      "fuse_hard_swish", "fuse_hard_sigmoid_mul", "fuse_hard_sigmoid_into_hard_swish",
      "fuse_swish",      "fuse_gelu",             "fuse_gelu_tanh",
      "fuse_layer_norm", "fuse_layer_norm_by_reciprocal", "fold_affine_into_layer_norm",
      "fuse_rms_norm",   "fold_scale_into_rms_norm",
      // No-op casts between the idiom's nodes (the TorchScript exporter's
      // `.to(float32)` of a float32 value) would hide it.
      "remove_noop_cast"};
  return rules;
}

// The ops those rules emit: a fused node of another type in the copy is
// the rewriter's bookkeeping (a no-op Cast gone), not an idiom.
bool IsIdiomOp(const std::string& op_type) {
  static const std::set<std::string> ops = {"Gelu", "LayerNormalization", "HardSwish", "HardSigmoid",
                                            "Swish", "RMSNormalization"};
  return ops.count(op_type) > 0;
}

}  // namespace

absl::flat_hash_map<const Node*, Idiom> FindIdioms(const Model& model,
                                                   const std::vector<Node*>& order) {
  absl::flat_hash_map<const Node*, Idiom> out;
  std::unique_ptr<Model> copy = CloneModel(model);
  rewrite::OptimizeOptions options;
  options.level = 2;
  options.only_rules = IdiomRules();
  options.aic_ops = rewrite::AllAicOps();  // an op newer than the model's opset still names the idiom
  options.time_budget_s = 10;
  auto stats = rewrite::Optimize(*copy, options);
  if (!stats.ok() || stats->rule_counts.empty()) return out;

  absl::flat_hash_map<std::string, const Value*> value_by_name;
  absl::flat_hash_map<const Value*, std::vector<const Node*>> readers;
  absl::flat_hash_map<const Node*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    position[n] = i;
    for (const Value* v : n->inputs()) {
      if (v != nullptr) readers[v].push_back(n);
    }
    for (const Value* v : n->outputs()) {
      if (v != nullptr) value_by_name[v->name()] = v;
    }
  }
  for (const Value* v : model.graph->inputs()) value_by_name[v->name()] = v;
  for (const Value* v : model.graph->initializers()) value_by_name[v->name()] = v;
  const absl::flat_hash_set<const Value*> graph_outputs(model.graph->outputs().begin(),
                                                        model.graph->outputs().end());

  // A fused node whose output was computed by another op in the original.
  absl::flat_hash_set<const Node*> taken;
  for (const auto& fused : copy->graph->nodes()) {
    if (fused->num_outputs() != 1 || fused->output(0) == nullptr || !IsIdiomOp(fused->op_type)) continue;
    auto root_value = value_by_name.find(fused->output(0)->name());
    if (root_value == value_by_name.end()) continue;
    const Node* root = root_value->second->producer();
    if (root == nullptr || root->op_type == fused->op_type || !position.contains(root)) continue;
    absl::flat_hash_set<const Value*> inputs;
    bool inputs_known = true;
    for (const Value* v : fused->inputs()) {
      // A constant of the copy (a scale the rule folded a gamma into) has no
      // original; the walk below stops at the original's constants anyway.
      if (v == nullptr || v->is_initializer()) continue;
      auto it = value_by_name.find(v->name());
      if (it == value_by_name.end()) {
        inputs_known = false;
        break;
      }
      inputs.insert(it->second);
    }
    if (!inputs_known) continue;
    // The original nodes between the fused node's inputs and the root.
    std::vector<const Node*> members;
    absl::flat_hash_set<const Node*> seen = {root};
    std::vector<const Node*> stack = {root};
    bool bounded = true;
    while (!stack.empty() && bounded) {
      const Node* n = stack.back();
      stack.pop_back();
      members.push_back(n);
      bounded = members.size() <= 64;
      for (const Value* v : n->inputs()) {
        if (v == nullptr || inputs.contains(v) || v->is_initializer() || v->is_graph_input()) continue;
        const Node* p = v->producer();
        if (p == nullptr || !position.contains(p) || !seen.insert(p).second) continue;
        if (p->num_inputs() == 0) continue;  // a Constant: weight plumbing, not a member
        stack.push_back(p);
      }
    }
    if (!bounded || members.size() < 2) continue;
    // A clean idiom: nothing but the root is read outside it, and no node
    // belongs to two.
    absl::flat_hash_set<const Node*> member_set(members.begin(), members.end());
    bool clean = true;
    for (const Node* m : members) {
      clean &= !taken.contains(m);
      if (m == root) continue;
      for (const Value* v : m->outputs()) {
        if (v == nullptr) continue;
        clean &= !graph_outputs.contains(v);
        auto it = readers.find(v);
        if (it == readers.end()) continue;
        for (const Node* r : it->second) clean &= member_set.contains(r);
      }
    }
    if (!clean) continue;
    std::sort(members.begin(), members.end(),
              [&](const Node* a, const Node* b) { return position[a] < position[b]; });
    for (const Node* m : members) taken.insert(m);
    Traits traits = FactsOf(*copy, *fused, [](const Value* v) { return v->initializer(); }).traits;
    out[root] = Idiom{fused->op_type, std::move(traits), std::move(members)};
  }
  return out;
}

}  // namespace aic::analysis

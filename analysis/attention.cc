#include "analysis/attention.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace aic::analysis {

std::optional<AttentionMatch> MatchAttention(
    const Model& model, const Node& softmax, const ConstantValues& constants,
    const absl::flat_hash_map<const Value*, std::vector<const Node*>>& readers,
    const absl::flat_hash_set<const Value*>& graph_outputs) {
  auto only_reader = [&](const Value* v) -> const Node* {
    if (v == nullptr || graph_outputs.contains(v)) return nullptr;
    auto it = readers.find(v);
    return it != readers.end() && it->second.size() == 1 ? it->second[0] : nullptr;
  };
  auto producer = [&](const Value* v) -> const Node* {
    const Node* p = v != nullptr ? v->producer() : nullptr;
    return p != nullptr && p->domain.empty() && !constants.IsFolded(p) ? p : nullptr;
  };
  auto constant_operand = [&](const Node& n, const Value* data) {
    const Value* other = n.input(0) == data ? n.input(1) : n.input(0);
    const Tensor* t = constants.Find(other);
    return t != nullptr && t->num_elements() == 1;
  };
  if (softmax.op_type != "Softmax" || !softmax.domain.empty() || softmax.input(0) == nullptr ||
      !softmax.input(0)->shape().has_rank()) {
    return std::nullopt;
  }
  // Per query: the last axis. Before opset 13 Softmax flattens from `axis`
  // on (default 1), which is per query only when that is the last axis.
  const int64_t rank = softmax.input(0)->shape().rank();
  int64_t axis = softmax.GetInt("axis", model.OpsetFor("") >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::nullopt;
  // From the softmax back to the scores' MatMul: masks and biases added
  // (a relative-position bias, a shifted window's mask between reshapes),
  // a constant scale.
  std::vector<const Node*> before;
  const Node* cur = producer(softmax.input(0));
  for (int step = 0; step < 8 && cur != nullptr && only_reader(cur->output(0)) != nullptr; ++step) {
    if (cur->op_type == "Add") {
      before.push_back(cur);
      const Node* pa = producer(cur->input(0));
      bool first_is_scores = pa != nullptr && (pa->op_type == "MatMul" || pa->op_type == "Mul" ||
                                               pa->op_type == "Div" || pa->op_type == "Add" ||
                                               pa->op_type == "Reshape");
      cur = producer(first_is_scores ? cur->input(0) : cur->input(1));
    } else if (cur->op_type == "Reshape") {
      before.push_back(cur);
      cur = producer(cur->input(0));
    } else if ((cur->op_type == "Mul" || cur->op_type == "Div") && constant_operand(*cur, cur->input(0))) {
      before.push_back(cur);
      cur = producer(cur->input(0));
    } else {
      break;
    }
  }
  if (cur == nullptr || cur->op_type != "MatMul" || only_reader(cur->output(0)) == nullptr) return std::nullopt;
  const Node* scores = cur;
  before.push_back(scores);
  const Node* kt = producer(scores->input(1));
  if (kt != nullptr && kt->op_type == "Transpose" && only_reader(kt->output(0)) == scores) before.push_back(kt);
  // After: the NaN guard, then the product with V.
  std::vector<const Node*> after;
  const Value* probs = softmax.output(0);
  auto it = readers.find(probs);
  if (it == readers.end() || graph_outputs.contains(probs)) return std::nullopt;
  const Node* isnan = nullptr;
  const Node* where = nullptr;
  for (const Node* r : it->second) {
    if (r->op_type == "IsNaN") isnan = r;
    if (r->op_type == "Where") where = r;
  }
  auto is_zero = [&](const Value* v) {
    const Tensor* t = constants.Find(v);
    return t != nullptr && t->num_elements() == 1 && t->ElementAsDouble(0) == 0.0;
  };
  if (it->second.size() == 2 && isnan != nullptr && where != nullptr && where->input(0) == isnan->output(0) &&
      is_zero(where->input(1)) && where->input(2) == probs && only_reader(isnan->output(0)) == where) {
    after = {isnan, where};
    probs = where->output(0);
  } else if (it->second.size() != 1) {
    return std::nullopt;
  }
  const Node* mix = only_reader(probs);
  if (mix == nullptr || mix->op_type != "MatMul" || mix->input(0) != probs) return std::nullopt;
  after.push_back(mix);
  AttentionMatch m;
  m.members.assign(before.rbegin(), before.rend());
  m.members.push_back(&softmax);
  m.members.insert(m.members.end(), after.begin(), after.end());
  // Heads and sizes from Q [.., H, S_q, D] and V [.., H, S_kv, D_v].
  const Shape& q = scores->input(0)->shape();
  const Shape& v = mix->input(1)->shape();
  Traits& t = m.traits;
  t.semantic_name = "Attention";
  t.meaning = "y = softmax(Q·Kᵀ·scale + mask)·V";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kReduces;
  std::string sizes;
  if (q.has_rank() && q.rank() >= 3 && v.has_rank() && v.rank() >= 2) {
    const auto& qd = q.dims();
    const auto& vd = v.dims();
    sizes = absl::StrCat(q.rank() >= 4 ? absl::StrCat(qd[qd.size() - 3].ToString(), " heads, ") : "",
                         qd[qd.size() - 2].ToString(), " queries over ", vd[vd.size() - 2].ToString(),
                         " keys, head size ", qd.back().ToString());
  }
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = sizes;
  t.collapse_how = absl::StrCat("each query's softmax over the keys: the output mixes the value rows by "
                                "weights that sum to one", sizes.empty() ? "" : " (", sizes,
                                sizes.empty() ? "" : ")");
  return m;
}

}  // namespace aic::analysis

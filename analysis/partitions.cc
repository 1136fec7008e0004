#include "analysis/partitions.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ops/tensor/slice_params.h"

namespace aic::analysis {

namespace {

// One piece of a tensor cut along one axis: the indices begin, begin + step,
// ... (count of them) along `axis`.
struct Piece {
  const Value* source = nullptr;
  int64_t axis = 0;
  int64_t begin = 0, step = 1, count = 0;
};

std::optional<std::vector<int64_t>> IntsOf(const ConstantValues& constants, const Value* v) {
  const Tensor* t = constants.Find(v);
  if (t == nullptr || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return std::nullopt;
  std::vector<int64_t> out;  // exactly: Slice ends are often INT64_MAX, which a double cannot hold
  for (int64_t k = 0; k < t->num_elements(); ++k) {
    out.push_back(t->dtype() == DType::kInt64 ? t->data<int64_t>()[k] : t->data<int32_t>()[k]);
  }
  return out;
}

std::optional<Piece> PieceOf(const Model& model, const Node& n, const ConstantValues& constants) {
  const Value* x = n.input(0);
  if (x == nullptr || !n.domain.empty() || constants.Find(x) != nullptr || !x->shape().has_rank()) {
    return std::nullopt;
  }
  const Shape& shape = x->shape();
  const int64_t rank = shape.rank();
  auto dim_of = [&](int64_t axis) -> std::optional<int64_t> {
    if (axis < 0 || axis >= rank || !shape.dims()[axis].is_value()) return std::nullopt;
    return shape.dims()[axis].value();
  };
  Piece p;
  p.source = x;
  if (n.op_type == "Gather" && n.num_inputs() == 2) {
    p.axis = n.GetInt("axis", 0);
    if (p.axis < 0) p.axis += rank;
    auto dim = dim_of(p.axis);
    auto idx = IntsOf(constants, n.input(1));
    if (!dim || !idx || idx->empty()) return std::nullopt;
    for (int64_t& i : *idx) {
      if (i < -*dim || i >= *dim) return std::nullopt;  // out of range: the model is wrong, not a cut
      if (i < 0) i += *dim;
    }
    for (size_t k = 1; k < idx->size(); ++k) {
      if ((*idx)[k] != (*idx)[k - 1] + 1) return std::nullopt;
    }
    p.begin = idx->front();
    p.count = static_cast<int64_t>(idx->size());
    return p;
  }
  if (n.op_type != "Slice") return std::nullopt;
  auto params = SliceParamsOf(n, model.OpsetFor(n.domain), rank,
                              [&](size_t i) { return IntsOf(constants, n.input(i)); });
  if (!params.ok() || !params->has_value()) return std::nullopt;
  const SliceParams& sp = **params;
  if (sp.axes.size() != 1 || sp.steps[0] < 1) return std::nullopt;
  p.axis = sp.axes[0];
  auto dim = dim_of(p.axis);
  if (!dim) return std::nullopt;
  AxisRange r = ClampSlice(sp.starts[0], sp.ends[0], sp.steps[0], *dim);
  p.begin = r.start;
  p.step = r.step;
  p.count = r.count;
  return p;
}

}  // namespace

absl::flat_hash_map<const Node*, std::vector<const Node*>> Partitions(
    const Model& model, const std::vector<Node*>& order, const ConstantValues& constants) {
  std::map<std::pair<const Value*, int64_t>, std::vector<std::pair<const Node*, Piece>>> cuts;
  for (const Node* n : order) {
    if (constants.IsFolded(n)) continue;
    if (auto p = PieceOf(model, *n, constants)) cuts[{p->source, p->axis}].push_back({n, *p});
  }
  absl::flat_hash_map<const Node*, std::vector<const Node*>> out;
  for (auto& [key, pieces] : cuts) {
    if (pieces.size() < 2) continue;
    int64_t dim = key.first->shape().dims()[key.second].value();
    if (dim > (int64_t{1} << 20)) continue;
    std::vector<bool> covered(static_cast<size_t>(dim), false);
    for (const auto& [n, p] : pieces) {
      for (int64_t k = 0, i = p.begin; k < p.count; ++k, i += p.step) {
        if (i >= 0 && i < dim) covered[static_cast<size_t>(i)] = true;
      }
    }
    if (std::find(covered.begin(), covered.end(), false) != covered.end()) continue;
    std::vector<const Node*> members;
    for (const auto& [n, p] : pieces) members.push_back(n);  // in execution order
    out[members.front()] = std::move(members);
  }
  return out;
}

Traits PartitionTraits(size_t pieces) {
  Traits t;
  t.semantic_name = "Split";
  t.meaning = absl::StrCat("y₀ … y", pieces - 1, " = parts of x along one axis that cover all of it");
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kInvertible;
  t.collapse = CollapseKind::kNone;
  t.effect = RepresentationEffect::kPreserves;
  return t;
}

}  // namespace aic::analysis

#include "ops/ml/tree_walk.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace aic {

absl::Status ValidateForest(Forest& f) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  const int64_t n = static_cast<int64_t>(f.nodes.size());
  const int64_t weights = static_cast<int64_t>(f.weights.size());
  if (f.n_targets <= 0) return fail("the number of targets or classes must be positive, got ", f.n_targets);
  f.max_feature = -1;
  for (int64_t i = 0; i < n; ++i) {
    const TreeNode& t = f.nodes[static_cast<size_t>(i)];
    if (t.mode == NodeMode::kLeaf) {
      if (t.weight_count <= 0) return fail("leaf node ", i, " has no weight");
      if (t.first_weight < 0 || t.first_weight + t.weight_count > weights) {
        return fail("leaf node ", i, " has weights out of range");
      }
      continue;
    }
    if (t.feature < 0) return fail("node ", i, " reads feature ", t.feature);
    f.max_feature = std::max(f.max_feature, t.feature);
    for (int64_t child : {t.true_child, t.false_child}) {
      if (child < 0 || child >= n) return fail("node ", i, " branches to ", child, ", out of range");
      if (child == i) return fail("node ", i, " branches to itself");
    }
  }
  for (const LeafWeight& w : f.weights) {
    if (w.target < 0 || w.target >= f.n_targets) {
      return fail("leaf weight for target ", w.target, " out of range for ", f.n_targets, " targets");
    }
  }
  if (f.roots.empty()) return fail("the ensemble has no trees");
  for (int64_t root : f.roots) {
    if (root < 0 || root >= n) return fail("tree root ", root, " out of range");
  }
  return absl::OkStatus();
}

namespace {

bool TakesTrue(const TreeNode& t, double x) {
  if (std::isnan(x) && t.missing_true) return true;
  switch (t.mode) {
    case NodeMode::kLeq: return x <= t.split;
    case NodeMode::kLt: return x < t.split;
    case NodeMode::kGte: return x >= t.split;
    case NodeMode::kGt: return x > t.split;
    case NodeMode::kEq: return x == t.split;
    case NodeMode::kNeq: return x != t.split;
    case NodeMode::kMember: return std::find(t.members.begin(), t.members.end(), x) != t.members.end();
    case NodeMode::kLeaf: return false;
  }
  return false;
}

}  // namespace

absl::StatusOr<int64_t> FindLeaf(const Forest& f, int64_t root, const double* row) {
  int64_t at = root;
  // A walk longer than the node count has revisited a node: a cycle.
  for (size_t steps = 0; steps <= f.nodes.size(); ++steps) {
    const TreeNode& t = f.nodes[static_cast<size_t>(at)];
    if (t.mode == NodeMode::kLeaf) return at;
    at = TakesTrue(t, row[t.feature]) ? t.true_child : t.false_child;
  }
  return absl::InvalidArgumentError(absl::StrCat("the tree at root ", root, " has a cycle"));
}

absl::Status ScoreRow(const Forest& f, Aggregate agg, const double* row, TargetScores& out) {
  out.value.assign(static_cast<size_t>(f.n_targets), 0.0);
  out.has.assign(static_cast<size_t>(f.n_targets), 0);
  for (int64_t root : f.roots) {
    absl::StatusOr<int64_t> leaf = FindLeaf(f, root, row);
    if (!leaf.ok()) return leaf.status();
    const TreeNode& t = f.nodes[static_cast<size_t>(*leaf)];
    const int64_t count = f.n_targets == 1 ? 1 : t.weight_count;
    for (int64_t k = 0; k < count; ++k) {
      const LeafWeight& w = f.weights[static_cast<size_t>(t.first_weight + k)];
      double& v = out.value[static_cast<size_t>(w.target)];
      char& has = out.has[static_cast<size_t>(w.target)];
      switch (agg) {
        case Aggregate::kAverage:
        case Aggregate::kSum: v += w.value; break;
        case Aggregate::kMin: v = has ? std::min(v, w.value) : w.value; break;
        case Aggregate::kMax: v = has ? std::max(v, w.value) : w.value; break;
      }
      has = 1;
    }
  }
  return absl::OkStatus();
}

void FinishRegression(const Forest& f, Aggregate agg, const std::vector<double>& base, const TargetScores& s,
                      double* out) {
  const double trees = static_cast<double>(f.roots.size());
  if (f.n_targets == 1) {
    double v = s.at(0);
    if (agg == Aggregate::kAverage) v /= trees;
    out[0] = v + (base.size() == 1 ? base[0] : 0.0);
    return;
  }
  const bool use_base = static_cast<int64_t>(base.size()) == f.n_targets;
  for (int64_t t = 0; t < f.n_targets; ++t) {
    if (!s.has[static_cast<size_t>(t)]) {
      out[t] = 0;
      continue;
    }
    double v = s.value[static_cast<size_t>(t)];
    if (agg == Aggregate::kAverage) v /= trees;
    out[t] = v + (use_base ? base[static_cast<size_t>(t)] : 0.0);
  }
}

}  // namespace aic

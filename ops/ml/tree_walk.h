// Decision forests, shared by TreeEnsemble (opset 5, tree_ensemble.cc) and
// the classic TreeEnsembleClassifier / TreeEnsembleRegressor
// (tree_ensemble_classic.cc): each decodes its attributes into one Forest,
// checked once (ValidateForest) before any row is walked, so that a malformed
// model fails with a message instead of reading out of range. Then a row walks
// every tree to one leaf (FindLeaf) and the leaves' weights join their targets
// by the aggregate function (ScoreRow), the way ONNX Runtime does it: a
// target that no reached leaf names has no score (it reads as 0), and
// MIN / MAX start from the first weight rather than from ±∞.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/op_context.h"
#include "ops/traits.h"

namespace aic {

// BRANCH_LEQ ... BRANCH_NEQ compare x[feature] with the split; BRANCH_MEMBER
// (opset 5) tests membership in a set.
enum class NodeMode : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };

struct TreeNode {
  NodeMode mode = NodeMode::kLeaf;
  int64_t feature = 0;
  double split = 0;
  std::vector<double> members;  // kMember only
  bool missing_true = false;    // a NaN feature takes the true branch
  int64_t true_child = -1;      // interior nodes: indices into Forest::nodes
  int64_t false_child = -1;
  int64_t first_weight = 0;     // leaves: Forest::weights[first, first + count)
  int64_t weight_count = 0;
};

struct LeafWeight {
  int64_t target = 0;
  double value = 0;
};

struct Forest {
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;  // one per tree
  std::vector<LeafWeight> weights;
  int64_t n_targets = 0;
  int64_t max_feature = -1;  // set by ValidateForest
};

// Children, roots and weight ranges in range, targets below n_targets, every
// leaf with a weight; sets max_feature.
absl::Status ValidateForest(Forest& f);

// The leaf (a node index) a row reaches from `root`; an error on a cycle.
absl::StatusOr<int64_t> FindLeaf(const Forest& f, int64_t root, const double* row);

enum class Aggregate : uint8_t { kAverage, kSum, kMin, kMax };

// One row's per-target result; value is meaningful where has is set.
struct TargetScores {
  std::vector<double> value;
  std::vector<char> has;
  double at(int64_t t) const { return has[static_cast<size_t>(t)] ? value[static_cast<size_t>(t)] : 0.0; }
};

// Walks every tree for `row` (of at least max_feature + 1 features) and
// aggregates the reached leaves' weights (AVERAGE sums here; the caller
// divides). With one target only the first weight of each leaf counts, as in
// ORT's single-target path.
absl::Status ScoreRow(const Forest& f, Aggregate agg, const double* row, TargetScores& out);

// A regressor's row as ORT finishes it (TreeEnsembleRegressor, TreeEnsemble):
// AVERAGE divides by the tree count, then base values are added (one per
// target, or a single one for a single target). A target no leaf reached
// stays 0 when there are several. No post transform.
void FinishRegression(const Forest& f, Aggregate agg, const std::vector<double>& base, const TargetScores& s,
                      double* out);

// Traits and cost of the three tree ops: the forest is known from the
// attributes, so the cost counts one comparison per node per row.
Traits TreeEnsembleTraits(const OpContext& ctx);
Cost TreeEnsembleCost(const OpContext& ctx);

}  // namespace aic

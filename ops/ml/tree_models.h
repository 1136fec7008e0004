// The three tree ensembles decoded from their attributes, and how one row's
// aggregated leaf scores (tree_walk.h's TargetScores) become the op's
// outputs: TreeEnsembleClassifier / TreeEnsembleRegressor (ml opsets 1 and
// 3, tree_ensemble_classic.cc) and TreeEnsemble (ml opset 5,
// tree_ensemble.cc). The reference kernels and the CPU backend's lowering
// (exec/cpu/ops_native_ml.cc) both go through these functions, so the ONNX
// Runtime conventions written down here (binary score columns, literal
// labels, which targets a transform touches) live in one place; the backend
// only walks the trees faster.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/tree_walk.h"

namespace aic {

// ---- TreeEnsembleRegressor / TreeEnsembleClassifier (classic) ----

struct ClassicForest {
  Forest forest;
  std::vector<double> base;
  PostTransform post = PostTransform::kNone;
  Aggregate aggregate = Aggregate::kSum;
  std::vector<double> raw_weights;  // in attribute order, leaves or not
  std::vector<int64_t> raw_targets;
};

absl::StatusOr<ClassicForest> DecodeTreeRegressor(const Node& node, int64_t opset);
// One row of a TreeEnsembleRegressor: `out` gets n_targets values.
void FinishTreeRegressorRow(const ClassicForest& c, const TargetScores& s, double* out);

struct TreeClassifier {
  ClassicForest c;
  ClassLabels labels;
  bool binary_case = false;      // two classes, weights for only one of them
  bool weights_positive = true;  // every class weight ≥ 0
};

// Unimplemented for a single string label (ONNX Runtime indexes past it).
absl::StatusOr<TreeClassifier> DecodeTreeClassifier(const Node& node, int64_t opset);

// One row's label: a class index, or (ORT's fallback when no class is
// singled out) the literal label 0 or 1.
struct TreeClassifierPick {
  int64_t pick = 0;
  bool literal = false;
};

// Finishes one row (its sums aggregated by Aggregate::kSum; `s` is updated
// in place): `z` gets max(classes, 2) scores, the first `classes` of which
// are the op's.
TreeClassifierPick FinishTreeClassifierRow(const TreeClassifier& k, TargetScores& s, double* z);
// The int64 label of a row (int labels only): a literal 0 / 1 is the label
// itself. String labels name labels.names[pick] (ORT keeps literals as indices there).
int64_t TreeClassifierIntLabel(const TreeClassifier& k, TreeClassifierPick p);

// ---- TreeEnsemble (ml opset 5) ----

struct TreeEnsembleModel {
  Forest forest;
  Aggregate aggregate = Aggregate::kSum;
  PostTransform post = PostTransform::kNone;
};

absl::StatusOr<TreeEnsembleModel> DecodeTreeEnsemble(const Node& node);
// One row: `out` gets n_targets values.
void FinishTreeEnsembleRow(const TreeEnsembleModel& e, const TargetScores& s, double* out);

}  // namespace aic

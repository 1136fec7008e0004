// TreeEnsemble (ai.onnx.ml opset 5): a forest of decision trees over X
// [N, F] giving Y [N, n_targets] of X's dtype. Interior nodes are the
// parallel nodes_* attributes (compare feature against split, or test set
// membership), leaves the parallel leaf_* ones. The encoding is decoded into
// the shared Forest (tree_walk.h), whose walk and aggregation the classic
// TreeEnsembleRegressor uses too; only the post transform differs: here it
// follows the ONNX numbering and applies to a single target as well.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/tree_models.h"
#include "ops/ml/tree_walk.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

std::vector<double> TensorAttr(const Node& node, const char* name) {
  const Attribute* a = node.FindAttr(name);
  if (a == nullptr || a->type != AttrType::kTensor) return {};
  return ToDoubles(a->t);
}

}  // namespace

absl::StatusOr<TreeEnsembleModel> DecodeTreeEnsemble(const Node& node) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  TreeEnsembleModel e;
  Forest& f = e.forest;
  f.n_targets = node.GetInt("n_targets", 0);
  const int64_t agg = node.GetInt("aggregate_function", 1);
  if (agg < 0 || agg > 3) return fail("aggregate_function ", agg, " is not one of 0..3");
  e.aggregate = static_cast<Aggregate>(agg);  // 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX, as in the enum
  AIC_ASSIGN_OR_RETURN(e.post, PostTransformFromInt(node.GetInt("post_transform", 0)));
  const std::vector<double> modes = TensorAttr(node, "nodes_modes"), splits = TensorAttr(node, "nodes_splits");
  const std::vector<int64_t> features = node.GetInts("nodes_featureids");
  const std::vector<int64_t> true_ids = node.GetInts("nodes_truenodeids"), false_ids = node.GetInts("nodes_falsenodeids");
  const std::vector<int64_t> true_leaf = node.GetInts("nodes_trueleafs"), false_leaf = node.GetInts("nodes_falseleafs");
  const std::vector<int64_t> missing = node.GetInts("nodes_missing_value_tracks_true");
  const size_t n = modes.size();
  for (size_t size : {splits.size(), features.size(), true_ids.size(), false_ids.size(), true_leaf.size(), false_leaf.size()}) {
    if (size != n) return fail("the nodes_* attributes must all have ", n, " entries");
  }
  if (!missing.empty() && missing.size() != n) return fail("nodes_missing_value_tracks_true must have ", n, " entries");
  const std::vector<double> leaf_weight = TensorAttr(node, "leaf_weights");
  const std::vector<int64_t> leaf_target = node.GetInts("leaf_targetids");
  if (leaf_weight.size() != leaf_target.size()) return fail("leaf_weights and leaf_targetids differ in length");
  // Members of each BRANCH_MEMBER node, in node order, each set ended by NaN.
  const std::vector<double> members = TensorAttr(node, "membership_values");
  size_t next_member = 0;
  const int64_t leaves = static_cast<int64_t>(leaf_weight.size());
  // Interior nodes keep their indices; leaf j becomes node n + j.
  for (size_t i = 0; i < n; ++i) {
    if (modes[i] < 0 || modes[i] > 6) return fail("node ", i, " has mode ", modes[i]);
    TreeNode t;
    t.mode = static_cast<NodeMode>(static_cast<int>(modes[i]));
    t.feature = features[i];
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    int64_t* child[2] = {&t.false_child, &t.true_child};
    const int64_t ids[2] = {false_ids[i], true_ids[i]};
    const bool is_leaf[2] = {false_leaf[i] != 0, true_leaf[i] != 0};
    for (int b = 0; b < 2; ++b) {
      const int64_t limit = is_leaf[b] ? leaves : static_cast<int64_t>(n);
      if (ids[b] < 0 || ids[b] >= limit) return fail("node ", i, " branches to ", ids[b], ", out of range");
      *child[b] = is_leaf[b] ? static_cast<int64_t>(n) + ids[b] : ids[b];
    }
    if (t.mode == NodeMode::kMember) {
      while (next_member < members.size() && !std::isnan(members[next_member])) t.members.push_back(members[next_member++]);
      if (next_member >= members.size()) return fail("membership_values has fewer sets than BRANCH_MEMBER nodes");
      ++next_member;  // the NaN
    }
    f.nodes.push_back(std::move(t));
  }
  for (int64_t j = 0; j < leaves; ++j) {
    TreeNode leaf;
    leaf.first_weight = j;
    leaf.weight_count = 1;
    f.nodes.push_back(leaf);
    f.weights.push_back({leaf_target[static_cast<size_t>(j)], leaf_weight[static_cast<size_t>(j)]});
  }
  for (int64_t root : node.GetInts("tree_roots")) {
    if (root < 0 || root >= static_cast<int64_t>(n)) return fail("tree root ", root, " out of range");
    f.roots.push_back(root);
  }
  AIC_RETURN_IF_ERROR(ValidateForest(f));
  return e;
}

void FinishTreeEnsembleRow(const TreeEnsembleModel& e, const TargetScores& s, double* out) {
  FinishRegression(e.forest, e.aggregate, {}, s, out);
  ApplyPostTransform(e.post, out, e.forest.n_targets);
}

namespace {

absl::Status TreeEnsembleKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& x = ctx.input(0);
  if (!IsRealFloat(x.dtype())) return ctx.Error("X must be float, double or float16, got ", DTypeName(x.dtype()));
  absl::StatusOr<TreeEnsembleModel> e = DecodeTreeEnsemble(ctx.node());
  if (!e.ok()) return ctx.Error(e.status().message());
  const Forest& f = e->forest;
  if (x.rank() > 2) return ctx.Error("X must be [N, F], got ", DimsToString(x.dims()));
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t features = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  if (f.max_feature >= features) return ctx.Error("a node reads feature ", f.max_feature, " of ", features);
  const std::vector<double> xs = ToDoubles(x);
  std::vector<double> y(static_cast<size_t>(rows * f.n_targets));
  TargetScores scores;
  for (int64_t r = 0; r < rows; ++r) {
    double* out = y.data() + r * f.n_targets;
    absl::Status s = ScoreRow(f, e->aggregate, xs.data() + r * features, scores);
    if (!s.ok()) return ctx.Error(s.message());
    FinishTreeEnsembleRow(*e, scores, out);
  }
  ctx.set_output(0, FromDoubles(y, {rows, f.n_targets}, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferTreeEnsemble(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "X"));
  absl::StatusOr<TreeEnsembleModel> e = DecodeTreeEnsemble(ctx.node());
  if (!e.ok()) return ctx.Error(e.status().message());
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() > 2) return ctx.Error("X must be [N, F], got ", x.ToString());
  Dim rows = !x.has_rank() ? ctx.FreshDim() : x.rank() == 2 ? x[0] : Dim(1);
  ctx.set_output(0, ctx.input_dtype(0), Shape({rows, Dim(e->forest.n_targets)}));
  return absl::OkStatus();
}

}  // namespace

Traits TreeEnsembleTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = ctx.node().op_type;
  t.meaning = "y[t] = aggregate of the leaf weights each tree reaches for target t";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kQuantizes;
  t.collapse_how = "each tree maps a region of feature space to one leaf";
  t.trainable = true;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

// One comparison per tree level; the depth is unknown, so count the nodes.
Cost TreeEnsembleCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& x = ctx.input_shape(0);
  const int64_t nodes = static_cast<int64_t>(ctx.node().GetInts("nodes_featureids").size());
  if (!x.IsStatic() || x.rank() == 0 || nodes == 0) return c;
  const int64_t rows = x.rank() == 2 ? x[0].value() : 1;
  c.flops = rows * nodes;
  c.params = nodes;
  return c;
}

void RegisterTreeEnsembleOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "TreeEnsemble",
      .since_version = 5,
      .infer = InferTreeEnsemble,
      .traits = TreeEnsembleTraits,
      .cost = TreeEnsembleCost,
      .kernel = TreeEnsembleKernel,
  });
}

}  // namespace aic

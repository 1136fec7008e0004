// The classic tree ensembles, TreeEnsembleClassifier and
// TreeEnsembleRegressor (ai.onnx.ml opsets 1 and 3; opset 3 adds the
// *_as_tensor attributes that carry double thresholds and weights). Nodes are
// (tree id, node id) tuples with LEAF nodes among them, and weights name their
// leaf by the same pair; both decode into the shared Forest (tree_walk.h).
//
// The classifier finishes its scores the way ONNX Runtime does, which is what
// scikit-learn models are converted for: with two classes of which only one
// carries weights (skl2onnx's binary forests and boosters), the single score
// expands to two columns and the label depends on whether all weights are
// positive (a probability, threshold 0.5) or not (a margin, threshold 0).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/tree_models.h"
#include "ops/ml/tree_walk.h"
#include "ops/tensor/tensor_util.h"

namespace aic {

namespace {

absl::StatusOr<NodeMode> ParseMode(const std::string& s) {
  static const std::map<std::string, NodeMode> kModes = {
      {"BRANCH_LEQ", NodeMode::kLeq}, {"BRANCH_LT", NodeMode::kLt},   {"BRANCH_GTE", NodeMode::kGte},
      {"BRANCH_GT", NodeMode::kGt},   {"BRANCH_EQ", NodeMode::kEq},   {"BRANCH_NEQ", NodeMode::kNeq},
      {"LEAF", NodeMode::kLeaf}};
  auto it = kModes.find(s);
  if (it == kModes.end()) return absl::InvalidArgumentError(absl::StrCat("node mode '", s, "' is unknown"));
  return it->second;
}

// `prefix` names the weight attributes: "target" (regressor) or "class".
absl::StatusOr<ClassicForest> DecodeClassicForest(const Node& node, int64_t opset, const std::string& prefix,
                                                  int64_t n_targets) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  if (opset < 3) {
    for (const Attribute& a : node.attributes) {
      if (a.name.ends_with("_as_tensor")) return fail(a.name, " needs ai.onnx.ml opset 3, the model imports ", opset);
    }
  }
  ClassicForest c;
  AIC_ASSIGN_OR_RETURN(c.post, ParsePostTransform(node.GetString("post_transform", "NONE")));
  AIC_ASSIGN_OR_RETURN(c.base, FloatsOrTensor(node, "base_values"));
  const std::vector<int64_t> tree_ids = node.GetInts("nodes_treeids"), node_ids = node.GetInts("nodes_nodeids");
  const std::vector<int64_t> features = node.GetInts("nodes_featureids");
  const std::vector<int64_t> true_ids = node.GetInts("nodes_truenodeids"), false_ids = node.GetInts("nodes_falsenodeids");
  const std::vector<int64_t> missing = node.GetInts("nodes_missing_value_tracks_true");
  const Attribute* modes = node.FindAttr("nodes_modes");
  AIC_ASSIGN_OR_RETURN(std::vector<double> values, FloatsOrTensor(node, "nodes_values"));
  const size_t n = tree_ids.size();
  if (modes == nullptr || modes->type != AttrType::kStrings) return fail("nodes_modes must be a list of strings");
  for (size_t size : {node_ids.size(), features.size(), true_ids.size(), false_ids.size(), modes->strings.size(),
                      values.size()}) {
    if (size != n) return fail("the nodes_* attributes must all have ", n, " entries");
  }
  if (!missing.empty() && missing.size() != n) return fail("nodes_missing_value_tracks_true must have ", n, " entries");
  Forest& f = c.forest;
  f.n_targets = n_targets;
  std::map<std::pair<int64_t, int64_t>, int64_t> index;  // (tree, node) -> node index
  std::set<int64_t> trees;
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second) {
      return fail("node ", node_ids[i], " of tree ", tree_ids[i], " appears twice");
    }
    // A tree's root is its first node; trees keep the order they first appear in.
    if (trees.insert(tree_ids[i]).second) f.roots.push_back(static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    TreeNode t;
    AIC_ASSIGN_OR_RETURN(t.mode, ParseMode(modes->strings[i]));
    t.feature = features[i];
    t.split = values[i];
    t.missing_true = !missing.empty() && missing[i] == 1;
    if (t.mode != NodeMode::kLeaf) {
      for (auto [id, child] : {std::make_pair(true_ids[i], &t.true_child), std::make_pair(false_ids[i], &t.false_child)}) {
        auto it = index.find({tree_ids[i], id});
        if (it == index.end()) return fail("node ", node_ids[i], " of tree ", tree_ids[i], " branches to missing node ", id);
        *child = it->second;
      }
    }
    f.nodes.push_back(std::move(t));
  }
  const std::vector<int64_t> w_tree = node.GetInts(prefix + "_treeids"), w_node = node.GetInts(prefix + "_nodeids");
  c.raw_targets = node.GetInts(prefix + "_ids");
  AIC_ASSIGN_OR_RETURN(c.raw_weights, FloatsOrTensor(node, prefix + "_weights"));
  const size_t nw = c.raw_targets.size();
  if (w_tree.size() != nw || w_node.size() != nw || c.raw_weights.size() != nw) {
    return fail("the ", prefix, "_* attributes must all have ", nw, " entries");
  }
  std::vector<std::vector<LeafWeight>> per_node(n);
  for (size_t i = 0; i < nw; ++i) {
    auto it = index.find({w_tree[i], w_node[i]});
    if (it == index.end()) return fail(prefix, " weight ", i, " names missing node ", w_node[i], " of tree ", w_tree[i]);
    // Weights on interior nodes are ignored, as ORT does (older converters wrote them).
    if (f.nodes[static_cast<size_t>(it->second)].mode != NodeMode::kLeaf) continue;
    per_node[static_cast<size_t>(it->second)].push_back({c.raw_targets[i], c.raw_weights[i]});
  }
  for (size_t i = 0; i < n; ++i) {
    f.nodes[i].first_weight = static_cast<int64_t>(f.weights.size());
    f.nodes[i].weight_count = static_cast<int64_t>(per_node[i].size());
    f.weights.insert(f.weights.end(), per_node[i].begin(), per_node[i].end());
  }
  AIC_RETURN_IF_ERROR(ValidateForest(f));
  return c;
}

absl::StatusOr<FeatureRows> ReadRowsFor(const KernelContext& ctx, const Forest& f) {
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  if (f.max_feature >= x.features) return ctx.Error("a node reads feature ", f.max_feature, " of ", x.features);
  return x;
}

// ---- TreeEnsembleRegressor ----

absl::StatusOr<Aggregate> ParseAggregate(const std::string& s) {
  if (s == "AVERAGE") return Aggregate::kAverage;
  if (s == "SUM") return Aggregate::kSum;
  if (s == "MIN") return Aggregate::kMin;
  if (s == "MAX") return Aggregate::kMax;
  return absl::InvalidArgumentError(absl::StrCat("aggregate_function '", s, "' is not one of AVERAGE, SUM, MIN, MAX"));
}

}  // namespace

absl::StatusOr<ClassicForest> DecodeTreeRegressor(const Node& node, int64_t opset) {
  AIC_ASSIGN_OR_RETURN(ClassicForest c, DecodeClassicForest(node, opset, "target", node.GetInt("n_targets", 0)));
  AIC_ASSIGN_OR_RETURN(c.aggregate, ParseAggregate(node.GetString("aggregate_function", "SUM")));
  if (!c.base.empty() && static_cast<int64_t>(c.base.size()) != c.forest.n_targets) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.base.size(), " base_values for ", c.forest.n_targets, " targets"));
  }
  return c;
}

void FinishTreeRegressorRow(const ClassicForest& c, const TargetScores& s, double* out) {
  const Forest& f = c.forest;
  FinishRegression(f, c.aggregate, c.base, s, out);
  // ORT transforms a single target only by PROBIT.
  if (f.n_targets > 1 || c.post == PostTransform::kProbit) ApplyPostTransform(c.post, out, f.n_targets);
}

namespace {

absl::Status InferRegressor(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<ClassicForest> c = DecodeTreeRegressor(ctx.node(), ctx.opset());
  if (!c.ok()) return ctx.Error(c.status().message());
  ctx.set_output(0, DType::kFloat, Shape({RowsDim(ctx), Dim(c->forest.n_targets)}));
  return absl::OkStatus();
}

absl::Status RegressorKernel(KernelContext& ctx) {
  absl::StatusOr<ClassicForest> c = DecodeTreeRegressor(ctx.node(), ctx.opset());
  if (!c.ok()) return ctx.Error(c.status().message());
  const Forest& f = c->forest;
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadRowsFor(ctx, f));
  std::vector<float> y(static_cast<size_t>(x.rows * f.n_targets));
  std::vector<double> row(static_cast<size_t>(f.n_targets));
  TargetScores scores;
  for (int64_t r = 0; r < x.rows; ++r) {
    absl::Status s = ScoreRow(f, c->aggregate, x.row(r), scores);
    if (!s.ok()) return ctx.Error(s.message());
    FinishTreeRegressorRow(*c, scores, row.data());
    for (int64_t t = 0; t < f.n_targets; ++t) y[static_cast<size_t>(r * f.n_targets + t)] = static_cast<float>(row[t]);
  }
  ctx.set_output(0, Tensor::FromVector<float>(y, {x.rows, f.n_targets}));
  return absl::OkStatus();
}

// ---- TreeEnsembleClassifier ----

}  // namespace

absl::StatusOr<TreeClassifier> DecodeTreeClassifier(const Node& node, int64_t opset) {
  TreeClassifier k;
  AIC_ASSIGN_OR_RETURN(k.labels, DecodeClassLabels(node, "classlabels_int64s"));
  AIC_ASSIGN_OR_RETURN(k.c, DecodeClassicForest(node, opset, "class", k.labels.size()));
  const int64_t n = k.labels.size();
  if (static_cast<int64_t>(k.c.base.size()) > n) {
    return absl::InvalidArgumentError(absl::StrCat(k.c.base.size(), " base_values for ", n, " classes"));
  }
  if (n == 1 && k.labels.strings) {
    return absl::UnimplementedError("a single string class label (ONNX Runtime indexes past it)");
  }
  std::vector<int64_t> distinct(k.c.raw_targets);
  std::sort(distinct.begin(), distinct.end());
  k.binary_case = n == 2 && std::unique(distinct.begin(), distinct.end()) - distinct.begin() == 1;
  for (double w : k.c.raw_weights) k.weights_positive = k.weights_positive && w >= 0;
  return k;
}

TreeClassifierPick FinishTreeClassifierRow(const TreeClassifier& k, TargetScores& s, double* z) {
  const int64_t n = k.labels.size();
  const std::vector<double>& base = k.c.base;
  const PostTransform post = k.c.post;
  if (n == 1) {
    const double v = s.value[0] + (base.size() == 1 ? base[0] : 0.0);
    z[0] = post == PostTransform::kProbit ? MlProbit(v) : v;
    return {v > 0 ? 1 : 0, true};
  }
  if (n > 2) {
    for (size_t j = 0; j < base.size(); ++j) {
      s.value[j] = s.has[j] ? s.value[j] + base[j] : base[j];
      s.has[j] = 1;
    }
    int64_t best = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (s.has[static_cast<size_t>(j)] && (best < 0 || s.value[static_cast<size_t>(j)] > s.value[static_cast<size_t>(best)])) best = j;
    }
    for (int64_t j = 0; j < n; ++j) z[j] = s.at(j);
    ApplyPostTransform(post, z, n);
    return {std::max<int64_t>(best, 0), false};
  }
  // Two classes. When class 1 has no score, ORT keeps one score column and
  // expands it at the end.
  bool single = false;
  std::optional<SecondColumn> expand;
  if (base.size() == 2) {
    if (s.has[1]) {
      // ORT's reading of two base values: class 1 gets base[1] + score[0].
      s.value[1] = base[1] + s.value[0];
      s.value[0] = -s.value[1];
    } else {
      s.value[1] += base[1];
      s.value[0] += base[0];
    }
  } else if (base.size() == 1) {
    s.value[0] += base[0];
    single = !s.has[1];
  } else {
    single = !s.has[1];
    expand = SecondColumn::kNegation;
  }
  const double pos = !single && s.has[1] ? s.value[1] : s.at(0);
  TreeClassifierPick result;
  if (k.binary_case) {
    const bool positive = k.weights_positive ? pos > 0.5 : pos > 0;
    expand = k.weights_positive ? SecondColumn::kComplement : SecondColumn::kNegation;
    result = {positive ? 1 : 0, false};
  } else {
    result = {pos > 0 ? 1 : 0, true};
  }
  if (!single) {
    z[0] = s.at(0);
    z[1] = s.at(1);
    ApplyPostTransform(post, z, 2);
  } else if (expand) {
    ExpandBinaryScore(post, *expand, s.at(0), z);
  } else {
    // ORT writes the first column only.
    z[0] = post == PostTransform::kProbit ? MlProbit(s.at(0)) : s.at(0);
    z[1] = std::numeric_limits<double>::quiet_NaN();
  }
  return result;
}

int64_t TreeClassifierIntLabel(const TreeClassifier& k, TreeClassifierPick p) {
  return p.literal ? p.pick : k.labels.ints[static_cast<size_t>(p.pick)];
}

namespace {

absl::Status InferClassifier(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<TreeClassifier> k = DecodeTreeClassifier(ctx.node(), ctx.opset());
  if (!k.ok()) return ctx.Error(k.status().message());
  const Dim rows = RowsDim(ctx);
  ctx.set_output(0, k->labels.dtype(), Shape({rows}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat, Shape({rows, Dim(k->labels.size())}));
  return absl::OkStatus();
}

absl::Status ClassifierKernel(KernelContext& ctx) {
  absl::StatusOr<TreeClassifier> k = DecodeTreeClassifier(ctx.node(), ctx.opset());
  if (!k.ok()) return k.status().code() == absl::StatusCode::kUnimplemented ? ctx.Unimplemented(k.status().message())
                                                                             : ctx.Error(k.status().message());
  const Forest& f = k->c.forest;
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadRowsFor(ctx, f));
  const int64_t n = k->labels.size();
  std::vector<float> z(static_cast<size_t>(x.rows * n));
  std::vector<double> row(static_cast<size_t>(std::max<int64_t>(n, 2)));
  std::vector<TreeClassifierPick> results(static_cast<size_t>(x.rows));
  TargetScores scores;
  for (int64_t r = 0; r < x.rows; ++r) {
    absl::Status s = ScoreRow(f, Aggregate::kSum, x.row(r), scores);
    if (!s.ok()) return ctx.Error(s.message());
    results[static_cast<size_t>(r)] = FinishTreeClassifierRow(*k, scores, row.data());
    for (int64_t j = 0; j < n; ++j) z[static_cast<size_t>(r * n + j)] = static_cast<float>(row[j]);
  }
  // ORT keeps string labels as indices, so a literal 0 / 1 picks the first or second name.
  Tensor y;
  if (k->labels.strings) {
    std::vector<int64_t> picks;
    for (const TreeClassifierPick& res : results) picks.push_back(res.pick);
    y = k->labels.Pick(picks);
  } else {
    std::vector<int64_t> labels;
    for (const TreeClassifierPick& res : results) labels.push_back(TreeClassifierIntLabel(*k, res));
    y = Tensor::FromVector<int64_t>(labels, {x.rows});
  }
  ctx.set_output(0, std::move(y));
  if (ctx.num_outputs() > 1) ctx.set_output(1, Tensor::FromVector<float>(z, {x.rows, n}));
  return absl::OkStatus();
}

}  // namespace

void RegisterTreeEnsembleClassicOps(OpRegistry& r) {
  // Opset 3 only adds the *_as_tensor attributes; opset 1 rejects them.
  for (int since : {1, 3}) {
    r.Register(OpDef{
        .domain = kMlDomain,
        .op_type = "TreeEnsembleClassifier",
        .since_version = since,
        .infer = InferClassifier,
        .traits = TreeEnsembleTraits,
        .cost = TreeEnsembleCost,
        .kernel = ClassifierKernel,
    });
    r.Register(OpDef{
        .domain = kMlDomain,
        .op_type = "TreeEnsembleRegressor",
        .since_version = since,
        .infer = InferRegressor,
        .traits = TreeEnsembleTraits,
        .cost = TreeEnsembleCost,
        .kernel = RegressorKernel,
    });
  }
}

}  // namespace aic

// Linear models of ai.onnx.ml: LinearRegressor (y = x·Wᵀ + b, one row of W
// per target) and LinearClassifier (the same scores, then the top class).
// Scores finish through the shared post transforms (post_transform.h) the way
// ONNX Runtime applies them: a single score is transformed only by PROBIT,
// and a classifier with one score column and two labels (skl2onnx's binary
// LinearSVC, for instance) reports [1 − s, s] with label 1 where s > 0.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/ml/linear_models.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

absl::StatusOr<LinearModel> DecodeLinear(const Node& node, int64_t targets) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  LinearModel m;
  AIC_ASSIGN_OR_RETURN(m.post, ParsePostTransform(node.GetString("post_transform", "NONE")));
  const std::vector<float> w = node.GetFloats("coefficients");
  const std::vector<float> b = node.GetFloats("intercepts");
  m.coefficients.assign(w.begin(), w.end());
  m.intercepts.assign(b.begin(), b.end());
  m.targets = targets;
  if (m.targets <= 0) return fail("the model has ", m.targets, " targets");
  if (w.empty() || static_cast<int64_t>(w.size()) % m.targets != 0) {
    return fail(w.size(), " coefficients do not split into ", m.targets, " rows");
  }
  if (!b.empty() && static_cast<int64_t>(b.size()) != m.targets) {
    return fail(b.size(), " intercepts for ", m.targets, " targets");
  }
  m.features = static_cast<int64_t>(w.size()) / m.targets;
  return m;
}

// The scores [rows, targets], before any post transform.
absl::StatusOr<std::vector<double>> LinearScores(const KernelContext& ctx, const LinearModel& m, FeatureRows& x) {
  AIC_ASSIGN_OR_RETURN(x, ReadFeatureRows(ctx));
  if (x.features != m.features) return ctx.Error("X has ", x.features, " features, the model ", m.features);
  std::vector<double> y(static_cast<size_t>(x.rows * m.targets));
  for (int64_t r = 0; r < x.rows; ++r) LinearScoreRow(m, x.row(r), y.data() + r * m.targets);
  return y;
}

Traits LinearTraits(const OpContext& ctx, bool classifier) {
  Traits t;
  t.semantic_name = ctx.node().op_type;
  const bool plain = ctx.node().GetString("post_transform", "NONE") == "NONE";
  t.meaning = classifier ? "label = argmax(x·Wᵀ + b), scores = post(x·Wᵀ + b)" : "y = post(x·Wᵀ + b)";
  t.linearity = !classifier && plain ? Linearity::kAffine : Linearity::kNonlinear;
  t.invertibility = Invertibility::kUnknown;
  if (classifier) {
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kQuantizes;
    t.collapse_how = "each row reduced to one class label";
  }
  t.trainable = true;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

Cost LinearCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& x = ctx.input_shape(0);
  const int64_t params = static_cast<int64_t>(ctx.node().GetFloats("coefficients").size());
  c.params = params + static_cast<int64_t>(ctx.node().GetFloats("intercepts").size());
  if (!x.IsStatic() || x.rank() < 1) return c;
  c.macs = (x.rank() == 2 ? x[0].value() : 1) * params;
  c.flops = 2 * c.macs;
  return c;
}

}  // namespace

// ---- LinearRegressor ----

absl::StatusOr<LinearModel> DecodeLinearRegressor(const Node& node) { return DecodeLinear(node, node.GetInt("targets", 1)); }

void FinishLinearRegressorRow(const LinearModel& m, double* y) {
  // ORT transforms a single target only by PROBIT.
  if (m.targets > 1 || m.post == PostTransform::kProbit) ApplyPostTransform(m.post, y, m.targets);
}

namespace {

absl::Status InferLinearRegressor(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<LinearModel> m = DecodeLinearRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  if (std::optional<int64_t> f = StaticFeatures(ctx); f && *f != m->features) {
    return ctx.Error("X has ", *f, " features, the model ", m->features);
  }
  ctx.set_output(0, DType::kFloat, Shape({RowsDim(ctx), Dim(m->targets)}));
  return absl::OkStatus();
}

absl::Status LinearRegressorKernel(KernelContext& ctx) {
  absl::StatusOr<LinearModel> m = DecodeLinearRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  FeatureRows x;
  AIC_ASSIGN_OR_RETURN(std::vector<double> y, LinearScores(ctx, *m, x));
  for (int64_t r = 0; r < x.rows; ++r) FinishLinearRegressorRow(*m, y.data() + r * m->targets);
  ctx.set_output(0, FloatTensor(y, {x.rows, m->targets}));
  return absl::OkStatus();
}

}  // namespace

// ---- LinearClassifier ----

absl::StatusOr<LinearClassifierModel> DecodeLinearClassifier(const Node& node) {
  LinearClassifierModel m;
  AIC_ASSIGN_OR_RETURN(m.labels, DecodeClassLabels(node, "classlabels_ints"));
  // One row of coefficients per intercept; without intercepts, one per class.
  const size_t intercepts = node.GetFloats("intercepts").size();
  AIC_ASSIGN_OR_RETURN(m.linear, DecodeLinear(node, intercepts > 0 ? static_cast<int64_t>(intercepts) : m.labels.size()));
  if (m.linear.targets == 1 && m.labels.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("one score row needs exactly 2 class labels (binary), got ", m.labels.size()));
  }
  if (m.linear.targets > 1 && m.labels.size() != m.linear.targets) {
    return absl::InvalidArgumentError(
        absl::StrCat(m.linear.targets, " score rows but ", m.labels.size(), " class labels"));
  }
  return m;
}

int64_t FinishLinearClassifierRow(const LinearClassifierModel& m, const double* scores, double* z) {
  const int64_t k = m.linear.targets;
  if (k == 1) {
    ExpandBinaryScore(m.linear.post, SecondColumn::kComplement, scores[0], z);
    return scores[0] > 0 ? 1 : 0;
  }
  int64_t best = 0;  // the first of equal scores wins
  for (int64_t j = 1; j < k; ++j) best = scores[j] > scores[best] ? j : best;
  std::copy(scores, scores + k, z);
  ApplyPostTransform(m.linear.post, z, k);
  return best;
}

namespace {

absl::Status InferLinearClassifier(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<LinearClassifierModel> m = DecodeLinearClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  if (std::optional<int64_t> f = StaticFeatures(ctx); f && *f != m->linear.features) {
    return ctx.Error("X has ", *f, " features, the model ", m->linear.features);
  }
  const Dim rows = RowsDim(ctx);
  ctx.set_output(0, m->labels.dtype(), Shape({rows}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat, Shape({rows, Dim(m->columns())}));
  return absl::OkStatus();
}

absl::Status LinearClassifierKernel(KernelContext& ctx) {
  absl::StatusOr<LinearClassifierModel> m = DecodeLinearClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  FeatureRows x;
  AIC_ASSIGN_OR_RETURN(std::vector<double> s, LinearScores(ctx, m->linear, x));
  const int64_t k = m->linear.targets, cols = m->columns();
  std::vector<double> z(static_cast<size_t>(x.rows * cols));
  std::vector<int64_t> picks(static_cast<size_t>(x.rows));
  for (int64_t r = 0; r < x.rows; ++r) {
    picks[static_cast<size_t>(r)] = FinishLinearClassifierRow(*m, s.data() + r * k, z.data() + r * cols);
  }
  ctx.set_output(0, m->labels.Pick(picks));
  if (ctx.num_outputs() > 1) ctx.set_output(1, FloatTensor(z, {x.rows, cols}));
  return absl::OkStatus();
}

}  // namespace

void RegisterLinearModelOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "LinearRegressor",
      .since_version = 1,
      .infer = InferLinearRegressor,
      .traits = [](const OpContext& ctx) { return LinearTraits(ctx, false); },
      .cost = LinearCost,
      .kernel = LinearRegressorKernel,
  });
  // multi_class (OvR or multinomial) only describes how the model was
  // trained; the scores are computed the same way either way.
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "LinearClassifier",
      .since_version = 1,
      .infer = InferLinearClassifier,
      .traits = [](const OpContext& ctx) { return LinearTraits(ctx, true); },
      .cost = LinearCost,
      .kernel = LinearClassifierKernel,
  });
}

}  // namespace aic

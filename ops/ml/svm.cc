// Support vector machines of ai.onnx.ml: SVMRegressor (one score per row,
// or ±1 for a one-class SVM) and SVMClassifier. Both evaluate a kernel
// (LINEAR, POLY, RBF, SIGMOID) against the support vectors, or, without
// support vectors, are liblinear models (one coefficient row per class).
// The models and their row arithmetic are svm_models.h's; here are the
// ops' inference, traits, cost and reference kernels.
#include <string>
#include <vector>

#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/svm_models.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

absl::StatusOr<FeatureRows> ReadSvmRows(const KernelContext& ctx, const SvmModel& m) {
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  if (x.features != m.features) return ctx.Error("X has ", x.features, " features, the model ", m.features);
  return x;
}

absl::Status CheckStaticFeatures(const OpContext& ctx, const SvmModel& m) {
  if (std::optional<int64_t> f = StaticFeatures(ctx); f && *f != m.features) {
    return ctx.Error("X has ", *f, " features, the model ", m.features);
  }
  return absl::OkStatus();
}

Traits SvmTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = ctx.node().op_type;
  t.meaning = ctx.node().op_type == "SVMClassifier"
                  ? "pairwise scores Σ αᵢ·K(x, svᵢ) + ρ, label by votes"
                  : "y = Σ αᵢ·K(x, svᵢ) + ρ";
  t.linearity = ctx.node().GetString("kernel_type", "LINEAR") == "LINEAR" ? Linearity::kAffine : Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.trainable = true;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

// One kernel evaluation (≈ 2·F flops) per support vector, or a dot product
// per coefficient row for liblinear models.
Cost SvmCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& x = ctx.input_shape(0);
  const int64_t sv = static_cast<int64_t>(ctx.node().GetFloats("support_vectors").size());
  const int64_t coef = static_cast<int64_t>(ctx.node().GetFloats("coefficients").size());
  c.params = sv + coef;
  if (!x.IsStatic() || x.rank() < 1) return c;
  c.macs = (x.rank() == 2 ? x[0].value() : 1) * (sv > 0 ? sv + coef : coef);
  c.flops = 2 * c.macs;
  return c;
}

// ---- SVMRegressor ----

absl::Status InferSvmRegressor(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<SvmRegressorModel> m = DecodeSvmRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_RETURN_IF_ERROR(CheckStaticFeatures(ctx, m->svm));
  ctx.set_output(0, DType::kFloat, Shape({RowsDim(ctx), Dim(1)}));
  return absl::OkStatus();
}

absl::Status SvmRegressorKernel(KernelContext& ctx) {
  absl::StatusOr<SvmRegressorModel> m = DecodeSvmRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadSvmRows(ctx, m->svm));
  std::vector<double> y(static_cast<size_t>(x.rows));
  SvmScratch scratch;
  for (int64_t r = 0; r < x.rows; ++r) y[static_cast<size_t>(r)] = SvmRegressRow(*m, x.row(r), scratch);
  ctx.set_output(0, FloatTensor(y, {x.rows, 1}));
  return absl::OkStatus();
}

// ---- SVMClassifier ----

absl::Status InferSvmClassifier(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<SvmClassifierModel> m = DecodeSvmClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_RETURN_IF_ERROR(CheckStaticFeatures(ctx, m->svm));
  const Dim rows = RowsDim(ctx);
  ctx.set_output(0, m->labels.dtype(), Shape({rows}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat, Shape({rows, Dim(m->columns())}));
  return absl::OkStatus();
}

absl::Status SvmClassifierKernel(KernelContext& ctx) {
  absl::StatusOr<SvmClassifierModel> m = DecodeSvmClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadSvmRows(ctx, m->svm));
  const int64_t cols = m->columns();
  std::vector<double> z(static_cast<size_t>(x.rows * cols));
  std::vector<int64_t> picks(static_cast<size_t>(x.rows));
  SvmScratch scratch;
  for (int64_t r = 0; r < x.rows; ++r) {
    picks[static_cast<size_t>(r)] = SvmClassifyRow(*m, x.row(r), z.data() + r * cols, scratch);
  }
  ctx.set_output(0, m->labels.Pick(picks));
  if (ctx.num_outputs() > 1) ctx.set_output(1, FloatTensor(z, {x.rows, cols}));
  return absl::OkStatus();
}

}  // namespace

void RegisterSvmOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "SVMRegressor",
      .since_version = 1,
      .infer = InferSvmRegressor,
      .traits = SvmTraits,
      .cost = SvmCost,
      .kernel = SvmRegressorKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "SVMClassifier",
      .since_version = 1,
      .infer = InferSvmClassifier,
      .traits = SvmTraits,
      .cost = SvmCost,
      .kernel = SvmClassifierKernel,
  });
}

}  // namespace aic

// The normalization family's entry point and BatchNormalization. In
// inference BatchNorm is a per-channel affine map (scale·(x - mean)/√(var+ε)
// + B) that folds into a preceding Conv/Gemm; in training mode (opset 14+
// training_mode=1) it normalizes with the batch's own statistics and also
// returns the updated running mean and variance. The moment-based
// normalizers are in norm_moments.cc, LRN/LpNormalization in norm_local.cc,
// Dropout in dropout.cc.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/dropout.h"
#include "ops/nn/norm_internal.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

bool BatchNormTraining(const Node& node, int64_t opset) {
  return opset >= 14 && node.GetInt("training_mode", 0) != 0;
}

absl::Status InferBatchNorm(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() < 2) return ctx.Error("input must have rank >= 2, got ", x.ToString());
  for (size_t i = 1; i < 5; ++i) {
    const Shape& p = ctx.input_shape(i);
    if (x.has_rank() && p.has_rank() && p.rank() == 1 && p[0].is_value() && x[1].is_value() &&
        p[0].value() != x[1].value()) {
      return ctx.Error("input ", i, " has ", p[0].value(), " entries for ", x[1].value(), " channels");
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  Shape channels = x.has_rank() ? Shape(std::vector<Dim>{x[1]}) : Shape::UnknownRank();
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    DType dt = ctx.input_dtype(i <= 2 ? i + 2 : 3);  // running stats follow mean/var's type
    if (dt == DType::kUndefined) dt = ctx.input_dtype(0);
    ctx.set_output(i, dt, channels);
  }
  return absl::OkStatus();
}

absl::Status BatchNormKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  if (xt.rank() < 2) return ctx.Error("input must have rank >= 2");
  double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  double momentum = ctx.node().GetFloat("momentum", 0.9f);
  bool training = BatchNormTraining(ctx.node(), ctx.opset());
  const std::vector<int64_t>& dims = xt.dims();
  int64_t c_n = dims[1], inner = NumElements(std::vector<int64_t>(dims.begin() + 2, dims.end()));
  int64_t per_sample = c_n * inner;
  std::vector<double> x = TensorToDoubles(xt);
  std::vector<std::vector<double>> p(5);
  for (size_t i = 1; i < 5; ++i) {
    p[i] = TensorToDoubles(ctx.input(i));
    // Per channel, or (spatial=0 before opset 9) per activation of a sample.
    if (static_cast<int64_t>(p[i].size()) != c_n && static_cast<int64_t>(p[i].size()) != per_sample) {
      return ctx.Error("input ", i, " has ", p[i].size(), " entries for ", c_n, " channels");
    }
  }
  std::vector<double> mean = p[3], var = p[4];
  if (training) {
    std::vector<bool> reduce(dims.size(), true);
    reduce[1] = false;
    Moments m = ComputeMoments(x, dims, reduce);
    mean = m.mean;
    var = m.var;
  }
  auto param = [&](const std::vector<double>& v, int64_t i) {
    int64_t k = static_cast<int64_t>(v.size()) == c_n ? (i / inner) % c_n : i % per_sample;
    return v[static_cast<size_t>(k)];
  };
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ii = static_cast<int64_t>(i);
    y[i] = param(p[1], ii) * (x[i] - param(mean, ii)) / std::sqrt(param(var, ii) + eps) +
           param(p[2], ii);
  }
  ctx.set_output(0, DoublesToTensor(y, dims, xt.dtype()));
  if (training) {
    std::vector<double> run_mean(mean.size()), run_var(var.size());
    for (size_t c = 0; c < mean.size(); ++c) {
      run_mean[c] = p[3][c] * momentum + mean[c] * (1 - momentum);
      run_var[c] = p[4][c] * momentum + var[c] * (1 - momentum);
    }
    DType dt = ctx.input(3).dtype();
    if (ctx.num_outputs() > 1) ctx.set_output(1, DoublesToTensor(run_mean, {c_n}, dt));
    if (ctx.num_outputs() > 2) ctx.set_output(2, DoublesToTensor(run_var, {c_n}, dt));
  } else {
    // Before opset 14 extra outputs exist only for training; give the
    // statistics used so a graph that lists them still runs.
    for (size_t i = 1; i < ctx.num_outputs(); ++i) {
      const std::vector<double>& v = (i % 2 == 1) ? p[3] : p[4];
      ctx.set_output(i, DoublesToTensor(v, {static_cast<int64_t>(v.size())}, ctx.input(3).dtype()));
    }
  }
  return absl::OkStatus();
}

Traits BatchNormTraits(const OpContext& ctx) {
  if (BatchNormTraining(ctx.node(), ctx.opset())) {
    Traits t = NormalizerTraits(ctx, "BatchNorm", "y = scale·(x - batch mean)/√(batch var + ε) + B",
                                "each channel over the batch", 1);
    t.removable_when = "";
    return t;
  }
  Traits t;
  t.semantic_name = "BatchNorm";
  t.meaning = "y = scale·(x - mean)/√(var + ε) + B, per channel";
  t.linearity = Linearity::kAffine;
  t.trainable = true;
  t.effect = RepresentationEffect::kPreserves;
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() >= 2) t.effect_detail = absl::StrCat(x[1].ToString(), " channels");
  // Invertible exactly when no channel's scale is zero.
  if (const Tensor* s = ctx.input_constant(1)) {
    bool nonzero = true;
    for (int64_t i = 0; i < s->num_elements(); ++i) nonzero &= s->ElementAsDouble(i) != 0.0;
    t.invertibility = nonzero ? Invertibility::kInvertible : Invertibility::kIrreversible;
    if (!nonzero) {
      t.collapse = CollapseKind::kProjects;
      t.collapse_how = "channels with zero scale map to their bias";
    }
  }
  t.fuses_with = {"Conv", "Gemm", "MatMul", "Relu"};
  t.safe_transform_when =
      "fold into preceding Conv/Gemm only in inference mode with constant scale/B/mean/var, "
      "fp32/fp64, single consumer";
  return t;
}

// FLOPs: 2 per element (x·a + b after folding the per-channel constants),
// plus 4 per channel to fold them; training adds 3 per element for the moments.
Cost BatchNormCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx, {1, 2});
  int64_t n = StaticElements(ctx.input_type(0));
  int64_t ch = StaticElements(ctx.input_type(1));
  if (n < 0 || ch < 0) {
    c.known = false;
    return c;
  }
  c.flops = 2 * n + 4 * ch + (BatchNormTraining(ctx.node(), ctx.opset()) ? 3 * n : 0);
  return c;
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "BatchNormalization",
                   .since_version = 1,
                   .infer = InferBatchNorm,
                   .traits = BatchNormTraits,
                   .cost = BatchNormCost,
                   .kernel = BatchNormKernel});
  RegisterMomentNormOps(r);
  RegisterLocalNormOps(r);
  RegisterDropoutOp(r);
}

}  // namespace aic

// Classification losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
// Both pick, for every sample position, the (log-)probability of its target
// class out of the class axis 1, weight it, and reduce (none / sum / mean).
// SoftmaxCrossEntropyLoss is log_softmax over axis 1 followed by exactly that
// NLL step, so both share one inference function and one NLL kernel body.
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

enum class Reduction { kNone, kSum, kMean };

absl::StatusOr<Reduction> ParseReduction(const Node& node) {
  std::string r = node.GetString("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  return absl::InvalidArgumentError(
      absl::StrCat(node.Describe(), ": reduction must be none, sum or mean, got '", r, "'"));
}

// Input [N, C, d1..dk], target [N, d1..dk], optional weight [C].
absl::Status InferLoss(OpContext& ctx) {
  absl::StatusOr<Reduction> red = ParseReduction(ctx.node());
  if (!red.ok()) return red.status();
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "scores"));
  const DType dtype = ctx.input_dtype(0);
  const Shape& x = ctx.input_shape(0);
  const Shape& t = ctx.input_shape(1);
  if (ctx.input_type(1).known() && !IsInteger(ctx.input_dtype(1))) {
    return ctx.Error("target must be an integer tensor, got ", DTypeName(ctx.input_dtype(1)));
  }
  if (x.has_rank() && x.rank() < 2) return ctx.Error("scores must have rank >= 2, got ", x.ToString());
  if (x.has_rank() && t.has_rank() && t.rank() != x.rank() - 1) {
    return ctx.Error("target ", t.ToString(), " must have rank ", x.rank() - 1, " for scores ",
                     x.ToString());
  }
  if (*red != Reduction::kNone) {
    ctx.set_output(0, dtype, Shape::Scalar());
  } else if (x.has_rank()) {
    // Prefer the scores' dims ([N, d1..]); take the target's where they are unknown.
    std::vector<Dim> dims;
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (i == 1) continue;
      Dim d = x[static_cast<size_t>(i)];
      const int64_t ti = i == 0 ? 0 : i - 1;
      if (d.is_unknown() && t.has_rank()) d = t[static_cast<size_t>(ti)];
      dims.push_back(d);
    }
    ctx.set_output(0, dtype, Shape(std::move(dims)));
  } else {
    ctx.set_output(0, dtype, t);
  }
  if (ctx.num_outputs() > 1) ctx.set_output(1, dtype, x);
  return absl::OkStatus();
}

// The NLL step over log-probabilities `logp` laid out [N, C, D]; returns the
// loss as [N, D] (reduction none) or a single value.
absl::StatusOr<std::vector<double>> Nll(const KernelContext& ctx, const std::vector<double>& logp,
                                        int64_t n, int64_t c, int64_t d,
                                        const std::vector<int64_t>& target,
                                        const std::vector<double>* weight,
                                        std::optional<int64_t> ignore_index, Reduction red) {
  std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < d; ++k) {
      const int64_t cls = target[static_cast<size_t>(i * d + k)];
      if (ignore_index && cls == *ignore_index) continue;  // weight 0, loss 0
      if (cls < 0 || cls >= c) {
        return ctx.Error("target class ", cls, " out of range [0, ", c, ")");
      }
      const double w = weight ? (*weight)[static_cast<size_t>(cls)] : 1.0;
      const double l = -w * logp[static_cast<size_t>((i * c + cls) * d + k)];
      loss[static_cast<size_t>(i * d + k)] = l;
      loss_sum += l;
      weight_sum += w;
    }
  }
  if (red == Reduction::kNone) return loss;
  if (red == Reduction::kSum) return std::vector<double>{loss_sum};
  // mean: Σ w·l / Σ w (a plain mean when no weights and nothing is ignored).
  return std::vector<double>{loss_sum / weight_sum};
}

// Shared kernel; `softmax` first turns scores into log-probabilities.
absl::Status LossKernel(KernelContext& ctx, bool softmax) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}, {2}));
  absl::StatusOr<Reduction> red = ParseReduction(ctx.node());
  if (!red.ok()) return red.status();
  const Tensor& x = ctx.input(0);
  const Tensor& target = ctx.input(1);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("scores dtype ", DTypeName(x.dtype()));
  if (x.rank() < 2) return ctx.Error("scores must have rank >= 2");
  if (target.rank() != x.rank() - 1) return ctx.Error("target rank must be scores rank - 1");
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t d = n * c == 0 ? 0 : x.num_elements() / (n * c);
  if (target.num_elements() != n * d || target.dim(0) != n) {
    return ctx.Error("target dims ", DimsToString(target.dims()), " do not match scores ",
                     DimsToString(x.dims()));
  }
  std::vector<double> logp = ToDoubles(x);
  if (softmax) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < d; ++k) {
        auto at = [&](int64_t j) -> double& { return logp[static_cast<size_t>((i * c + j) * d + k)]; };
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < c; ++j) mx = std::max(mx, at(j));
        double sum = 0;
        for (int64_t j = 0; j < c; ++j) sum += std::exp(at(j) - mx);
        const double lse = mx + std::log(sum);
        for (int64_t j = 0; j < c; ++j) at(j) -= lse;
      }
    }
  }
  std::optional<std::vector<double>> weight;
  if (ctx.has_input(2)) {
    weight = ToDoubles(ctx.input(2));
    if (static_cast<int64_t>(weight->size()) != c) {
      return ctx.Error("weight has ", weight->size(), " elements, expected C = ", c);
    }
  }
  std::optional<int64_t> ignore;
  if (ctx.node().HasAttr("ignore_index")) ignore = ctx.node().GetInt("ignore_index", 0);
  AIC_ASSIGN_OR_RETURN(std::vector<double> loss,
                       Nll(ctx, logp, n, c, d, ToInt64s(target), weight ? &*weight : nullptr,
                           ignore, *red));
  std::vector<int64_t> out_dims;
  if (*red == Reduction::kNone) out_dims = target.dims();
  ctx.set_output(0, FromDoubles(loss, out_dims, x.dtype()));
  if (softmax && ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    ctx.set_output(1, FromDoubles(logp, x.dims(), x.dtype()));
  }
  return absl::OkStatus();
}

Traits LossTraits(const OpContext& ctx, bool softmax) {
  Traits t;
  t.semantic_name = "Loss";
  const bool weighted = ctx.has_input(2);
  const std::string logp = softmax ? "log softmax(x)" : "x";
  t.meaning = absl::StrCat("loss = −", weighted ? "w[t]·" : "", logp, "[n, t, …]");
  std::string red = ctx.node().GetString("reduction", "mean");
  if (red == "mean") absl::StrAppend(&t.meaning, ", averaged", weighted ? " by Σw[t]" : "");
  if (red == "sum") absl::StrAppend(&t.meaning, ", summed");
  // NLL only picks and scales entries of x: linear in it. The softmax is not.
  t.linearity = softmax ? Linearity::kNonlinear : Linearity::kLinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kReduces;
  t.collapse_how = red == "none" ? "class axis reduced to the target's loss per position"
                                 : absl::StrCat("class axis and positions reduced to one ", red);
  t.effect = RepresentationEffect::kRestricts;
  t.effect_detail = absl::StrCat(ctx.input_shape(0).ToString(), " → ",
                                 ctx.num_outputs() > 0 ? ctx.output_type(0).shape.ToString() : "?");
  t.removable_when = "inference graphs that do not read the loss";
  return t;
}

Cost LossCost(const OpContext& ctx, bool softmax) {
  Cost c = BytesOnlyCost(ctx);  // class weights are not learned parameters
  const int64_t in = StaticElements(ctx.input_type(0));
  const int64_t tgt = StaticElements(ctx.input_type(1));
  if (in < 0 || tgt < 0) return c;
  // log_softmax: max, subtract, exp, sum, log, subtract per element; NLL: a
  // multiply and an add per target position.
  c.flops = (softmax ? 5 * in : 0) + 2 * tgt;
  return c;
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  for (bool softmax : {false, true}) {
    r.Register(OpDef{
        .domain = "",
        .op_type = softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
        .since_version = 12,
        .infer = InferLoss,
        .traits = [softmax](const OpContext& ctx) { return LossTraits(ctx, softmax); },
        .cost = [softmax](const OpContext& ctx) { return LossCost(ctx, softmax); },
        .kernel = [softmax](KernelContext& ctx) { return LossKernel(ctx, softmax); },
    });
  }
}

}  // namespace aic

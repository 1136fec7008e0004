// Optimizer steps of the "ai.onnx.preview.training" domain: Adagrad, Adam and
// Momentum (standard or Nesterov). Each updates n tensors at once; inputs are
// R (learning rate), T (step count), then n tensors per group (X, G, and the
// optimizer's state), and outputs are the new X and state groups. They are
// training-mode ops: marked nondeterministic so nothing folds or merges them.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

enum class Optimizer { kAdagrad, kAdam, kMomentum };

// Input groups after R and T: Adagrad X G H; Adam X G V H; Momentum X G V.
int InputGroups(Optimizer o) { return o == Optimizer::kAdam ? 4 : 3; }
// Output groups: Adagrad X H; Adam X V H; Momentum X V.
int OutputGroups(Optimizer o) { return o == Optimizer::kAdam ? 3 : 2; }

const char* OptimizerName(Optimizer o) {
  switch (o) {
    case Optimizer::kAdagrad: return "Adagrad";
    case Optimizer::kAdam: return "Adam";
    case Optimizer::kMomentum: return "Momentum";
  }
  return "?";
}

// The number of tensors updated, from the input count.
int64_t TensorCount(size_t num_inputs, Optimizer o) {
  if (num_inputs < 2) return -1;
  const size_t rest = num_inputs - 2;
  return rest % static_cast<size_t>(InputGroups(o)) == 0
             ? static_cast<int64_t>(rest / static_cast<size_t>(InputGroups(o)))
             : -1;
}

struct Attrs {
  double norm, norm_post, epsilon, decay, alpha, beta;
  bool nesterov;
};

Attrs ReadAttrs(const Node& n, Optimizer o) {
  Attrs a{};
  a.norm = n.GetFloat("norm_coefficient", 0);
  a.norm_post = n.GetFloat("norm_coefficient_post", 0);
  a.epsilon = n.GetFloat("epsilon", 1e-6f);
  a.decay = n.GetFloat("decay_factor", 0);
  a.alpha = n.GetFloat("alpha", o == Optimizer::kAdam ? 0.9f : 0.0f);
  a.beta = n.GetFloat("beta", o == Optimizer::kAdam ? 0.999f : 0.0f);
  a.nesterov = n.GetString("mode", "standard") == "nesterov";
  return a;
}

// One element's update. `state` holds V and/or H in output-group order.
double Update(Optimizer o, const Attrs& a, double r, int64_t t, double x, double g, double* v,
              double* h) {
  const double gr = a.norm * x + g;  // gradient of the L2 regularizer added
  switch (o) {
    case Optimizer::kAdagrad: {
      const double rate = r / (1 + static_cast<double>(t) * a.decay);
      *h += gr * gr;
      return x - rate * gr / (std::sqrt(*h) + a.epsilon);
    }
    case Optimizer::kAdam: {
      *v = a.alpha * *v + (1 - a.alpha) * gr;
      *h = a.beta * *h + (1 - a.beta) * gr * gr;
      // Bias correction of both moments, folded into the rate, from step 1 on.
      const double rate =
          t > 0 ? r * std::sqrt(1 - std::pow(a.beta, static_cast<double>(t))) /
                      (1 - std::pow(a.alpha, static_cast<double>(t)))
                : r;
      const double xn = x - rate * (*v / (std::sqrt(*h) + a.epsilon));
      return (1 - a.norm_post) * xn;
    }
    case Optimizer::kMomentum: {
      const double beta = t > 0 ? a.beta : 1.0;  // first step takes the full gradient
      *v = a.alpha * *v + beta * gr;
      return a.nesterov ? x - r * (gr + a.alpha * *v) : x - r * *v;
    }
  }
  return x;
}

absl::Status OptimizerKernel(KernelContext& ctx, Optimizer o) {
  const int64_t n = TensorCount(ctx.num_inputs(), o);
  if (n < 1) return ctx.Error("input count ", ctx.num_inputs(), " does not form ", InputGroups(o), " groups");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {i}));
  if (ctx.input(0).num_elements() != 1 || ctx.input(1).num_elements() != 1) {
    return ctx.Error("R and T must be scalars");
  }
  const double r = ctx.input(0).ElementAsDouble(0);
  const int64_t t = ToInt64s(ctx.input(1))[0];
  const Attrs a = ReadAttrs(ctx.node(), o);
  for (int64_t k = 0; k < n; ++k) {
    auto in = [&](int group) -> const Tensor& { return ctx.input(static_cast<size_t>(2 + group * n + k)); };
    const Tensor& xt = in(0);
    std::vector<double> x = ToDoubles(xt), g = ToDoubles(in(1));
    // State inputs: Adagrad H (group 2); Adam V (2), H (3); Momentum V (2).
    std::vector<double> v(x.size(), 0.0), h(x.size(), 0.0);
    if (o == Optimizer::kAdagrad) h = ToDoubles(in(2));
    if (o != Optimizer::kAdagrad) v = ToDoubles(in(2));
    if (o == Optimizer::kAdam) h = ToDoubles(in(3));
    if (g.size() != x.size() || v.size() != x.size() || h.size() != x.size()) {
      return ctx.Error("tensor ", k, ": X, G and state sizes differ");
    }
    for (size_t i = 0; i < x.size(); ++i) x[i] = Update(o, a, r, t, x[i], g[i], &v[i], &h[i]);
    const DType dt = xt.dtype();
    ctx.set_output(static_cast<size_t>(k), FromDoubles(x, xt.dims(), dt));
    const int64_t second = n + k, third = 2 * n + k;
    switch (o) {
      case Optimizer::kAdagrad: ctx.set_output(static_cast<size_t>(second), FromDoubles(h, xt.dims(), dt)); break;
      case Optimizer::kMomentum: ctx.set_output(static_cast<size_t>(second), FromDoubles(v, xt.dims(), dt)); break;
      case Optimizer::kAdam:
        ctx.set_output(static_cast<size_t>(second), FromDoubles(v, xt.dims(), dt));
        ctx.set_output(static_cast<size_t>(third), FromDoubles(h, xt.dims(), dt));
        break;
    }
  }
  return absl::OkStatus();
}

// Every output group has the types of the X group.
absl::Status InferOptimizer(OpContext& ctx, Optimizer o) {
  const int64_t n = TensorCount(ctx.num_inputs(), o);
  if (n < 1) return ctx.Error("input count ", ctx.num_inputs(), " does not form ", InputGroups(o), " groups");
  if (static_cast<int64_t>(ctx.num_outputs()) > n * OutputGroups(o)) {
    return ctx.Error("at most ", n * OutputGroups(o), " outputs, got ", ctx.num_outputs());
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const size_t x_input = 2 + i % static_cast<size_t>(n);
    ctx.set_output_type(i, ctx.input_type(x_input));
  }
  return absl::OkStatus();
}

Traits OptimizerTraits(const OpContext& ctx, Optimizer o) {
  Traits t;
  t.semantic_name = "Optimizer";
  switch (o) {
    case Optimizer::kAdagrad: t.meaning = "H += g²; X −= r/(1 + T·decay) · g / (√H + ε)"; break;
    case Optimizer::kAdam: t.meaning = "V = αV + (1−α)g; H = βH + (1−β)g²; X −= r̂ · V / (√H + ε)"; break;
    case Optimizer::kMomentum:
      t.meaning = ctx.node().GetString("mode", "standard") == "nesterov"
                      ? "V = αV + βg; X −= r · (g + αV)"
                      : "V = αV + βg; X −= r · V";
      break;
  }
  t.linearity = Linearity::kNonlinear;
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = "one training step on the parameters";
  t.removable_when = "inference graphs (training-only op)";
  return t;
}

Cost OptimizerCost(const OpContext& ctx, Optimizer o) {
  Cost c = BytesOnlyCost(ctx);
  const int64_t n = TensorCount(ctx.num_inputs(), o);
  int64_t elems = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t e = StaticElements(ctx.input_type(static_cast<size_t>(2 + k)));
    if (e < 0) return c;
    elems += e;
  }
  c.flops = elems * (o == Optimizer::kAdam ? 12 : 7);
  return c;
}

}  // namespace

void RegisterTrainingOps(OpRegistry& r) {
  for (Optimizer o : {Optimizer::kAdagrad, Optimizer::kAdam, Optimizer::kMomentum}) {
    r.Register(OpDef{
        .domain = kTrainingDomain,
        .op_type = OptimizerName(o),
        .since_version = 1,
        .infer = [o](OpContext& ctx) { return InferOptimizer(ctx, o); },
        .traits = [o](const OpContext& ctx) { return OptimizerTraits(ctx, o); },
        .cost = [o](const OpContext& ctx) { return OptimizerCost(ctx, o); },
        .kernel = [o](KernelContext& ctx) { return OptimizerKernel(ctx, o); },
        .nondeterministic = true,
    });
  }
}

}  // namespace aic

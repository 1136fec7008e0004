// Random generators: RandomNormal, RandomUniform (shape from an attribute),
// their *Like variants (shape from an input), Bernoulli and Multinomial. All
// are nondeterministic: the rewriter never folds or merges them. A `seed`
// attribute makes one kernel run reproducible here (std::mt19937), though
// not equal to any other runtime's stream; without one, each run differs.
#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

std::mt19937_64 MakeEngine(const Node& node) {
  if (node.HasAttr("seed")) {
    return std::mt19937_64(static_cast<uint64_t>(static_cast<int64_t>(node.GetFloat("seed", 0))));
  }
  std::random_device rd;
  return std::mt19937_64((static_cast<uint64_t>(rd()) << 32) ^ rd());
}

bool IsFloatOutput(DType t) { return IsRealFloat(t); }

enum class Dist { kNormal, kUniform };

// Output dtype: the `dtype` attribute, else `fallback`.
DType AttrDType(const Node& node, DType fallback) {
  return node.HasAttr("dtype") ? static_cast<DType>(node.GetInt("dtype", 1)) : fallback;
}

std::vector<double> Draw(const Node& node, Dist dist, int64_t count) {
  std::mt19937_64 engine = MakeEngine(node);
  std::vector<double> v(static_cast<size_t>(count));
  if (dist == Dist::kNormal) {
    std::normal_distribution<double> d(node.GetFloat("mean", 0), node.GetFloat("scale", 1));
    for (double& x : v) x = d(engine);
  } else {
    std::uniform_real_distribution<double> d(node.GetFloat("low", 0), node.GetFloat("high", 1));
    for (double& x : v) x = d(engine);
  }
  return v;
}

// RandomNormal / RandomUniform (like = false) and the *Like forms.
absl::Status RandomKernel(KernelContext& ctx, Dist dist, bool like) {
  std::vector<int64_t> dims;
  DType dt = DType::kFloat;
  if (like) {
    AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
    dims = ctx.input(0).dims();
    dt = AttrDType(ctx.node(), ctx.input(0).dtype());
  } else {
    dims = ctx.node().GetInts("shape");
    dt = AttrDType(ctx.node(), DType::kFloat);
  }
  if (!IsFloatOutput(dt)) return ctx.Error("dtype must be a float type, got ", DTypeName(dt));
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("negative dim in shape");
  }
  ctx.set_output(0, FromDoubles(Draw(ctx.node(), dist, NumElements(dims)), dims, dt));
  return absl::OkStatus();
}

absl::Status InferRandom(OpContext& ctx, bool like) {
  if (like) {
    const DType dt = AttrDType(ctx.node(), ctx.input_dtype(0));
    if (ctx.input_type(0).known() && !IsFloatOutput(dt)) return ctx.Error("dtype must be a float type");
    ctx.set_output(0, dt, ctx.input_shape(0));
    return absl::OkStatus();
  }
  if (!ctx.node().HasAttr("shape")) return ctx.Error("attribute 'shape' is required");
  const DType dt = AttrDType(ctx.node(), DType::kFloat);
  if (!IsFloatOutput(dt)) return ctx.Error("dtype must be a float type, got ", DTypeName(dt));
  std::vector<int64_t> dims = ctx.node().GetInts("shape");
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("negative dim in shape");
  }
  ctx.set_output(0, dt, Shape::FromValues(dims));
  return absl::OkStatus();
}

// ---- Bernoulli ----

absl::Status BernoulliKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& p = ctx.input(0);
  if (!IsRealFloat(p.dtype())) return ctx.Error("input must be probabilities (float)");
  const DType dt = AttrDType(ctx.node(), p.dtype());
  std::mt19937_64 engine = MakeEngine(ctx.node());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> y;
  for (double prob : ToDoubles(p)) y.push_back(u(engine) < prob ? 1.0 : 0.0);
  ctx.set_output(0, FromDoubles(y, p.dims(), dt));
  return absl::OkStatus();
}

absl::Status InferBernoulli(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "input"));
  ctx.set_output(0, AttrDType(ctx.node(), ctx.input_dtype(0)), ctx.input_shape(0));
  return absl::OkStatus();
}

// ---- Multinomial ----

// Input [batch, classes] of unnormalized log-probabilities.
absl::Status MultinomialKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& x = ctx.input(0);
  if (!IsRealFloat(x.dtype()) || x.rank() != 2) return ctx.Error("input must be float [batch, classes]");
  const DType dt = AttrDType(ctx.node(), DType::kInt32);
  if (dt != DType::kInt32 && dt != DType::kInt64) return ctx.Error("dtype must be int32 or int64");
  const int64_t batch = x.dim(0), classes = x.dim(1);
  const int64_t samples = ctx.node().GetInt("sample_size", 1);
  const std::vector<double> logits = ToDoubles(x);
  std::mt19937_64 engine = MakeEngine(ctx.node());
  std::vector<double> y;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> w(static_cast<size_t>(classes));
    const double* row = logits.data() + b * classes;
    const double mx = *std::max_element(row, row + classes);
    for (int64_t c = 0; c < classes; ++c) w[static_cast<size_t>(c)] = std::exp(row[c] - mx);
    std::discrete_distribution<int64_t> d(w.begin(), w.end());
    for (int64_t s = 0; s < samples; ++s) y.push_back(static_cast<double>(d(engine)));
  }
  ctx.set_output(0, FromDoubles(y, {batch, samples}, dt));
  return absl::OkStatus();
}

absl::Status InferMultinomial(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "input"));
  const DType dt = AttrDType(ctx.node(), DType::kInt32);
  if (dt != DType::kInt32 && dt != DType::kInt64) return ctx.Error("dtype must be int32 or int64");
  const Shape& s = ctx.input_shape(0);
  if (s.has_rank() && s.rank() != 2) return ctx.Error("input must be [batch, classes], got ", s.ToString());
  Dim batch = s.has_rank() ? s[0] : ctx.FreshDim();
  ctx.set_output(0, dt, Shape({batch, Dim(ctx.node().GetInt("sample_size", 1))}));
  return absl::OkStatus();
}

Traits RandomTraits(const char* meaning) {
  Traits t;
  t.semantic_name = "Random";
  t.meaning = meaning;
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.effect_detail = "draws fresh values on every run";
  t.removable_when = "its output is unused";
  return t;
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  struct Gen {
    const char* name;
    Dist dist;
    bool like;
    const char* meaning;
  };
  for (const Gen& g : {Gen{"RandomNormal", Dist::kNormal, false, "y ~ N(mean, scale²)"},
                       Gen{"RandomUniform", Dist::kUniform, false, "y ~ U[low, high)"},
                       Gen{"RandomNormalLike", Dist::kNormal, true, "y ~ N(mean, scale²), shaped like x"},
                       Gen{"RandomUniformLike", Dist::kUniform, true, "y ~ U[low, high), shaped like x"}}) {
    r.Register(OpDef{
        .domain = "",
        .op_type = g.name,
        .since_version = 1,
        .infer = [like = g.like](OpContext& ctx) { return InferRandom(ctx, like); },
        .traits = [m = g.meaning](const OpContext&) { return RandomTraits(m); },
        .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 4); },
        .kernel = [g](KernelContext& ctx) { return RandomKernel(ctx, g.dist, g.like); },
        .nondeterministic = true,
    });
  }
  r.Register(OpDef{
      .domain = "",
      .op_type = "Bernoulli",
      .since_version = 15,
      .infer = InferBernoulli,
      .traits = [](const OpContext&) { return RandomTraits("y ~ Bernoulli(p = x)"); },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 2); },
      .kernel = BernoulliKernel,
      .nondeterministic = true,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "Multinomial",
      .since_version = 7,
      .infer = InferMultinomial,
      .traits = [](const OpContext&) { return RandomTraits("y ~ Categorical(softmax(x)), sample_size draws"); },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = MultinomialKernel,
      .nondeterministic = true,
  });
}

}  // namespace aic

// Normalizers that subtract a group's mean and divide by its standard
// deviation: LayerNormalization (groups = trailing axes from `axis`, with
// Mean/InvStdDev outputs), InstanceNormalization (each channel of each
// sample), GroupNormalization (channel groups of each sample, opset 18) and
// MeanVarianceNormalization (chosen axes). They differ only in which axes
// form a group and how scale/bias are indexed, so one moments core serves all.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/norm_internal.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

std::vector<int64_t> GroupIndex(const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& reduced_dims) {
  BroadcastIterator it(dims, {reduced_dims});
  std::vector<int64_t> g(static_cast<size_t>(it.size()));
  for (size_t i = 0; i < g.size(); ++i, it.Next()) g[i] = it.offset(0);
  return g;
}

Moments ComputeMoments(const std::vector<double>& x, const std::vector<int64_t>& dims,
                       const std::vector<bool>& reduce) {
  Moments m;
  m.reduced_dims = dims;
  int64_t count = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (reduce[k]) {
      count *= dims[k];
      m.reduced_dims[k] = 1;
    }
  }
  size_t groups = static_cast<size_t>(NumElements(m.reduced_dims));
  m.mean.assign(groups, 0.0);
  m.var.assign(groups, 0.0);
  std::vector<int64_t> g = GroupIndex(dims, m.reduced_dims);
  for (size_t i = 0; i < x.size(); ++i) m.mean[static_cast<size_t>(g[i])] += x[i];
  for (double& v : m.mean) v /= static_cast<double>(std::max<int64_t>(count, 1));
  // Two passes: the variance of deviations, not E[x²] - E[x]², to stay accurate.
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - m.mean[static_cast<size_t>(g[i])];
    m.var[static_cast<size_t>(g[i])] += d * d;
  }
  for (double& v : m.var) v /= static_cast<double>(std::max<int64_t>(count, 1));
  return m;
}

Traits NormalizerTraits(const OpContext& ctx, std::string name, std::string meaning,
                        std::string groups, size_t scale_input) {
  Traits t;
  t.semantic_name = std::move(name);
  t.meaning = std::move(meaning);
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kProjects;
  t.collapse_how = absl::StrCat("mean and scale of ", groups,
                                " removed: x and a·x + c (a > 0) give the same output");
  t.effect = RepresentationEffect::kPreserves;
  t.trainable = scale_input < ctx.num_inputs() && ctx.input_constant(scale_input) != nullptr;
  return t;
}

namespace {

// y = (x - mean)/√(var + ε) per group, then ·scale + bias where scale_of(i) /
// bias_of(i) give the parameter for element i.
template <typename ScaleFn, typename BiasFn>
std::vector<double> Normalize(const std::vector<double>& x, const std::vector<int64_t>& dims,
                              const Moments& m, double eps, ScaleFn scale_of, BiasFn bias_of) {
  std::vector<int64_t> g = GroupIndex(dims, m.reduced_dims);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    size_t k = static_cast<size_t>(g[i]);
    y[i] = (x[i] - m.mean[k]) / std::sqrt(m.var[k] + eps) * scale_of(i) + bias_of(i);
  }
  return y;
}

// ---- LayerNormalization (opset 17).

absl::Status InferLayerNorm(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  ctx.set_output(0, ctx.input_dtype(0), x);
  DType stash = static_cast<DType>(ctx.node().GetInt("stash_type", 1));
  if (!x.has_rank()) {
    for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, stash, Shape::UnknownRank());
    return absl::OkStatus();
  }
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> stat(x.dims().begin(), x.dims().begin() + *axis);
  stat.resize(static_cast<size_t>(x.rank()), Dim(1));
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, stash, Shape(stat));
  return absl::OkStatus();
}

// Values of an optional input broadcast (numpy, right-aligned) to `dims`.
absl::StatusOr<std::vector<double>> BroadcastTo(KernelContext& ctx, size_t i,
                                                const std::vector<int64_t>& dims, double fill) {
  std::vector<double> out(static_cast<size_t>(NumElements(dims)), fill);
  if (!ctx.has_input(i)) return out;
  const Tensor& t = ctx.input(i);
  auto b = BroadcastDims({dims, t.dims()});
  if (!b.ok() || *b != dims) {
    return ctx.Error("input ", i, " ", DimsToString(t.dims()), " does not broadcast to ",
                     DimsToString(dims));
  }
  std::vector<double> v = TensorToDoubles(t);
  BroadcastIterator it(dims, {t.dims()});
  for (size_t k = 0; k < out.size(); ++k, it.Next()) out[k] = v[static_cast<size_t>(it.offset(0))];
  return out;
}

absl::Status LayerNormKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", -1), xt.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  std::vector<bool> reduce(static_cast<size_t>(xt.rank()), false);
  for (int64_t k = *axis; k < xt.rank(); ++k) reduce[static_cast<size_t>(k)] = true;
  std::vector<double> x = TensorToDoubles(xt);
  Moments m = ComputeMoments(x, xt.dims(), reduce);
  AIC_ASSIGN_OR_RETURN(std::vector<double> scale, BroadcastTo(ctx, 1, xt.dims(), 1.0));
  AIC_ASSIGN_OR_RETURN(std::vector<double> bias, BroadcastTo(ctx, 2, xt.dims(), 0.0));
  std::vector<double> y = Normalize(
      x, xt.dims(), m, eps, [&](size_t i) { return scale[i]; }, [&](size_t i) { return bias[i]; });
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), xt.dtype()));
  DType stash = static_cast<DType>(ctx.node().GetInt("stash_type", 1));
  if (!IsRealDType(stash)) stash = DType::kFloat;
  if (ctx.num_outputs() > 1) ctx.set_output(1, DoublesToTensor(m.mean, m.reduced_dims, stash));
  if (ctx.num_outputs() > 2) {
    std::vector<double> inv(m.var.size());
    for (size_t k = 0; k < inv.size(); ++k) inv[k] = 1.0 / std::sqrt(m.var[k] + eps);
    ctx.set_output(2, DoublesToTensor(inv, m.reduced_dims, stash));
  }
  return absl::OkStatus();
}

// ---- RMSNormalization (opset 23): y = x / √(mean(x²) + ε) · scale over the
// trailing axes from `axis` on; no mean is removed. Y has the scale's type.
absl::Status InferRmsNorm(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  DType out = ctx.num_inputs() > 1 && ctx.input_dtype(1) != DType::kUndefined ? ctx.input_dtype(1)
                                                                              : ctx.input_dtype(0);
  if (x.has_rank()) {
    auto axis = NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
  }
  ctx.set_output(0, out, x);
  return absl::OkStatus();
}

absl::Status RmsNormKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", -1), xt.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  std::vector<int64_t> reduced = xt.dims();
  int64_t count = 1;
  for (int64_t k = *axis; k < xt.rank(); ++k) {
    count *= reduced[static_cast<size_t>(k)];
    reduced[static_cast<size_t>(k)] = 1;
  }
  std::vector<double> x = TensorToDoubles(xt);
  std::vector<int64_t> g = GroupIndex(xt.dims(), reduced);
  std::vector<double> mean_square(static_cast<size_t>(NumElements(reduced)), 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean_square[static_cast<size_t>(g[i])] += x[i] * x[i];
  for (double& v : mean_square) v /= static_cast<double>(std::max<int64_t>(count, 1));
  AIC_ASSIGN_OR_RETURN(std::vector<double> scale, BroadcastTo(ctx, 1, xt.dims(), 1.0));
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = x[i] / std::sqrt(mean_square[static_cast<size_t>(g[i])] + eps) * scale[i];
  }
  DType out = ctx.has_input(1) ? ctx.input(1).dtype() : xt.dtype();
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), out));
  return absl::OkStatus();
}

// ---- InstanceNormalization and GroupNormalization: per-sample channel groups.

absl::Status ChannelGroupNormKernel(KernelContext& ctx, bool instance) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  if (xt.rank() < 2) return ctx.Error("input must have rank >= 2");
  const std::vector<int64_t>& dims = xt.dims();
  int64_t c_n = dims[1], inner = NumElements(std::vector<int64_t>(dims.begin() + 2, dims.end()));
  int64_t groups = instance ? c_n : ctx.node().GetInt("num_groups", 1);
  if (groups <= 0 || c_n % groups != 0) {
    return ctx.Error(c_n, " channels do not split into ", groups, " groups");
  }
  double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  std::vector<double> scale = TensorToDoubles(ctx.input(1)), bias = TensorToDoubles(ctx.input(2));
  // Parameters per channel, or (GroupNormalization-18) per group.
  for (const auto* p : {&scale, &bias}) {
    if (static_cast<int64_t>(p->size()) != c_n && static_cast<int64_t>(p->size()) != groups) {
      return ctx.Error("scale/bias have ", p->size(), " entries for ", c_n, " channels");
    }
  }
  std::vector<int64_t> view = {dims[0], groups, c_n / groups * inner};
  Moments m = ComputeMoments(TensorToDoubles(xt), view, {false, false, true});
  auto param = [&](const std::vector<double>& p, size_t i) {
    int64_t ch = (static_cast<int64_t>(i) / inner) % c_n;
    return p[static_cast<size_t>(static_cast<int64_t>(p.size()) == c_n ? ch : ch / (c_n / groups))];
  };
  std::vector<double> y = Normalize(
      TensorToDoubles(xt), view, m, eps, [&](size_t i) { return param(scale, i); },
      [&](size_t i) { return param(bias, i); });
  ctx.set_output(0, DoublesToTensor(y, dims, xt.dtype()));
  return absl::OkStatus();
}

// ---- MeanVarianceNormalization: y = (x - mean)/(std + 1e-9) over `axes`.

absl::Status MvnKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  std::vector<bool> reduce(static_cast<size_t>(xt.rank()), false);
  for (int64_t a : ctx.node().GetInts("axes", {0, 2, 3})) {
    auto k = NormalizeAxis(a, xt.rank());
    if (!k.ok()) return ctx.Error(k.status().message());
    reduce[static_cast<size_t>(*k)] = true;
  }
  std::vector<double> x = TensorToDoubles(xt);
  Moments m = ComputeMoments(x, xt.dims(), reduce);
  std::vector<int64_t> g = GroupIndex(xt.dims(), m.reduced_dims);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    size_t k = static_cast<size_t>(g[i]);
    y[i] = (x[i] - m.mean[k]) / (std::sqrt(m.var[k]) + 1e-9);
  }
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), xt.dtype()));
  return absl::OkStatus();
}

absl::Status InferSameAsInput(OpContext& ctx, int64_t min_rank) {
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() < min_rank) {
    return ctx.Error("input must have rank >= ", min_rank, ", got ", x.ToString());
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return absl::OkStatus();
}

void RegisterNorm(OpRegistry& r, const char* name, int since, InferFn infer, TraitsFn traits,
                  int64_t flops_per_element, std::initializer_list<size_t> params, KernelFn kernel) {
  std::vector<size_t> p(params);
  r.Register(OpDef{.domain = "",
                   .op_type = name,
                   .since_version = since,
                   .infer = std::move(infer),
                   .traits = std::move(traits),
                   .cost =
                       [p, flops_per_element](const OpContext& ctx) {
                         Cost c = ElementwiseCost(ctx, flops_per_element);
                         for (size_t i : p) {
                           if (ctx.input_constant(i)) c.params += ctx.input_constant(i)->num_elements();
                         }
                         return c;
                       },
                   .kernel = std::move(kernel)});
}

}  // namespace

void RegisterMomentNormOps(OpRegistry& r) {
  // FLOPs per element: mean (1), deviation and square (2), normalize (2), scale and bias (2).
  RegisterNorm(
      r, "LayerNormalization", 17, InferLayerNorm,
      [](const OpContext& ctx) {
        return NormalizerTraits(ctx, "LayerNorm", "y = (x - mean)/√(var + ε)·scale + B",
                                "each row (axes from `axis` on)", 1);
      },
      7, {1, 2}, LayerNormKernel);
  // FLOPs per element: square and sum (2), normalize (1), scale (1).
  RegisterNorm(
      r, "RMSNormalization", 23, InferRmsNorm,
      [](const OpContext& ctx) {
        Traits t = NormalizerTraits(ctx, "RMSNorm", "y = x/√(mean(x²) + ε)·scale",
                                    "each row (axes from `axis` on)", 1);
        t.collapse_how = "the scale of each row (axes from `axis` on) removed: x and a·x (a > 0) give the same output";
        return t;
      },
      4, {1}, RmsNormKernel);
  RegisterNorm(
      r, "InstanceNormalization", 1, [](OpContext& ctx) { return InferSameAsInput(ctx, 3); },
      [](const OpContext& ctx) {
        return NormalizerTraits(ctx, "InstanceNorm", "y = (x - mean)/√(var + ε)·scale + B",
                                "each channel of each sample", 1);
      },
      7, {1, 2}, [](KernelContext& ctx) { return ChannelGroupNormKernel(ctx, true); });
  RegisterNorm(
      r, "GroupNormalization", 18, [](OpContext& ctx) { return InferSameAsInput(ctx, 2); },
      [](const OpContext& ctx) {
        return NormalizerTraits(ctx, "GroupNorm", "y = (x - mean)/√(var + ε)·scale + bias",
                                "each channel group of each sample", 1);
      },
      7, {1, 2}, [](KernelContext& ctx) { return ChannelGroupNormKernel(ctx, false); });
  RegisterNorm(
      r, "MeanVarianceNormalization", 9, [](OpContext& ctx) { return InferSameAsInput(ctx, 0); },
      [](const OpContext& ctx) {
        return NormalizerTraits(ctx, "MeanVarianceNorm", "y = (x - mean)/std over `axes`",
                                "the chosen axes", 99);
      },
      5, {}, MvnKernel);
}

}  // namespace aic

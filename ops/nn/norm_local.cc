// Normalizers that divide by a norm of nearby values: LRN (sum of squares
// over a window of neighbouring channels) and LpNormalization (the L1/L2 norm
// along one axis). Both walk the input as (outer, n, inner) lines along the
// normalized axis.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/norm_internal.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};

Lines LinesAlong(const std::vector<int64_t>& dims, int64_t axis) {
  Lines l;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    int64_t d = dims[static_cast<size_t>(k)];
    if (k < axis) l.outer *= d;
    if (k == axis) l.n = d;
    if (k > axis) l.inner *= d;
  }
  return l;
}

// Calls f(base, stride, n) for each line along the axis.
template <typename F>
void ForEachLine(const Lines& l, F f) {
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) f(o * l.n * l.inner + i, l.inner, l.n);
  }
}

absl::Status LrnKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  if (xt.rank() < 2) return ctx.Error("input must have rank >= 2");
  const Node& node = ctx.node();
  int64_t size = node.GetInt("size", 0);
  if (size <= 0) return ctx.Error("size must be positive");
  double alpha = node.GetFloat("alpha", 1e-4f), beta = node.GetFloat("beta", 0.75f);
  double bias = node.GetFloat("bias", 1.0f);
  std::vector<double> x = TensorToDoubles(xt), y(x.size());
  int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor / ceil of (size-1)/2
  ForEachLine(LinesAlong(xt.dims(), 1), [&](int64_t base, int64_t stride, int64_t n) {
    for (int64_t c = 0; c < n; ++c) {
      double sq = 0;
      for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(n - 1, c + after); ++j) {
        double v = x[static_cast<size_t>(base + j * stride)];
        sq += v * v;
      }
      size_t k = static_cast<size_t>(base + c * stride);
      y[k] = x[k] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
    }
  });
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), xt.dtype()));
  return absl::OkStatus();
}

absl::Status LpNormKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  int64_t p = ctx.node().GetInt("p", 2);
  if (p != 1 && p != 2) return ctx.Error("p must be 1 or 2, got ", p);
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", -1), std::max<int64_t>(xt.rank(), 1));
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<double> x = TensorToDoubles(xt), y(x.size());
  ForEachLine(LinesAlong(xt.dims(), *axis), [&](int64_t base, int64_t stride, int64_t n) {
    double norm = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = x[static_cast<size_t>(base + j * stride)];
      norm += p == 1 ? std::fabs(v) : v * v;
    }
    if (p == 2) norm = std::sqrt(norm);
    for (int64_t j = 0; j < n; ++j) {
      size_t k = static_cast<size_t>(base + j * stride);
      y[k] = norm == 0.0 ? 0.0 : x[k] / norm;  // a zero line stays zero
    }
  });
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), xt.dtype()));
  return absl::OkStatus();
}

absl::Status InferSame(OpContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return absl::OkStatus();
}

Traits LocalNormTraits(const char* name, const char* meaning, const char* groups) {
  Traits t;
  t.semantic_name = name;
  t.meaning = meaning;
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kProjects;
  t.collapse_how = absl::StrCat("the scale of ", groups, " is divided out: x and a·x (a > 0) give the same output");
  t.effect = RepresentationEffect::kPreserves;
  return t;
}

}  // namespace

void RegisterLocalNormOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "LRN",
                   .since_version = 1,
                   .infer = InferSame,
                   .traits =
                       [](const OpContext&) {
                         Traits t = LocalNormTraits(
                             "LRN", "y = x / (bias + α/size·Σ x² over nearby channels)^β",
                             "nearby channels");
                         t.collapse = CollapseKind::kSaturates;  // not exactly scale-invariant
                         t.collapse_how = "large activations are damped by their neighbours";
                         t.invertibility = Invertibility::kUnknown;
                         return t;
                       },
                   .cost =
                       [](const OpContext& ctx) {
                         int64_t size = ctx.node().GetInt("size", 1);
                         return ElementwiseCost(ctx, 2 * size + 4);
                       },
                   .kernel = LrnKernel});
  r.Register(OpDef{.domain = "",
                   .op_type = "LpNormalization",
                   .since_version = 1,
                   .infer = InferSame,
                   .traits =
                       [](const OpContext&) {
                         return LocalNormTraits("LpNorm", "y = x / ‖x‖_p along `axis`",
                                                "each line along the axis");
                       },
                   .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 3); },
                   .kernel = LpNormKernel});
}

}  // namespace aic

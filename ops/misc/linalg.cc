// Det: the determinant of each square matrix in a batch [..., M, M], by LU
// decomposition with partial pivoting (in double).
#include <cmath>
#include <utility>

#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// Gaussian elimination on a copy: det = sign · Π pivots.
double Determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * m + c)]; };
  for (int64_t k = 0; k < m; ++k) {
    int64_t piv = k;
    for (int64_t r = k + 1; r < m; ++r) {
      if (std::fabs(at(r, k)) > std::fabs(at(piv, k))) piv = r;
    }
    if (at(piv, k) == 0) return 0;
    if (piv != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(at(k, c), at(piv, c));
      det = -det;
    }
    det *= at(k, k);
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = at(r, k) / at(k, k);
      for (int64_t c = k; c < m; ++c) at(r, c) -= f * at(k, c);
    }
  }
  return det;
}

absl::Status DetKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& x = ctx.input(0);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("Det of ", DTypeName(x.dtype()));
  if (x.rank() < 2 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2)) {
    return ctx.Error("input must be [..., M, M], got ", DimsToString(x.dims()));
  }
  const int64_t m = x.dim(x.rank() - 1);
  const std::vector<double> xs = ToDoubles(x);
  std::vector<int64_t> batch_dims(x.dims().begin(), x.dims().end() - 2);
  const int64_t batch = NumElements(batch_dims);
  std::vector<double> out(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    out[static_cast<size_t>(b)] = Determinant(
        std::vector<double>(xs.begin() + b * m * m, xs.begin() + (b + 1) * m * m), m);
  }
  ctx.set_output(0, FromDoubles(out, batch_dims, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferDet(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "X"));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), x);
    return absl::OkStatus();
  }
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2, got ", x.ToString());
  const Dim& r = x[static_cast<size_t>(x.rank() - 2)];
  const Dim& c = x[static_cast<size_t>(x.rank() - 1)];
  if (r.is_value() && c.is_value() && r.value() != c.value()) {
    return ctx.Error("matrices must be square, got ", x.ToString());
  }
  ctx.set_output(0, ctx.input_dtype(0),
                 Shape(std::vector<Dim>(x.dims().begin(), x.dims().end() - 2)));
  return absl::OkStatus();
}

Traits DetTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Determinant";
  t.meaning = "y = det(X) per matrix";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kReduces;
  t.collapse_how = "each M×M matrix summarised by one number";
  t.effect = RepresentationEffect::kRestricts;
  t.effect_detail = "M×M → 1";
  return t;
}

// LU: about M³/3 multiply-adds per matrix.
Cost DetCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& x = ctx.input_shape(0);
  if (!x.IsStatic() || x.rank() < 2) return c;
  const int64_t m = x[static_cast<size_t>(x.rank() - 1)].value();
  const int64_t batch = *x.NumElements() / std::max<int64_t>(m * m, 1);
  c.macs = batch * m * m * m / 3;
  c.flops = 2 * c.macs + batch * m;
  return c;
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "Det",
      .since_version = 11,
      .infer = InferDet,
      .traits = DetTraits,
      .cost = DetCost,
      .kernel = DetKernel,
  });
}

}  // namespace aic

// Activations with inputs beyond x: Clip (bounds as attributes before opset
// 11, optional inputs since) and PRelu (a learned slope broadcast along x).
// Both still run through the shared elementwise driver.
#include <algorithm>
#include <cfloat>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/nn/clip_bounds.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

Traits ClipTraits(const OpContext& ctx) {
  ClipBounds bounds = DecodeClipBounds(ctx.node(), ctx.opset(), [&](size_t i) { return ctx.input_constant(i); });
  // A bound given by an input whose value is not known statically is "?" (NaN).
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> lo = bounds.lo_known ? bounds.lo : unknown;
  std::optional<double> hi = bounds.hi_known ? bounds.hi : unknown;
  auto text = [](const std::optional<double>& b, const char* none) -> std::string {
    if (!b) return none;
    return std::isnan(*b) ? std::string("?") : absl::StrCat(*b);
  };
  const bool no_lo = !lo || *lo <= -FLT_MAX, no_hi = !hi || *hi >= FLT_MAX;
  if (no_lo && no_hi) {
    return PointwiseTraits(ctx, PointwiseInfo("Clip", "y = x (no bounds)")
                                    .Linear()
                                    .Invertible()
                                    .RemovableWhen("always: no bounds given"));
  }
  std::string name = "Clip";
  if (lo && *lo == 0 && (no_hi || (hi && *hi == 6))) name = no_hi ? "ReLU" : "ReLU6";
  PointwiseInfo info(name, absl::StrCat("y = min(max(x, ", text(lo, "-∞"), "), ",
                                        text(hi, "∞"), ")"));
  info.Irreversible()
      .Collapses(CollapseKind::kClampsRange,
                 absl::StrCat(no_lo ? "" : "values below min mapped to min",
                              !no_lo && !no_hi ? ", " : "",
                              no_hi ? "" : "values above max mapped to max"))
      .FusesWith(ActivationFusions())
      .RemovableWhen("the bounds cover the input's range (e.g. min 0 after Relu, Sigmoid)");
  return PointwiseTraits(ctx, info);
}

absl::Status InferClip(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(InferSameAsInput(ctx, TypeSet::kNumeric));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    DType t = ctx.input_dtype(i);
    if (t != DType::kUndefined && ctx.input_dtype(0) != DType::kUndefined &&
        t != ctx.input_dtype(0)) {
      return ctx.Error("bound ", i, " has dtype ", DTypeName(t), ", input has ",
                       DTypeName(ctx.input_dtype(0)));
    }
    if (ctx.input_shape(i).has_rank() && ctx.input_shape(i).rank() > 1) {
      return ctx.Error("bound ", i, " must be a scalar, has shape ", ctx.input_shape(i).ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status ClipKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
  const Tensor& x0 = ctx.input(0);
  Tensor x = WidenToFloat(x0);
  // Bounds in the input's (widened) dtype; absent means unbounded on that side.
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.opset() >= 11 && ctx.has_input(i) && ctx.input(i).num_elements() != 1) {
      return ctx.Error("bound ", i, " must hold one value");
    }
  }
  ClipBounds bounds = DecodeClipBounds(ctx.node(), ctx.opset(), [&](size_t i) { return &ctx.input(i); });
  std::optional<Tensor> bound[2];
  for (int i = 0; i < 2; ++i) {
    const std::optional<double>& b = i == 0 ? bounds.lo : bounds.hi;
    // Through the input's own dtype first, so integer bounds stay exact.
    if (b && ctx.opset() >= 11) {
      bound[i] = ConvertTensor(WidenToFloat(ctx.input(i + 1)), x.dtype());
    } else if (b) {
      bound[i] = ConvertTensor(Tensor::Scalar<float>(static_cast<float>(*b)), x.dtype());
    }
  }
  Tensor y;
  absl::Status s = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T lo = bound[0] ? bound[0]->template data<T>()[0] : std::numeric_limits<T>::lowest();
    T hi = bound[1] ? bound[1]->template data<T>()[0] : std::numeric_limits<T>::max();
    // numpy's clip: min first, then max wins when min > max.
    y = MapUnary<T, T>(x, x.dtype(), [lo, hi](T v) {
      if (IsNanValue(v)) return v;
      return std::min(std::max(v, lo), hi);
    });
  });
  if (!s.ok()) return ctx.Unimplemented(s.message());
  ctx.set_output(0, NarrowFromFloat(y, x0.dtype()));
  return absl::OkStatus();
}

// Before opset 7 a 1-D slope of x's channel count applied per channel (axis
// 1, as Caffe does), not numpy-style along the last axis: pad it with 1s.
std::vector<int64_t> PReluSlopeDims(int64_t opset, const std::vector<int64_t>& x,
                                    std::vector<int64_t> slope) {
  if (opset >= 7 || slope.size() != 1 || slope[0] == 1 || x.size() < 2) return slope;
  slope.resize(x.size() - 1, 1);
  return slope;
}

absl::Status PReluKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
  const Tensor& x0 = ctx.input(0);
  Tensor x = WidenToFloat(x0);
  Tensor a = WidenToFloat(ctx.input(1));
  if (a.dtype() != x.dtype()) {
    return ctx.Error("slope dtype ", DTypeName(ctx.input(1).dtype()), " differs from x's ",
                     DTypeName(x0.dtype()));
  }
  a = a.WithDims(PReluSlopeDims(ctx.opset(), x.dims(), a.dims()));
  absl::StatusOr<Tensor> y;
  absl::Status s = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    y = MapBinary<T, T, T>(x, a, x.dtype(), [](T v, T k) { return v < T(0) ? v * k : v; });
  });
  if (!s.ok()) return ctx.Unimplemented(s.message());
  if (!y.ok()) return ctx.Error(y.status().message());
  if (y->dims() != x.dims()) return ctx.Error("slope does not broadcast to x");
  ctx.set_output(0, NarrowFromFloat(*y, x0.dtype()));
  return absl::OkStatus();
}

absl::Status InferPRelu(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(InferSameAsInput(ctx, TypeSet::kNumeric));
  if (ctx.has_input(1) && ctx.input_shape(0).has_rank() && ctx.input_shape(1).has_rank()) {
    Shape slope = ctx.input_shape(1);
    if (ctx.opset() < 7 && slope.rank() == 1 && ctx.input_shape(0).rank() >= 2) {
      std::vector<Dim> dims = slope.dims();
      dims.resize(static_cast<size_t>(ctx.input_shape(0).rank() - 1), Dim(1));
      slope = Shape(std::move(dims));
    }
    absl::StatusOr<Shape> b = BroadcastShapes({ctx.input_shape(0), slope},
                                              [&ctx] { return ctx.FreshDim(); });
    if (!b.ok()) return ctx.Error("slope does not broadcast to x: ", b.status().message());
    if (b->rank() != ctx.input_shape(0).rank()) {
      return ctx.Error("slope has higher rank than x");
    }
  }
  return absl::OkStatus();
}

Traits PReluTraits(const OpContext& ctx) {
  const Tensor* slope = ctx.input_constant(1);
  PointwiseInfo info("PReLU", "y = x if x ≥ 0 else a·x (learned a)");
  info.FusesWith(ActivationFusions());
  if (slope != nullptr && AllNonZero(*slope)) {
    info.Invertible();
  } else if (slope != nullptr) {
    info.Irreversible().Collapses(CollapseKind::kClampsRange,
                                  "negative half mapped to 0 where the slope is 0");
  }
  Traits t = PointwiseTraits(ctx, info);
  t.trainable = slope != nullptr;
  return t;
}

}  // namespace

void RegisterParametricActivationOps(OpRegistry& r) {
  r.Register(MakeOpDef("Clip", 1, InferClip, ClipTraits, ElementwiseCostFn(2), ClipKernel));
  r.Register(MakeOpDef(
      "PRelu", 1, InferPRelu, PReluTraits,
      [](const OpContext& ctx) {
        Cost c = ElementwiseCost(ctx, 2);  // compare + multiply
        if (const Tensor* s = ctx.input_constant(1)) c.params = s->num_elements();
        return c;
      },
      PReluKernel));
}

}  // namespace aic

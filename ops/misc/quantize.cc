// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor or per
// axis) and DynamicQuantizeLinear. Rounding is to nearest, ties to even, in
// float32 as numpy does it, so the suite's tie cases (x/s exactly k + 0.5)
// come out equal.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

bool IsQuantizedType(DType t) { return t == DType::kUint8 || t == DType::kInt8; }

// Range of the integer type a value saturates into.
std::pair<double, double> QuantRange(DType t) {
  if (t == DType::kInt8) return {-128, 127};
  if (t == DType::kInt32) return {-2147483648.0, 2147483647.0};
  return {0, 255};
}

// Scale and zero point per element of x: per tensor (scalar or 1-element
// scale) or per axis (1-D scale along `axis`).
struct QuantParams {
  std::vector<double> scale, zero;  // one entry per channel
  int64_t inner = 1;                // elements per channel step
  int64_t channels = 1;

  size_t ChannelOf(int64_t i) const {
    return channels == 1 ? 0 : static_cast<size_t>((i / inner) % channels);
  }
};

absl::StatusOr<QuantParams> ReadQuantParams(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  QuantParams q;
  q.scale = ToDoubles(scale);
  q.zero.assign(q.scale.size(), 0.0);
  if (ctx.has_input(2)) {
    q.zero = ToDoubles(ctx.input(2));
    if (q.zero.size() != q.scale.size()) return ctx.Error("scale and zero point sizes differ");
  }
  if (scale.num_elements() == 1 && scale.rank() <= 1) return q;
  if (scale.rank() != 1) return ctx.Error("scale must be a scalar or 1-D");
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 1), x.rank());
  if (!axis.ok()) return ctx.Error("axis out of range for rank ", x.rank());
  if (x.dim(*axis) != scale.num_elements()) {
    return ctx.Error("per-axis scale has ", scale.num_elements(), " entries, axis ", *axis,
                     " has ", x.dim(*axis));
  }
  q.channels = scale.num_elements();
  for (int64_t d = *axis + 1; d < x.rank(); ++d) q.inner *= x.dim(d);
  return q;
}

absl::Status QuantizeKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}, {2}));
  const Tensor& x = ctx.input(0);
  AIC_ASSIGN_OR_RETURN(QuantParams q, ReadQuantParams(ctx));
  const DType out_type = ctx.has_input(2) ? ctx.input(2).dtype() : DType::kUint8;
  if (!IsQuantizedType(out_type)) return ctx.Unimplemented("quantizing to ", DTypeName(out_type));
  const auto [lo, hi] = QuantRange(out_type);
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const size_t c = q.ChannelOf(i);
    // float32 division and nearbyint (ties to even) mirror numpy.
    const float v = static_cast<float>(x.ElementAsDouble(i)) / static_cast<float>(q.scale[c]);
    y[static_cast<size_t>(i)] = std::clamp(std::nearbyint(v) + q.zero[c], lo, hi);
  }
  ctx.set_output(0, FromDoubles(y, x.dims(), out_type));
  return absl::OkStatus();
}

absl::Status DequantizeKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}, {2}));
  const Tensor& x = ctx.input(0);
  AIC_ASSIGN_OR_RETURN(QuantParams q, ReadQuantParams(ctx));
  std::vector<double> y(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const size_t c = q.ChannelOf(i);
    const float diff = static_cast<float>(x.ElementAsDouble(i) - q.zero[c]);
    y[static_cast<size_t>(i)] = diff * static_cast<float>(q.scale[c]);
  }
  ctx.set_output(0, FromDoubles(y, x.dims(), ctx.input(1).dtype()));
  return absl::OkStatus();
}

// Scale and zero point chosen so that [min(x, 0), max(x, 0)] covers uint8.
absl::Status DynamicQuantizeKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& x = ctx.input(0);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("x dtype ", DTypeName(x.dtype()));
  std::vector<double> xs = ToDoubles(x);
  float mn = 0, mx = 0;
  for (double v : xs) {
    mn = std::min(mn, static_cast<float>(v));
    mx = std::max(mx, static_cast<float>(v));
  }
  const float scale = (mx - mn) / 255.0f;
  // All-zero input: scale 0; keep the zero point 0 and y 0 instead of NaNs.
  const float zero = scale == 0 ? 0 : std::clamp(std::nearbyint((0 - mn) / scale), 0.0f, 255.0f);
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    y[i] = scale == 0 ? zero
                      : std::clamp(std::nearbyint(static_cast<float>(xs[i]) / scale) + zero, 0.0f,
                                   255.0f);
  }
  ctx.set_output(0, FromDoubles(y, x.dims(), DType::kUint8));
  ctx.set_output(1, Tensor::Scalar<float>(scale));
  ctx.set_output(2, Tensor::Scalar<uint8_t>(static_cast<uint8_t>(zero)));
  return absl::OkStatus();
}

absl::Status InferQuantize(OpContext& ctx) {
  DType out = DType::kUint8;
  if (ctx.has_input(2) && ctx.input_type(2).known()) {
    out = ctx.input_dtype(2);
    if (!IsQuantizedType(out)) return ctx.Error("zero point must be uint8 or int8, got ", DTypeName(out));
  }
  ctx.set_output(0, out, ctx.input_shape(0));
  return absl::OkStatus();
}

absl::Status InferDequantize(OpContext& ctx) {
  if (ctx.input_type(0).known() && !IsQuantizedType(ctx.input_dtype(0)) &&
      ctx.input_dtype(0) != DType::kInt32) {
    return ctx.Error("x must be int8, uint8 or int32, got ", DTypeName(ctx.input_dtype(0)));
  }
  DType out = ctx.input_type(1).known() ? ctx.input_dtype(1) : DType::kFloat;
  ctx.set_output(0, out, ctx.input_shape(0));
  return absl::OkStatus();
}

absl::Status InferDynamicQuantize(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "x"));
  ctx.set_output(0, DType::kUint8, ctx.input_shape(0));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat, Shape::Scalar());
  if (ctx.num_outputs() > 2) ctx.set_output(2, DType::kUint8, Shape::Scalar());
  return absl::OkStatus();
}

std::string TypeChange(const OpContext& ctx) {
  return absl::StrCat(DTypeName(ctx.input_dtype(0)), " → ",
                      ctx.num_outputs() > 0 ? DTypeName(ctx.output_type(0).dtype) : "?");
}

Traits QuantizeTraits(const OpContext& ctx, bool dynamic) {
  Traits t;
  t.semantic_name = "Quantize";
  t.meaning = dynamic ? "s = (max(x,0) − min(x,0))/255, z = round(−min(x,0)/s); "
                        "y = saturate(round(x/s) + z)"
                      : "y = saturate(round(x / s) + z)";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kQuantizes;
  t.collapse_how = "each step of width s maps to one integer; values past the type's range saturate";
  t.effect = RepresentationEffect::kRestricts;
  t.effect_detail = TypeChange(ctx);
  t.elementwise = !dynamic;
  t.fuses_with = {"DequantizeLinear"};
  t.safe_transform_when = "a Q/DQ pair may be removed only as an approximate rewrite";
  return t;
}

Traits DequantizeTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Dequantize";
  t.meaning = "y = (x − z) · s";
  t.linearity = Linearity::kAffine;
  t.invertibility = Invertibility::kInvertible;  // injective for a nonzero scale
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = TypeChange(ctx);
  t.elementwise = true;
  t.fuses_with = {"QuantizeLinear", "MatMul", "Conv", "Gemm"};
  t.safe_transform_when = "folds into a following integer op when s and z are constant";
  return t;
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "QuantizeLinear",
      .since_version = 10,
      .infer = InferQuantize,
      .traits = [](const OpContext& ctx) { return QuantizeTraits(ctx, false); },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 3); },
      .kernel = QuantizeKernel,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "DequantizeLinear",
      .since_version = 10,
      .infer = InferDequantize,
      .traits = DequantizeTraits,
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 2); },
      .kernel = DequantizeKernel,
  });
  r.Register(OpDef{
      .domain = "",
      .op_type = "DynamicQuantizeLinear",
      .since_version = 11,
      .infer = InferDynamicQuantize,
      .traits = [](const OpContext& ctx) { return QuantizeTraits(ctx, true); },
      // min, max, then divide, round, add, clamp per element.
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 6); },
      .kernel = DynamicQuantizeKernel,
  });
}

}  // namespace aic

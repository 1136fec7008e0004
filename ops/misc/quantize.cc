// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor, per
// axis or blocked, to and from 8-, 16-, 4- and 2-bit integers, float8 and
// float4e2m1) and DynamicQuantizeLinear. One registration covers opsets
// 10-25: the later attributes (saturate, block_size, output_dtype,
// precision) default to what the earlier opsets did. Division, rounding and
// multiplication follow onnx.reference in float32 (as numpy computes them),
// so ties (x/s exactly k + 0.5, rounded to even) come out equal.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/float_convert.h"
#include "ops/util/small_float.h"
#include "support/half.h"

namespace aic {

namespace {

bool IsFloat8(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ;
}

// Integer quantized types and the range each saturates into.
bool IntRange(DType t, double* lo, double* hi) {
  switch (t) {
    case DType::kUint8: *lo = 0; *hi = 255; return true;
    case DType::kInt8: *lo = -128; *hi = 127; return true;
    case DType::kUint16: *lo = 0; *hi = 65535; return true;
    case DType::kInt16: *lo = -32768; *hi = 32767; return true;
    case DType::kUint4: *lo = 0; *hi = 15; return true;
    case DType::kInt4: *lo = -8; *hi = 7; return true;
    case DType::kUint2: *lo = 0; *hi = 3; return true;
    case DType::kInt2: *lo = -2; *hi = 1; return true;
    default: return false;
  }
}

bool IsQuantizedType(DType t) {
  double lo = 0, hi = 0;
  return IntRange(t, &lo, &hi) || IsFloat8(t) || t == DType::kFloat4E2M1;
}

// Values of any numeric tensor, the small types included, as doubles.
std::vector<double> Values(const Tensor& t) {
  return ToDoubles(IsOpaqueStorageOnly(t.dtype()) ? WidenSmall(t) : t);
}

// QuantizeLinear's y type: y_zero_point's, else `output_dtype` (opset 21+),
// else uint8. `zero_type` is kUndefined when there is no (typed) zero point.
absl::StatusOr<DType> QuantizedTypeOf(const Node& node, DType zero_type) {
  const auto attr = static_cast<DType>(node.GetInt("output_dtype", 0));
  if (zero_type != DType::kUndefined && attr != DType::kUndefined && attr != zero_type) {
    return absl::InvalidArgumentError(absl::StrCat("output_dtype ", DTypeName(attr),
                                                   " differs from the zero point's ", DTypeName(zero_type)));
  }
  const DType t = zero_type != DType::kUndefined ? zero_type
                  : attr != DType::kUndefined    ? attr
                                                 : DType::kUint8;
  if (!IsQuantizedType(t)) {
    return absl::InvalidArgumentError(absl::StrCat(DTypeName(t), " is not a quantized type"));
  }
  return t;
}

// Which scale (and zero point) entry element i of x uses: one for the whole
// tensor, one per index along `axis`, or one per block of `block` indices
// along `axis` (the scale then has x's rank, ceil(D/block) along axis).
struct QuantLayout {
  enum class Kind { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  int64_t dim = 1;         // x's extent along axis
  int64_t inner = 1;       // elements per step along axis
  int64_t scale_dim = 1;   // the scale's extent along axis (blocked)
  int64_t block = 1;

  int64_t ScaleIndex(int64_t i) const {
    switch (kind) {
      case Kind::kTensor: return 0;
      case Kind::kAxis: return (i / inner) % dim;
      case Kind::kBlocked: {
        const int64_t outer = i / (dim * inner), along = (i / inner) % dim, in = i % inner;
        return (outer * scale_dim + along / block) * inner + in;
      }
    }
    return 0;
  }
};

absl::StatusOr<QuantLayout> LayoutOf(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  QuantLayout l;
  // Shapes may differ where both are one element ([] and [1]): each is a scalar then.
  if (ctx.has_input(2) && ctx.input(2).dims() != scale.dims() &&
      !(ctx.input(2).num_elements() == 1 && scale.num_elements() == 1)) {
    return ctx.Error("zero point shape ", DimsToString(ctx.input(2).dims()), " differs from the scale's ",
                     DimsToString(scale.dims()));
  }
  if (scale.num_elements() == 1) return l;  // a scalar or any 1-element shape
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 1), x.rank());
  if (!axis.ok()) return ctx.Error("axis out of range for rank ", x.rank());
  l.dim = x.dim(*axis);
  for (int64_t d = *axis + 1; d < x.rank(); ++d) l.inner *= x.dim(d);
  const int64_t block = ctx.node().GetInt("block_size", 0);
  if (block < 0) return ctx.Error("block_size ", block, " is negative");
  if (block == 0) {
    if (scale.rank() != 1 || scale.num_elements() != l.dim) {
      return ctx.Error("per-axis scale of shape ", DimsToString(scale.dims()), " does not match axis ", *axis,
                       " of ", DimsToString(x.dims()));
    }
    l.kind = QuantLayout::Kind::kAxis;
    return l;
  }
  l.kind = QuantLayout::Kind::kBlocked;
  l.block = block;
  bool fits = scale.rank() == x.rank();
  for (int64_t d = 0; fits && d < x.rank(); ++d) {
    fits = d == *axis ? scale.dim(d) == (l.dim + block - 1) / block : scale.dim(d) == x.dim(d);
  }
  if (!fits) {
    return ctx.Error("blocked scale of shape ", DimsToString(scale.dims()), " does not fit ",
                     DimsToString(x.dims()), " with block_size ", block, " along axis ", *axis);
  }
  l.scale_dim = scale.dim(*axis);
  return l;
}

absl::Status RequireTensors(const KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) {
      if (i < 2) return ctx.Error("input ", i, " is required");
      continue;
    }
    if (!ctx.input_value(i).is_tensor() || ctx.input(i).dtype() == DType::kUndefined ||
        ctx.input(i).dtype() == DType::kString ||
        ctx.input(i).dtype() == DType::kComplex64 || ctx.input(i).dtype() == DType::kComplex128) {
      return ctx.Error("input ", i, " must be a numeric tensor");
    }
  }
  return absl::OkStatus();
}

// x / s rounded as numpy computes it in `precision` (a float32 division,
// then rounded to half or bfloat16 when that is the precision).
double Divide(double x, double s, DType precision) {
  if (precision == DType::kDouble) return x / s;
  const float q = static_cast<float>(x) / static_cast<float>(s);
  if (precision == DType::kFloat16) return HalfToFloat(FloatToHalf(q));
  if (precision == DType::kBFloat16) return BFloat16ToFloat(FloatToBFloat16(q));
  return q;
}

absl::Status QuantizeKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensors(ctx));
  const Tensor& x = ctx.input(0);
  absl::StatusOr<DType> out_type =
      QuantizedTypeOf(ctx.node(), ctx.has_input(2) ? ctx.input(2).dtype() : DType::kUndefined);
  if (!out_type.ok()) return ctx.Error(out_type.status().message());
  AIC_ASSIGN_OR_RETURN(QuantLayout layout, LayoutOf(ctx));
  const std::vector<double> xs = Values(x), scale = Values(ctx.input(1));
  const std::vector<double> zero = ctx.has_input(2) ? Values(ctx.input(2)) : std::vector<double>(scale.size(), 0.0);
  // The division runs in `precision` (opset 23+), else in y_scale's type.
  const int64_t precision_attr = ctx.node().GetInt("precision", 0);
  const DType precision = precision_attr != 0 ? static_cast<DType>(precision_attr) : ctx.input(1).dtype();
  SmallCastOptions opts;
  opts.saturate = ctx.node().GetInt("saturate", 1) != 0;
  const int64_t n = x.num_elements();
  double lo = 0, hi = 0;
  if (IntRange(*out_type, &lo, &hi)) {
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const size_t c = static_cast<size_t>(layout.ScaleIndex(i));
      const double q = Divide(xs[static_cast<size_t>(i)], scale[c], precision);
      // NaN: numpy's int32 conversion gives INT_MIN, which saturates to lo.
      y[static_cast<size_t>(i)] = std::isnan(q) ? lo : std::clamp(std::nearbyint(q) + zero[c], lo, hi);
    }
    ctx.set_output(0, FromDoubles(y, x.dims(), *out_type));
    return absl::OkStatus();
  }
  Tensor y(*out_type, x.dims());
  for (int64_t i = 0; i < n; ++i) {
    const size_t c = static_cast<size_t>(layout.ScaleIndex(i));
    double q = Divide(xs[static_cast<size_t>(i)], scale[c], precision);
    // float8 ignores its (zero) zero point, float4 adds it, as onnx.reference does.
    if (*out_type == DType::kFloat4E2M1) q = static_cast<float>(q) + static_cast<float>(zero[c]);
    SetSmallBits(y, i, EncodeSmallFloat(*out_type, q, opts));
  }
  ctx.set_output(0, std::move(y));
  return absl::OkStatus();
}

// DequantizeLinear's y type: `output_dtype` (opset 23+), else x_scale's.
absl::StatusOr<DType> DequantizedTypeOf(const Node& node, DType scale_type) {
  const auto attr = static_cast<DType>(node.GetInt("output_dtype", 0));
  const DType t = attr != DType::kUndefined ? attr : scale_type;
  if (t != DType::kFloat && t != DType::kFloat16 && t != DType::kBFloat16) {
    return absl::InvalidArgumentError(
        absl::StrCat("output type ", DTypeName(t), " is not float, float16 or bfloat16",
                     attr == DType::kUndefined ? " (set output_dtype)" : ""));
  }
  return t;
}

absl::Status DequantizeKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensors(ctx));
  const Tensor& x = ctx.input(0);
  if (!IsQuantizedType(x.dtype()) && x.dtype() != DType::kInt32) {
    return ctx.Error("x must be a quantized type or int32, got ", DTypeName(x.dtype()));
  }
  absl::StatusOr<DType> out_type = DequantizedTypeOf(ctx.node(), ctx.input(1).dtype());
  if (!out_type.ok()) return ctx.Error(out_type.status().message());
  AIC_ASSIGN_OR_RETURN(QuantLayout layout, LayoutOf(ctx));
  const std::vector<double> scale = Values(ctx.input(1));
  std::vector<double> zero(scale.size(), 0.0);
  const bool has_zero = ctx.has_input(2);
  if (has_zero && IsFloat8(x.dtype())) {
    for (double z : Values(ctx.input(2))) {
      if (z != 0) return ctx.Error("a float8 zero point must be 0, got ", z);
    }
  } else if (has_zero && x.dtype() != DType::kFloat4E2M1) {  // float4's is ignored, as onnx.reference does
    if (ctx.input(2).dtype() != x.dtype()) {
      return ctx.Error("zero point is ", DTypeName(ctx.input(2).dtype()), ", x is ", DTypeName(x.dtype()));
    }
    zero = Values(ctx.input(2));
  }
  // numpy: float32(x) - int32 zero point promotes to float64; every other
  // combination stays in float32.
  const bool in_double = x.dtype() == DType::kInt32 && has_zero;
  if (!in_double && *out_type == DType::kFloat && layout.kind != QuantLayout::Kind::kBlocked &&
      (x.dtype() == DType::kInt8 || x.dtype() == DType::kUint8 || x.dtype() == DType::kInt32)) {
    // The common case in float32 directly, the same arithmetic without the
    // per-element double round trip: folding the int8 weights of a QDQ
    // ResNet-50 (25 M elements) took 0.45 s of opt's 1.05 s that way.
    Tensor y(DType::kFloat, x.dims());
    float* out = y.mutable_data<float>();
    auto run = [&](const auto* in) {
      const int64_t n = x.num_elements();
      const int64_t inner = layout.kind == QuantLayout::Kind::kAxis ? layout.inner : n;
      const int64_t channels = static_cast<int64_t>(scale.size());
      for (int64_t start = 0, c = 0; start < n; start += inner, c = (c + 1) % channels) {
        const float z = static_cast<float>(zero[static_cast<size_t>(c)]);
        const float k = static_cast<float>(scale[static_cast<size_t>(c)]);
        for (int64_t i = start; i < start + inner && i < n; ++i) out[i] = (static_cast<float>(in[i]) - z) * k;
      }
    };
    if (x.dtype() == DType::kInt8) run(x.data<int8_t>());
    else if (x.dtype() == DType::kUint8) run(x.data<uint8_t>());
    else run(x.data<int32_t>());
    ctx.set_output(0, std::move(y));
    return absl::OkStatus();
  }
  const std::vector<double> xs = Values(x);
  std::vector<double> y(xs.size());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const size_t c = static_cast<size_t>(layout.ScaleIndex(i));
    const float xf = static_cast<float>(xs[static_cast<size_t>(i)]);
    y[static_cast<size_t>(i)] =
        in_double ? (static_cast<double>(xf) - zero[c]) * scale[c]
                  : (xf - static_cast<float>(zero[c])) * static_cast<float>(scale[c]);
  }
  ctx.set_output(0, FromDoubles(y, x.dims(), *out_type));
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
  const bool zero_known = ctx.has_input(2) && ctx.input_type(2).known();
  absl::StatusOr<DType> out = QuantizedTypeOf(ctx.node(), zero_known ? ctx.input_dtype(2) : DType::kUndefined);
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, *out, ctx.input_shape(0));
  return absl::OkStatus();
}

absl::Status InferDequantize(OpContext& ctx) {
  if (ctx.input_type(0).known() && !IsQuantizedType(ctx.input_dtype(0)) &&
      ctx.input_dtype(0) != DType::kInt32) {
    return ctx.Error("x must be a quantized type or int32, got ", DTypeName(ctx.input_dtype(0)));
  }
  if (ctx.node().GetInt("output_dtype", 0) == 0 && !ctx.input_type(1).known()) {
    ctx.set_output(0, DType::kFloat, ctx.input_shape(0));  // the usual scale type; a guess
    return absl::OkStatus();
  }
  absl::StatusOr<DType> out =
      DequantizedTypeOf(ctx.node(), ctx.input_type(1).known() ? ctx.input_dtype(1) : DType::kUndefined);
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, *out, ctx.input_shape(0));
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

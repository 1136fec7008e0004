// aic-onnx's fused ops for the elementwise steps of statically quantized
// models (domain "ai.aic"; sessions emit them, rewrite/rules/quantized_rules.cc).
// quantize_static leaves every activation, residual add and SE scale of a CNN
// as DequantizeLinear -> float ops -> QuantizeLinear; these ops compute the
// same function on the integers in one pass.
//
// - QLinearLookup(x, table): y = table[x] for an 8-bit x (index x, or x + 128
//   for int8). Any elementwise function of one 8-bit tensor has 256 values;
//   the rule computes them with the reference kernels of the ops it replaces,
//   so the lookup is bitwise what they compute.
// - QLinearAdd / QLinearMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
//   y_scale, y_zero_point), attribute fuse_relu: y = Q(relu?(DQ(a) op DQ(b)))
//   with numpy broadcasting, per-tensor scales, computed in float32 in the
//   order the QDQ graph computes it (DequantizeLinear's (x - z)·s, the float
//   op, max(·, 0), then QuantizeLinear's rounding of v / s), so it is bitwise
//   the pattern it replaces. (ONNX Runtime's com.microsoft ops of these names
//   requantize in fixed point instead; ours are not those.)
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/fused/standard_aliases.h"
#include "ops/registry.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// One 8-bit element as its integer value.
int Int8At(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? static_cast<int>(t.data<int8_t>()[i]) : static_cast<int>(t.data<uint8_t>()[i]);
}

absl::Status InferLookup(OpContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& table = ctx.input_type(1);
  if (x.dtype != DType::kUndefined && !IsEightBitInteger(x.dtype)) return ctx.Error("x must be int8 or uint8");
  if (table.dtype != DType::kUndefined && !IsEightBitInteger(table.dtype)) return ctx.Error("table must be int8 or uint8");
  if (table.shape.has_rank() && (table.shape.rank() != 1 || (table.shape[0].is_value() && table.shape[0].value() != 256))) {
    return ctx.Error("table must be 1-D with 256 entries");
  }
  ctx.set_output(0, table.dtype, x.shape);
  return absl::OkStatus();
}

absl::Status LookupKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& table = ctx.input(1);
  if (!IsEightBitInteger(x.dtype()) || !IsEightBitInteger(table.dtype()) || table.num_elements() != 256) {
    return ctx.Error("x must be 8-bit and table 8-bit with 256 entries");
  }
  const int offset = x.dtype() == DType::kInt8 ? 128 : 0;
  Tensor y(table.dtype(), x.dims());
  const auto* t = static_cast<const uint8_t*>(table.raw_data());
  auto* out = static_cast<uint8_t*>(y.mutable_raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = t[Int8At(x, i) + offset];
  ctx.set_output(0, std::move(y));
  return absl::OkStatus();
}

enum class BinaryOp { kAdd, kMul };

absl::Status InferBinary(OpContext& ctx) {
  for (size_t i : {0, 3}) {
    DType t = ctx.input_type(i).dtype;
    if (t != DType::kUndefined && !IsEightBitInteger(t)) return ctx.Error("input ", i, " must be int8 or uint8");
  }
  DType out = ctx.input_type(7).dtype;
  if (out != DType::kUndefined && !IsEightBitInteger(out)) return ctx.Error("y_zero_point must be int8 or uint8");
  int64_t counter = 0;
  AIC_ASSIGN_OR_RETURN(Shape s, BroadcastShapes({ctx.input_type(0).shape, ctx.input_type(3).shape}, [&] {
                         return Dim::Symbol(absl::StrCat("qbin_", counter++));
                       }));
  ctx.set_output(0, out, std::move(s));
  return absl::OkStatus();
}

// One scalar quantization parameter: a float scale or an 8-bit zero point.
absl::StatusOr<float> ScalarParam(KernelContext& ctx, size_t i, bool is_scale) {
  const Tensor& t = ctx.input(i);
  if (t.num_elements() != 1) return ctx.Error("input ", i, " must hold one value (per-tensor quantization)");
  if (is_scale && t.dtype() != DType::kFloat) return ctx.Error("scale ", i, " must be float");
  if (!is_scale && !IsEightBitInteger(t.dtype())) return ctx.Error("zero point ", i, " must be int8 or uint8");
  return static_cast<float>(t.ElementAsDouble(0));
}

absl::Status BinaryKernel(KernelContext& ctx, BinaryOp op) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  if (!IsEightBitInteger(a.dtype()) || !IsEightBitInteger(b.dtype())) return ctx.Error("a and b must be int8 or uint8");
  AIC_ASSIGN_OR_RETURN(float as, ScalarParam(ctx, 1, true));
  AIC_ASSIGN_OR_RETURN(float az, ScalarParam(ctx, 2, false));
  AIC_ASSIGN_OR_RETURN(float bs, ScalarParam(ctx, 4, true));
  AIC_ASSIGN_OR_RETURN(float bz, ScalarParam(ctx, 5, false));
  AIC_ASSIGN_OR_RETURN(float ys, ScalarParam(ctx, 6, true));
  AIC_ASSIGN_OR_RETURN(float yz, ScalarParam(ctx, 7, false));
  const DType out_type = ctx.input(7).dtype();
  const float lo = out_type == DType::kInt8 ? -128.0f : 0.0f;
  const float hi = out_type == DType::kInt8 ? 127.0f : 255.0f;
  const bool relu = ctx.node().GetInt("fuse_relu", 0) != 0;
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims({a.dims(), b.dims()}));
  Tensor y(out_type, dims);
  auto* out = static_cast<uint8_t*>(y.mutable_raw_data());
  BroadcastIterator it(dims, {a.dims(), b.dims()});
  for (int64_t i = 0; i < it.size(); ++i, it.Next()) {
    const float da = (static_cast<float>(Int8At(a, it.offset(0))) - az) * as;
    const float db = (static_cast<float>(Int8At(b, it.offset(1))) - bz) * bs;
    float v = op == BinaryOp::kAdd ? da + db : da * db;
    if (relu) v = v < 0 ? 0.0f : v;
    const float q = v / ys;
    const float r = std::isnan(q) ? lo : std::clamp(std::nearbyint(q) + yz, lo, hi);
    if (out_type == DType::kInt8) {
      reinterpret_cast<int8_t*>(out)[i] = static_cast<int8_t>(r);
    } else {
      out[i] = static_cast<uint8_t>(r);
    }
  }
  ctx.set_output(0, std::move(y));
  return absl::OkStatus();
}

Traits LookupTraits(const OpContext&) {
  Traits t;
  t.semantic_name = "QLinearLookup";
  t.meaning = "y = table[x]: an elementwise function of an 8-bit tensor, tabulated";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kQuantizes;
  t.collapse_how = "256 inputs onto at most 256 table entries";
  t.effect = RepresentationEffect::kPreserves;
  t.elementwise = true;
  return t;
}

Traits BinaryTraits(const OpContext& ctx, BinaryOp op) {
  Traits t;
  t.semantic_name = op == BinaryOp::kAdd ? "QLinearAdd" : "QLinearMul";
  t.meaning = op == BinaryOp::kAdd ? "y = Q(DQ(a) + DQ(b))" : "y = Q(DQ(a) · DQ(b))";
  if (ctx.node().GetInt("fuse_relu", 0) != 0) t.meaning = op == BinaryOp::kAdd ? "y = Q(max(DQ(a) + DQ(b), 0))" : "y = Q(max(DQ(a) · DQ(b), 0))";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kQuantizes;
  t.collapse_how = "the float result rounded to the output's quantization step";
  t.elementwise = true;
  return t;
}

}  // namespace

void RegisterQuantizedElementwiseOps(OpRegistry& r) {
  r.Register(OpDef{.domain = kAicDomain, .op_type = "QLinearLookup",
                   .since_version = 1,
                   .infer = InferLookup,
                   .traits = LookupTraits,
                   .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
                   .kernel = LookupKernel});
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMul}) {
    r.Register(OpDef{.domain = kAicDomain, .op_type = op == BinaryOp::kAdd ? "QLinearAdd" : "QLinearMul",
                     .since_version = 1,
                     .infer = InferBinary,
                     .traits = [op](const OpContext& ctx) { return BinaryTraits(ctx, op); },
                     .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 4); },
                     .kernel = [op](KernelContext& ctx) { return BinaryKernel(ctx, op); }});
  }
}

}  // namespace aic

// Cast and CastLike: dtype conversion, strings included. Value conversion is
// the shared ConvertTensor (C++ casts, numpy-style string parsing and
// printing), and ConvertSmall for the float8/float4/4- and 2-bit types with
// the node's `saturate` and `round_mode`; the traits tell widening casts
// (exact, invertible) from narrowing ones (a range of inputs rounds to one
// output: quantizing).
#include <cctype>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/registry.h"
#include "ops/util/small_float.h"
#include "support/half.h"

namespace aic {

namespace {

// Bits of exact integer magnitude a floating type holds (its mantissa + 1).
int MantissaBits(DType t) {
  switch (t) {
    case DType::kFloat16: return 11;
    case DType::kBFloat16: return 8;
    case DType::kFloat: return 24;
    case DType::kDouble: return 53;
    default: return 0;
  }
}

// Whether every value of a small type is exactly representable in `to`.
bool IsWideningFromSmall(DType from, DType to) {
  if (IsSmallInt(from)) {
    const bool is_signed = from == DType::kInt4 || from == DType::kInt2;
    return IsFloatingPoint(to) || (IsInteger(to) && (!is_signed || IsSignedInteger(to)));
  }
  // float8e8m0 spans 2^-127..2^127: beyond half's range, within bfloat16's.
  if (from == DType::kFloat8E8M0) return IsFloatingPoint(to) && to != DType::kFloat16;
  return IsFloatingPoint(to);  // at most 3 mantissa bits and 5 exponent bits
}

// Whether every value of `from` is exactly representable in `to`.
bool IsWidening(DType from, DType to) {
  if (from == to) return true;
  if (IsOpaqueStorageOnly(from)) return IsWideningFromSmall(from, to);
  if (from == DType::kBool) return IsInteger(to) || IsFloatingPoint(to);
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    return MantissaBits(to) > MantissaBits(from) &&
           !(from == DType::kFloat16 && to == DType::kBFloat16);  // bf16 has fewer mantissa bits
  }
  if (IsInteger(from) && IsInteger(to)) {
    const size_t a = ElementSize(from), b = ElementSize(to);
    if (IsSignedInteger(from) == IsSignedInteger(to)) return b >= a;
    return !IsSignedInteger(from) && b > a;  // unsigned fits a wider signed type
  }
  if (IsInteger(from) && IsFloatingPoint(to)) {
    const int magnitude_bits =
        static_cast<int>(ElementSize(from) * 8) - (IsSignedInteger(from) ? 1 : 0);
    return magnitude_bits <= MantissaBits(to);
  }
  return false;
}

Traits CastTraits(const OpContext& ctx, DType to) {
  const DType from = ctx.input_dtype(0);
  PointwiseInfo info("Cast", absl::StrCat("y = (", DTypeName(to), ") x"));
  if (from == DType::kUndefined || to == DType::kUndefined) {
    info.linearity = Linearity::kUnknown;
  } else if (from == to) {
    info.Linear().Invertible().RemovableWhen("always: the target dtype equals the input's");
  } else if (from == DType::kString || to == DType::kString) {
    info.linearity = Linearity::kUnknown;  // parsing/printing: not arithmetic
  } else if (IsWidening(from, to)) {
    info.Linear().Invertible().RemovableWhen(
        "followed by a Cast back to the input dtype (a widening round trip is exact)");
  } else {
    info.Irreversible().Collapses(
        CollapseKind::kQuantizes,
        absl::StrCat(DTypeName(from), " → ", DTypeName(to), ": values rounded or wrapped to ",
                     DTypeName(to)));
  }
  return PointwiseTraits(ctx, info);
}

bool Castable(DType t) {
  return IsFloatingPoint(t) || IsInteger(t) || t == DType::kBool || t == DType::kString ||
         IsOpaqueStorageOnly(t);
}

// `saturate` (Cast-19+) and `round_mode` (Cast-24+, float8e8m0 targets only).
absl::StatusOr<SmallCastOptions> SmallOptionsOf(const Node& node) {
  SmallCastOptions opts;
  opts.saturate = node.GetInt("saturate", 1) != 0;
  const std::string mode = node.GetString("round_mode", "up");
  if (mode == "up") {
    opts.round_mode = E8M0Rounding::kUp;
  } else if (mode == "down") {
    opts.round_mode = E8M0Rounding::kDown;
  } else if (mode == "nearest") {
    opts.round_mode = E8M0Rounding::kNearest;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("round_mode '", mode, "' is not up, down or nearest"));
  }
  return opts;
}

// Cast to bfloat16 truncates (TruncateToBFloat16, support/half.h: the ONNX
// 1.12 suite expects it); other conversions round.
Tensor CastToBFloat16(const Tensor& x) {
  Tensor f = ConvertTensor(x, DType::kFloat);
  Tensor out(DType::kBFloat16, f.dims());
  const float* in = f.data<float>();
  uint16_t* o = out.mutable_data<uint16_t>();
  for (int64_t i = 0; i < f.num_elements(); ++i) o[i] = TruncateToBFloat16(in[i]);
  return out;
}

absl::Status CastTo(KernelContext& ctx, DType to) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (!Castable(x.dtype()) || !Castable(to)) {
    return ctx.Unimplemented("cast from ", DTypeName(x.dtype()), " to ", DTypeName(to));
  }
  if (x.dtype() == to) {
    ctx.set_output(0, x);
  } else if (IsOpaqueStorageOnly(x.dtype()) || IsOpaqueStorageOnly(to)) {
    absl::StatusOr<SmallCastOptions> opts = SmallOptionsOf(ctx.node());
    if (!opts.ok()) return ctx.Error(opts.status().message());
    ctx.set_output(0, ConvertSmall(x, to, *opts));
  } else if (to == DType::kBFloat16 && x.dtype() != DType::kString) {
    ctx.set_output(0, CastToBFloat16(x));
  } else {
    ctx.set_output(0, ConvertTensor(x, to));
  }
  return absl::OkStatus();
}

absl::Status InferCastTo(OpContext& ctx, DType to) {
  if (!ctx.has_input(0)) return ctx.Error("missing input 0");
  ctx.set_output(0, to, ctx.input_shape(0));
  return absl::OkStatus();
}

absl::StatusOr<DType> TargetOf(const Node& node) {
  const Attribute* to = node.FindAttr("to");
  if (to == nullptr) return absl::InvalidArgumentError("missing attribute 'to'");
  int64_t v = to->type == AttrType::kString ? 0 : to->i;
  if (to->type == AttrType::kString) {  // opset 1 spelled the type as a string
    for (int32_t k = 1; k <= kMaxDTypeValue; ++k) {
      std::string name = DTypeName(static_cast<DType>(k));
      for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (name == to->s) v = k;
    }
  }
  if (v <= 0 || v > kMaxDTypeValue || !IsKnownDType(static_cast<int32_t>(v))) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'to' = ", v, " is not a dtype"));
  }
  return static_cast<DType>(v);
}

}  // namespace

void RegisterCastOps(OpRegistry& r) {
  r.Register(MakeOpDef(
      "Cast", 1,
      [](OpContext& ctx) -> absl::Status {
        absl::StatusOr<DType> to = TargetOf(ctx.node());
        if (!to.ok()) return ctx.Error(to.status().message());
        return InferCastTo(ctx, *to);
      },
      [](const OpContext& ctx) {
        absl::StatusOr<DType> to = TargetOf(ctx.node());
        return CastTraits(ctx, to.ok() ? *to : DType::kUndefined);
      },
      ElementwiseCostFn(0),
      [](KernelContext& ctx) -> absl::Status {
        absl::StatusOr<DType> to = TargetOf(ctx.node());
        if (!to.ok()) return ctx.Error(to.status().message());
        return CastTo(ctx, *to);
      }));
  r.Register(MakeOpDef(
      "CastLike", 15,
      [](OpContext& ctx) -> absl::Status {
        if (!ctx.has_input(1)) return ctx.Error("missing input 1 (target_type)");
        return InferCastTo(ctx, ctx.input_dtype(1));
      },
      [](const OpContext& ctx) { return CastTraits(ctx, ctx.input_dtype(1)); },
      ElementwiseCostFn(0),
      [](KernelContext& ctx) -> absl::Status {
        AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
        return CastTo(ctx, ctx.input(1).dtype());
      }));
}

}  // namespace aic

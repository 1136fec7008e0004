// BitCast (opset 26): the input's bytes read as another dtype of the same bit
// width (little endian, which is how every tensor is stored here). Unlike
// Cast, no value is converted, so the output is a view of the input's buffer.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/registry.h"

namespace aic {

namespace {

absl::StatusOr<DType> TargetDType(const Node& node) {
  const int64_t to = node.GetInt("to", 0);
  if (!IsKnownDType(static_cast<int32_t>(to)) || static_cast<DType>(to) == DType::kUndefined) {
    return absl::InvalidArgumentError(absl::StrCat("'to' is not a known dtype: ", to));
  }
  if (static_cast<DType>(to) == DType::kString) {
    return absl::InvalidArgumentError("BitCast to string is not defined");
  }
  return static_cast<DType>(to);
}

// Why `from` cannot be reinterpreted as `to`, or OK.
absl::Status CheckReinterpretable(DType from, DType to) {
  if (from == DType::kString) return absl::InvalidArgumentError("BitCast from string is not defined");
  if (BitsPerElement(from) != BitsPerElement(to)) {
    return absl::InvalidArgumentError(absl::StrCat("BitCast needs equal bit widths: ", DTypeName(from), " has ",
                                                   BitsPerElement(from), ", ", DTypeName(to), " has ",
                                                   BitsPerElement(to)));
  }
  return absl::OkStatus();
}

absl::Status InferBitCast(OpContext& ctx) {
  absl::StatusOr<DType> to = TargetDType(ctx.node());
  if (!to.ok()) return ctx.Error(to.status().message());
  const TypeInfo& in = ctx.input_type(0);
  if (in.known() && !in.is_tensor()) return ctx.Error("input must be a tensor, got ", in.ToString());
  if (in.known() && in.dtype != DType::kUndefined) {
    absl::Status s = CheckReinterpretable(in.dtype, *to);
    if (!s.ok()) return ctx.Error(s.message());
  }
  ctx.set_output(0, *to, in.known() ? in.shape : Shape::UnknownRank());
  return absl::OkStatus();
}

absl::Status BitCastKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
  absl::StatusOr<DType> to = TargetDType(ctx.node());
  if (!to.ok()) return ctx.Error(to.status().message());
  const Tensor& x = ctx.input(0);
  absl::Status s = CheckReinterpretable(x.dtype(), *to);
  if (!s.ok()) return ctx.Error(s.message());
  if (*to == DType::kBool) {
    // A bool byte other than 0 or 1 has no meaning to any reader of the output.
    const uint8_t* bytes = static_cast<const uint8_t*>(x.raw_data());
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (bytes[i] > 1) return ctx.Error("byte ", static_cast<int>(bytes[i]), " at ", i, " is not a bool");
    }
  }
  if (x.buffer() == nullptr) {  // no elements
    ctx.set_output(0, Tensor(*to, x.dims()));
    return absl::OkStatus();
  }
  ctx.set_output(0, Tensor(*to, x.dims(), x.buffer(), x.byte_offset()));
  return absl::OkStatus();
}

Traits BitCastTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "BitCast";
  absl::StatusOr<DType> to = TargetDType(ctx.node());
  t.meaning = absl::StrCat("y = bits of x read as ", to.ok() ? DTypeName(*to) : "?");
  // A bijection on bit patterns, but not on values: neither linear nor monotone.
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kInvertible;
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = "same bytes, another dtype";
  t.elementwise = true;
  t.removable_when = "followed by a BitCast back to the input's dtype";
  return t;
}

}  // namespace

void RegisterBitCastOps(OpRegistry& r) {
  r.Register(MakeOpDef("BitCast", 26, InferBitCast, BitCastTraits, ElementwiseCostFn(0), BitCastKernel));
}

}  // namespace aic

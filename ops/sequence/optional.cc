// The optional ops (opset 15): Optional wraps a tensor or sequence (or makes
// an empty optional of the attribute `type`), OptionalHasElement tests it,
// OptionalGetElement unwraps it. At run time an optional holding a value is
// just that value; an empty one is RuntimeValue::kNone. From opset 18 the
// last two also accept a plain tensor or sequence.
#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"
#include "ops/sequence/type_proto_decode.h"

namespace aic {

namespace {

absl::Status InferOptional(OpContext& ctx) {
  if (ctx.has_input(0)) {
    const TypeInfo& in = ctx.input_type(0);
    if (in.kind == TypeInfo::Kind::kOptional) return ctx.Error("input is already an optional");
    ctx.set_output_type(0, TypeInfo::OptionalOf(in));
    return absl::OkStatus();
  }
  const Attribute* type = ctx.node().FindAttr("type");
  if (type == nullptr) return ctx.Error("needs an input or a type attribute");
  if (type->type != AttrType::kTypeProto || type->opaque_protos.empty()) {
    return ctx.Error("attribute type must be a TypeProto");
  }
  absl::StatusOr<TypeInfo> element = DecodeTypeProto(type->opaque_protos[0]);
  if (!element.ok()) return ctx.Error(element.status().message());
  ctx.set_output_type(0, TypeInfo::OptionalOf(*element));
  return absl::OkStatus();
}

absl::Status RunOptional(KernelContext& ctx) {
  ctx.set_output_value(0, ctx.has_input(0) ? ctx.input_value(0) : RuntimeValue::None());
  return absl::OkStatus();
}

// Opsets 15-17 take only optionals; 18 also plain tensors and sequences.
absl::Status CheckOptionalInput(const OpContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (in.known() && in.kind != TypeInfo::Kind::kOptional && ctx.opset() < 18) {
    return ctx.Error("input must be an optional before opset 18, got ", in.ToString());
  }
  return absl::OkStatus();
}

absl::Status InferHasElement(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckOptionalInput(ctx));
  ctx.set_output(0, DType::kBool, Shape::Scalar());
  return absl::OkStatus();
}

absl::Status RunHasElement(KernelContext& ctx) {
  ctx.set_output(0, Tensor::Scalar<bool>(ctx.has_input(0)));
  return absl::OkStatus();
}

absl::Status InferGetElement(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckOptionalInput(ctx));
  if (!ctx.has_input(0)) return ctx.Error("needs an input");
  const TypeInfo& in = ctx.input_type(0);
  ctx.set_output_type(0, in.kind == TypeInfo::Kind::kOptional ? ElementType(in) : in);
  return absl::OkStatus();
}

absl::Status RunGetElement(KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("the optional is empty");
  ctx.set_output_value(0, ctx.input_value(0));
  return absl::OkStatus();
}

void Add(OpRegistry& r, const char* op, InferFn infer, Traits traits, KernelFn kernel) {
  r.Register(OpDef{.domain = "",
                   .op_type = op,
                   .since_version = 15,
                   .infer = std::move(infer),
                   .traits = [traits](const OpContext&) { return traits; },
                   .cost = ContainerCost,
                   .kernel = std::move(kernel)});
}

}  // namespace

void RegisterOptionalOps(OpRegistry& r) {
  Add(r, "Optional", InferOptional,
      ContainerTraits("Optional", "y = x as an optional (empty when x is absent)",
                      Linearity::kLinear, Invertibility::kInvertible),
      RunOptional);
  Add(r, "OptionalHasElement", InferHasElement,
      ContainerTraits("OptionalHasElement", "y = (x is present)", Linearity::kUnknown,
                      Invertibility::kIrreversible, CollapseKind::kSelects,
                      "only presence is kept"),
      RunHasElement);
  Add(r, "OptionalGetElement", InferGetElement,
      ContainerTraits("OptionalGetElement", "y = the value held by x (error when empty)",
                      Linearity::kLinear, Invertibility::kInvertible),
      RunGetElement);
}

}  // namespace aic

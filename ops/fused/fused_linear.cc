// aic-onnx's own fused ops (domain "ai.aic"), emitted by `aic-onnx opt
// --target aic` for our executors only. FusedLinearReLU(a, B, c) is
// Relu(Gemm(a, B, c)) with Gemm's attributes: shape inference and the
// reference kernel are Gemm's, followed by the ReLU, so the fused op is exactly
// as correct as the pair it replaces.
#include <algorithm>

#include "ops/fused/standard_aliases.h"
#include "ops/registry.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

constexpr int kGemmOpset = 13;  // the Gemm semantics the fused op carries

const OpDef& GemmDef() {
  const OpDef* def = OpRegistry::Global().Find("", "Gemm", kGemmOpset);
  AIC_CHECK(def != nullptr && def->infer && def->kernel, "Gemm must be registered");
  return *def;
}

// A context like `ctx` but with Gemm's opset (the fused op's own opset is 1).
OpContext AsGemm(const OpContext& ctx) {
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    types.push_back(ctx.input_type(i));
    consts.push_back(ctx.input_constant(i));
  }
  OpContext gemm(ctx.node(), kGemmOpset, types, consts, nullptr);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) gemm.set_output_type(i, ctx.output_type(i));
  return gemm;
}

absl::Status ReluInPlace(Tensor& t) {
  if (IsHalfType(t.dtype())) {
    Tensor f = WidenToFloat(t);
    for (float& v : f.mutable_span<float>()) v = std::max(v, 0.0f);
    t = NarrowFromFloat(f, t.dtype());
    return absl::OkStatus();
  }
  return DispatchNumeric(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& v : t.mutable_span<T>()) v = std::max(v, T(0));
  });
}

}  // namespace

void RegisterFusedOps(OpRegistry& r) {
  OpDef def;
  def.domain = kAicDomain;
  def.op_type = "FusedLinearReLU";
  def.since_version = 1;
  def.infer = [](OpContext& ctx) {
    OpContext gemm = AsGemm(ctx);
    AIC_RETURN_IF_ERROR(GemmDef().infer(gemm));
    ctx.set_output_type(0, gemm.output_type(0));
    return absl::OkStatus();
  };
  def.traits = [](const OpContext& ctx) {
    Traits t = GemmDef().traits ? GemmDef().traits(AsGemm(ctx)) : Traits();
    t.semantic_name = "FusedLinearReLU";
    t.meaning = "y = max(x·Wᵀ + b, 0)";
    t.linearity = Linearity::kNonlinear;
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kClampsRange;
    t.collapse_how = "negative half of the linear output mapped to 0";
    t.fuses_with.clear();
    return t;
  };
  def.cost = [](const OpContext& ctx) {
    Cost c = GemmDef().cost ? GemmDef().cost(AsGemm(ctx)) : Cost();
    if (c.known && ctx.output_type(0).shape.NumElements()) {
      c.flops += *ctx.output_type(0).shape.NumElements();  // the max(·, 0)
    }
    return c;
  };
  def.kernel = [](KernelContext& ctx) {
    std::vector<const RuntimeValue*> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      inputs.push_back(ctx.has_input(i) ? &ctx.input_value(i) : nullptr);
    }
    KernelContext gemm(ctx.node(), kGemmOpset, inputs, ctx.subgraph_runner());
    AIC_RETURN_IF_ERROR(GemmDef().kernel(gemm));
    Tensor y = gemm.outputs()[0].tensor;
    if (!y.buffer() || !y.buffer()->writable()) y = y.Clone();
    AIC_RETURN_IF_ERROR(ReluInPlace(y));
    ctx.set_output(0, std::move(y));
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

}  // namespace aic

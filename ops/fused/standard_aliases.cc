// ai.aic aliases of newer standard ops; see standard_aliases.h. Each hook
// forwards to the standard OpDef at the aliased version, so inference, traits,
// cost and the reference kernel are the standard op's, written once.
#include "ops/fused/standard_aliases.h"

#include <utility>
#include <vector>

#include "ops/registry.h"

namespace aic {

namespace {

struct Alias {
  const char* op_type;
  int version;
};
constexpr Alias kAliases[] = {{"Gelu", 20}, {"LayerNormalization", 17}, {"HardSwish", 14}, {"Swish", 24}, {"RMSNormalization", 23},
                               {"Attention", 23}, {"RotaryEmbedding", 23}, {"GroupNormalization", 21}};

const OpDef& StandardDef(const Alias& a) {
  const OpDef* def = OpRegistry::Global().Find("", a.op_type, a.version);
  AIC_CHECK(def != nullptr, "the aliased standard op must be registered");
  return *def;
}

// A context like `ctx` but at the standard op's opset (the alias's own opset is 1).
OpContext AtStandardOpset(const OpContext& ctx, int version) {
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    types.push_back(ctx.input_type(i));
    consts.push_back(ctx.input_constant(i));
  }
  OpContext out(ctx.node(), version, std::move(types), std::move(consts), nullptr);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) out.set_output_type(i, ctx.output_type(i));
  return out;
}

}  // namespace

std::optional<int> AicAliasVersion(std::string_view op_type) {
  for (const Alias& a : kAliases) {
    if (op_type == a.op_type) return a.version;
  }
  return std::nullopt;
}

std::vector<std::string_view> AicAliasOpTypes() {
  std::vector<std::string_view> ops;
  for (const Alias& a : kAliases) ops.push_back(a.op_type);
  return ops;
}

bool IsAicAlias(const Node& n) { return n.domain == kAicDomain && AicAliasVersion(n.op_type).has_value(); }

void RegisterStandardAliasOps(OpRegistry& r) {
  for (const Alias& a : kAliases) {
    OpDef def;
    def.domain = kAicDomain;
    def.op_type = a.op_type;
    def.since_version = 1;
    def.infer = [a](OpContext& ctx) {
      const OpDef& std_def = StandardDef(a);
      if (!std_def.infer) return absl::OkStatus();
      OpContext inner = AtStandardOpset(ctx, a.version);
      AIC_RETURN_IF_ERROR(std_def.infer(inner));
      for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_type(i, inner.output_type(i));
      return absl::OkStatus();
    };
    def.traits = [a](const OpContext& ctx) {
      const OpDef& std_def = StandardDef(a);
      if (!std_def.traits) {
        Traits t;
        t.semantic_name = a.op_type;
        return t;
      }
      return std_def.traits(AtStandardOpset(ctx, a.version));
    };
    def.cost = [a](const OpContext& ctx) {
      const OpDef& std_def = StandardDef(a);
      return std_def.cost ? std_def.cost(AtStandardOpset(ctx, a.version)) : Cost();
    };
    def.kernel = [a](KernelContext& ctx) {
      const OpDef& std_def = StandardDef(a);
      if (!std_def.kernel) return ctx.Unimplemented("no reference kernel for ", a.op_type);
      std::vector<const RuntimeValue*> inputs;
      for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.has_input(i) ? &ctx.input_value(i) : nullptr);
      KernelContext inner(ctx.node(), a.version, inputs, ctx.subgraph_runner());
      AIC_RETURN_IF_ERROR(std_def.kernel(inner));
      for (size_t i = 0; i < ctx.num_outputs() && i < inner.outputs().size(); ++i) {
        ctx.set_output_value(i, std::move(inner.outputs()[i]));
      }
      return absl::OkStatus();
    };
    r.Register(std::move(def));
  }
}

}  // namespace aic

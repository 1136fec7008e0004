// If: runs then_branch or else_branch on a boolean scalar. Its outputs take
// the union of the branch types (equal dims kept, others fresh) statically,
// and the taken branch's values at run time (tensors, sequences or optionals
// alike, since opsets 13 and 16 allow them).
#include "absl/strings/str_cat.h"
#include "ops/control/control_ops.h"
#include "ops/control/control_util.h"
#include "ops/registry.h"

namespace aic {

namespace {

absl::Status InferIf(OpContext& ctx) {
  const Graph* then_g = GraphAttr(ctx.node(), "then_branch");
  const Graph* else_g = GraphAttr(ctx.node(), "else_branch");
  if (then_g == nullptr || else_g == nullptr) {
    return ctx.Error("needs graph attributes then_branch and else_branch");
  }
  const TypeInfo& cond = ctx.input_type(0);
  if (cond.is_tensor() && cond.dtype != DType::kUndefined && cond.dtype != DType::kBool) {
    return ctx.Error("cond must be bool, got ", DTypeName(cond.dtype));
  }
  if (then_g->outputs().size() != else_g->outputs().size()) {
    return ctx.Error("then_branch has ", then_g->outputs().size(), " outputs but else_branch has ",
                     else_g->outputs().size());
  }
  if (ctx.num_outputs() > then_g->outputs().size()) {
    return ctx.Error("has ", ctx.num_outputs(), " outputs but its branches give ",
                     then_g->outputs().size());
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TypeInfo& a = then_g->outputs()[i]->type();
    const TypeInfo& b = else_g->outputs()[i]->type();
    if (a.is_tensor() && b.is_tensor() && a.dtype != DType::kUndefined &&
        b.dtype != DType::kUndefined && a.dtype != b.dtype) {
      return ctx.Error("output ", i, " is ", DTypeName(a.dtype), " in then_branch but ",
                       DTypeName(b.dtype), " in else_branch");
    }
    // A constant cond picks one branch: its type is exact.
    const Tensor* c = ctx.input_constant(0);
    if (c != nullptr && c->num_elements() == 1) {
      ctx.set_output_type(i, c->ElementAsDouble(0) != 0 ? a : b);
    } else {
      ctx.set_output_type(i, MergeTypes(a, b, ctx));
    }
  }
  return absl::OkStatus();
}

absl::Status RunIf(KernelContext& ctx) {
  const Graph* then_g = GraphAttr(ctx.node(), "then_branch");
  const Graph* else_g = GraphAttr(ctx.node(), "else_branch");
  if (then_g == nullptr || else_g == nullptr) {
    return ctx.Error("needs graph attributes then_branch and else_branch");
  }
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("cond is missing");
  const Tensor& cond = ctx.input(0);
  if (cond.num_elements() != 1) {
    return ctx.Error("cond must hold one element, got shape ", DimsToString(cond.dims()));
  }
  const Graph& branch = cond.ElementAsDouble(0) != 0 ? *then_g : *else_g;
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));
  AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, runner->RunSubgraph(branch, {}));
  if (outs.size() < ctx.num_outputs()) {
    return ctx.Error("branch '", branch.name, "' gave ", outs.size(), " outputs, node has ",
                     ctx.num_outputs());
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_value(i, std::move(outs[i]));
  return absl::OkStatus();
}

Traits IfTraits(const OpContext& ctx) {
  const Graph* then_g = GraphAttr(ctx.node(), "then_branch");
  const Graph* else_g = GraphAttr(ctx.node(), "else_branch");
  std::string meaning = "y = cond ? then_branch() : else_branch()";
  if (then_g != nullptr && else_g != nullptr) {
    meaning = absl::StrCat("y = cond ? then_branch (", then_g->TotalNodeCount(),
                           " nodes) : else_branch (", else_g->TotalNodeCount(), " nodes)");
  }
  return ControlFlowTraits("If", meaning, "cond is a constant (inline the taken branch)");
}

}  // namespace

void RegisterIfOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "If",
                   .since_version = 1,
                   .infer = InferIf,
                   .traits = IfTraits,
                   .cost = [](const OpContext& ctx) { return ControlFlowCost(ctx, true); },
                   .kernel = RunIf});
}

}  // namespace aic

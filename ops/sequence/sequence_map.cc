// SequenceMap (opset 17): runs its body once per position of the input
// sequence. Body input j gets element i of node input j when that input is a
// sequence (all such sequences have the same length), or the whole tensor when
// it is a tensor; body output k's results form output sequence k.
#include "absl/strings/str_cat.h"
#include "ops/control/control_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

namespace aic {

namespace {

absl::Status InferMap(OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  if (body->inputs().size() != ctx.num_inputs()) {
    return ctx.Error("body takes ", body->inputs().size(), " inputs, node has ", ctx.num_inputs());
  }
  if (body->outputs().size() < ctx.num_outputs()) {
    return ctx.Error("body gives ", body->outputs().size(), " outputs, node has ",
                     ctx.num_outputs());
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const TypeInfo& per_element = body->outputs()[k]->type();
    ctx.set_output_type(k, TypeInfo::SequenceOf(per_element));
  }
  return absl::OkStatus();
}

absl::Status RunMap(KernelContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* first, SequenceInput(ctx, 0));
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));
  if (body->inputs().size() != ctx.num_inputs() || body->outputs().size() < ctx.num_outputs()) {
    return ctx.Error("body's inputs/outputs do not match the node's");
  }
  const size_t n = first->sequence.size();
  for (size_t j = 1; j < ctx.num_inputs(); ++j) {
    const RuntimeValue& v = ctx.input_value(j);
    if (v.is_sequence() && v.sequence.size() != n) {
      return ctx.Error("input ", j, " has ", v.sequence.size(), " elements, input 0 has ", n);
    }
    if (!v.is_sequence() && !v.is_tensor()) return ctx.Error("input ", j, " is missing");
  }
  std::vector<std::vector<Tensor>> results(ctx.num_outputs());
  for (size_t i = 0; i < n; ++i) {
    std::vector<RuntimeValue> feeds;
    for (size_t j = 0; j < ctx.num_inputs(); ++j) {
      const RuntimeValue& v = ctx.input_value(j);
      feeds.emplace_back(v.is_sequence() ? v.sequence[i] : v.tensor);
    }
    AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, runner->RunSubgraph(*body, feeds));
    for (size_t k = 0; k < ctx.num_outputs(); ++k) {
      if (!outs[k].is_tensor()) return ctx.Error("body output ", k, " is not a tensor");
      results[k].push_back(std::move(outs[k].tensor));
    }
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    // The dtype of an empty result comes from the body's declaration.
    DType dtype = body->outputs()[k]->type().dtype;
    if (!results[k].empty()) dtype = results[k][0].dtype();
    ctx.set_output_value(k, RuntimeValue::Sequence(std::move(results[k]), dtype));
  }
  return absl::OkStatus();
}

Traits MapTraits(const OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  std::string meaning = "y[i] = body(seq[i], ...) for each i";
  if (body != nullptr) absl::StrAppend(&meaning, " (", body->TotalNodeCount(), " nodes)");
  return ControlFlowTraits("SequenceMap", meaning, "the body is an identity");
}

}  // namespace

void RegisterSequenceMapOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "SequenceMap",
                   .since_version = 17,
                   .infer = InferMap,
                   .traits = MapTraits,
                   .cost = [](const OpContext& ctx) { return ControlFlowCost(ctx, false); },
                   .kernel = RunMap});
}

}  // namespace aic

// Loop: a for/while loop over a body graph.
//   inputs  (M?, cond?, v_initial...)     M: max trip count, cond: keep going
//   body    (iteration_num, cond_in, v...) -> (cond_out, v..., scan...)
//   outputs (v_final..., scan_stacked...)
// With M absent the loop is a while loop; with cond absent the body's cond
// output is ignored (a for loop). Loop-carried values may be tensors,
// sequences or optionals (opsets 13 and 16); each scan output is stacked along
// a new leading axis, one row per iteration.
#include "absl/strings/str_cat.h"
#include "ops/control/control_ops.h"
#include "ops/control/control_util.h"
#include "ops/registry.h"

namespace aic {

namespace {

struct LoopLayout {
  size_t carried = 0;  // loop-carried values
  size_t scans = 0;    // scan outputs
};

absl::StatusOr<LoopLayout> Layout(const Node& node, const Graph& body, size_t num_inputs) {
  LoopLayout l;
  if (num_inputs < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Describe(), ": needs inputs M and cond (either may be empty)"));
  }
  l.carried = num_inputs - 2;
  if (body.inputs().size() != l.carried + 2 || body.outputs().size() < l.carried + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        node.Describe(), ": body takes ", body.inputs().size(), " inputs and gives ",
        body.outputs().size(), " outputs, but the node carries ", l.carried, " values"));
  }
  l.scans = body.outputs().size() - 1 - l.carried;
  if (node.num_outputs() > l.carried + l.scans) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": has ", node.num_outputs(),
                                                   " outputs, body gives ", l.carried + l.scans));
  }
  return l;
}

// The trip count when it is exactly known: M constant and no cond to stop early.
std::optional<int64_t> StaticTripCount(const OpContext& ctx) {
  if (!ctx.has_input(0) || ctx.has_input(1)) return std::nullopt;
  const Tensor* m = ctx.input_constant(0);
  if (m == nullptr || m->num_elements() != 1) return std::nullopt;
  return std::max<int64_t>(0, static_cast<int64_t>(m->ElementAsDouble(0)));
}

absl::Status InferLoop(OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_ASSIGN_OR_RETURN(LoopLayout l, Layout(ctx.node(), *body, ctx.num_inputs()));
  const TypeInfo& m = ctx.input_type(0);
  if (ctx.has_input(0) && m.is_tensor() && m.dtype != DType::kUndefined &&
      m.dtype != DType::kInt64) {
    return ctx.Error("M must be int64, got ", DTypeName(m.dtype));
  }
  const std::optional<int64_t> trips = StaticTripCount(ctx);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TypeInfo& from_body = body->outputs()[1 + i]->type();
    if (i < l.carried) {
      // The final value is the initial one after zero iterations, the body's after more.
      ctx.set_output_type(i, MergeTypes(ctx.input_type(2 + i), from_body, ctx));
    } else {
      const Dim rows = trips.has_value() ? Dim(*trips) : ctx.FreshDim();
      ctx.set_output_type(i, StackedType(from_body, rows, 0));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ReadBool(const RuntimeValue& v, const char* what) {
  if (!v.is_tensor() || v.tensor.num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a one-element tensor"));
  }
  return v.tensor.ElementAsDouble(0) != 0;
}

absl::Status RunLoop(KernelContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_ASSIGN_OR_RETURN(LoopLayout l, Layout(ctx.node(), *body, ctx.num_inputs()));
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));

  std::optional<int64_t> max_trips;
  if (ctx.has_input(0)) {
    const RuntimeValue& m = ctx.input_value(0);
    if (!m.is_tensor() || m.tensor.num_elements() != 1) return ctx.Error("M must be a scalar");
    max_trips = static_cast<int64_t>(m.tensor.ElementAsDouble(0));
  }
  const bool has_cond = ctx.has_input(1);
  bool cond = true;
  if (has_cond) {
    absl::StatusOr<bool> c = ReadBool(ctx.input_value(1), "cond");
    if (!c.ok()) return ctx.Error(c.status().message());
    cond = *c;
  }

  std::vector<RuntimeValue> carried;
  for (size_t i = 0; i < l.carried; ++i) carried.push_back(ctx.input_value(2 + i));
  std::vector<std::vector<Tensor>> scans(l.scans);
  for (int64_t iter = 0; cond && (!max_trips.has_value() || iter < *max_trips); ++iter) {
    std::vector<RuntimeValue> feeds;
    feeds.reserve(l.carried + 2);
    feeds.emplace_back(Tensor::Scalar<int64_t>(iter));
    feeds.emplace_back(Tensor::Scalar<bool>(cond));
    for (RuntimeValue& v : carried) feeds.push_back(std::move(v));
    AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, runner->RunSubgraph(*body, feeds));
    if (has_cond) {
      absl::StatusOr<bool> c = ReadBool(outs[0], "the body's cond output");
      if (!c.ok()) return ctx.Error("iteration ", iter, ": ", c.status().message());
      cond = *c;
    }
    for (size_t i = 0; i < l.carried; ++i) carried[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < l.scans; ++k) {
      RuntimeValue& s = outs[1 + l.carried + k];
      if (!s.is_tensor()) {
        return ctx.Unimplemented("scan output ", k, " is not a tensor (only tensors are stacked)");
      }
      scans[k].push_back(std::move(s.tensor));
    }
  }

  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (i < l.carried) {
      ctx.set_output_value(i, std::move(carried[i]));
      continue;
    }
    const size_t k = i - l.carried;
    absl::StatusOr<Tensor> stacked =
        StackIterations(scans[k], body->outputs()[1 + i]->type(), 0);
    if (!stacked.ok()) return ctx.Error("scan output ", k, ": ", stacked.status().message());
    ctx.set_output(i, *std::move(stacked));
  }
  return absl::OkStatus();
}

Traits LoopTraits(const OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  std::string bound = "until cond is false";
  if (ctx.has_input(0)) {
    const Tensor* m = ctx.input_constant(0);
    bound = m != nullptr && m->num_elements() == 1
                ? absl::StrCat("up to ", static_cast<int64_t>(m->ElementAsDouble(0)), " times")
                : std::string("up to M times");
    if (ctx.has_input(1)) absl::StrAppend(&bound, " while cond holds");
  }
  std::string meaning = absl::StrCat("(v, scans) = repeat body ", bound);
  if (body != nullptr) absl::StrAppend(&meaning, " (", body->TotalNodeCount(), " nodes)");
  return ControlFlowTraits("Loop", meaning,
                           "M is a constant 0 or cond a constant false (outputs = initial values)");
}

}  // namespace

void RegisterLoopOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "Loop",
                   .since_version = 1,
                   .infer = InferLoop,
                   .traits = LoopTraits,
                   .cost =
                       [](const OpContext& ctx) {
                         return ControlFlowCost(ctx, StaticTripCount(ctx).has_value());
                       },
                   .kernel = RunLoop});
}

}  // namespace aic

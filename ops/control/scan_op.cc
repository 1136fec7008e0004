// Scan: iterates a body over slices of its scan inputs, carrying state.
//   inputs  (state..., scan_input...)     the last num_scan_inputs are scanned
//   body    (state..., slice...) -> (state..., scan_element...)
//   outputs (final_state..., scan_output...)
// Opset 9+ scans each input along scan_input_axes in scan_input_directions and
// stacks outputs along scan_output_axes (prepending for direction 1). Opset 8
// differs: an optional sequence_lens input comes first, every input has a
// leading batch axis (the body runs per batch entry), scan inputs are scanned
// along axis 1 in `directions`, and shorter sequences' outputs are zero-padded.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/control/control_ops.h"
#include "ops/control/control_util.h"
#include "ops/registry.h"
#include "ops/sequence/tensor_pieces.h"
#include "ops/util/broadcast.h"

namespace aic {

namespace {

struct ScanLayout {
  size_t first = 0;    // index of the first state input (1 in opset 8: sequence_lens)
  size_t states = 0;
  size_t scan_inputs = 0;
  size_t scan_outputs = 0;
};

absl::StatusOr<ScanLayout> Layout(const Node& node, const Graph& body, size_t num_inputs,
                                  int64_t opset) {
  ScanLayout l;
  l.first = opset < 9 ? 1 : 0;
  const int64_t n_scan = node.GetInt("num_scan_inputs", -1);
  if (n_scan < 1 || static_cast<size_t>(n_scan) + l.first > num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        node.Describe(), ": num_scan_inputs ", n_scan, " does not fit ", num_inputs, " inputs"));
  }
  l.scan_inputs = static_cast<size_t>(n_scan);
  l.states = num_inputs - l.first - l.scan_inputs;
  if (body.inputs().size() != l.states + l.scan_inputs || body.outputs().size() < l.states) {
    return absl::InvalidArgumentError(absl::StrCat(
        node.Describe(), ": body takes ", body.inputs().size(), " inputs and gives ",
        body.outputs().size(), " outputs for ", l.states, " states and ", l.scan_inputs,
        " scan inputs"));
  }
  l.scan_outputs = body.outputs().size() - l.states;
  if (node.num_outputs() > l.states + l.scan_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": has ", node.num_outputs(),
                                                   " outputs, body gives ",
                                                   l.states + l.scan_outputs));
  }
  return l;
}

// Attribute list entry i, or the default when the list is absent.
int64_t ListAttr(const Node& node, const char* name, size_t i, int64_t default_value) {
  std::vector<int64_t> v = node.GetInts(name);
  return i < v.size() ? v[i] : default_value;
}

absl::Status InferScan(OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_ASSIGN_OR_RETURN(ScanLayout l, Layout(ctx.node(), *body, ctx.num_inputs(), ctx.opset()));
  const bool batched = ctx.opset() < 9;
  // The sequence length, from the first scan input whose shape says it.
  Dim length = Dim::Unknown();
  Dim batch = Dim::Unknown();
  for (size_t j = 0; j < l.scan_inputs; ++j) {
    const Shape& s = ctx.input_shape(l.first + l.states + j);
    if (!s.has_rank()) continue;
    int64_t axis = batched ? 1 : ListAttr(ctx.node(), "scan_input_axes", j, 0);
    if (axis < 0) axis += s.rank();
    if (axis < 0 || axis >= s.rank()) return ctx.Error("scan input ", j, " has no axis ", axis);
    if (length.is_unknown()) length = s.dims()[static_cast<size_t>(axis)];
    if (batched && batch.is_unknown()) batch = s.dims()[0];
  }
  if (length.is_unknown()) length = ctx.FreshDim();
  if (batched && batch.is_unknown()) batch = ctx.FreshDim();
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TypeInfo& from_body = body->outputs()[i]->type();
    if (i < l.states) {
      TypeInfo per_entry = batched ? StackedType(from_body, batch, 0) : from_body;
      ctx.set_output_type(i, MergeTypes(ctx.input_type(l.first + i), per_entry, ctx));
      continue;
    }
    if (batched) {
      ctx.set_output_type(i, StackedType(StackedType(from_body, length, 0), batch, 0));
      continue;
    }
    int64_t axis = ListAttr(ctx.node(), "scan_output_axes", i - l.states, 0);
    if (axis < 0 && from_body.is_tensor() && from_body.shape.has_rank()) {
      axis += from_body.shape.rank() + 1;
    }
    ctx.set_output_type(i, StackedType(from_body, length, axis));
  }
  return absl::OkStatus();
}

// One run of the scan over `states` and `scan_inputs` (already without batch
// axis), with `length` iterations; fills final states and per-output parts in
// output order.
struct ScanRun {
  std::vector<RuntimeValue> states;
  std::vector<std::vector<Tensor>> parts;
};

absl::StatusOr<ScanRun> Iterate(const Graph& body, SubgraphRunner& runner, const ScanLayout& l,
                                std::vector<RuntimeValue> states,
                                const std::vector<Tensor>& scan_inputs,
                                const std::vector<int64_t>& in_axes,
                                const std::vector<bool>& in_reverse, int64_t length) {
  ScanRun run;
  run.states = std::move(states);
  run.parts.resize(l.scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<RuntimeValue> feeds = run.states;
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      const int64_t index = in_reverse[j] ? length - 1 - t : t;
      feeds.emplace_back(TakeAlongAxis(scan_inputs[j], in_axes[j], index));
    }
    AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, runner.RunSubgraph(body, feeds));
    for (size_t i = 0; i < l.states; ++i) run.states[i] = std::move(outs[i]);
    for (size_t k = 0; k < l.scan_outputs; ++k) {
      if (!outs[l.states + k].is_tensor()) {
        return absl::InvalidArgumentError(absl::StrCat("scan output ", k, " is not a tensor"));
      }
      run.parts[k].push_back(std::move(outs[l.states + k].tensor));
    }
  }
  return run;
}

absl::Status RunScan9(KernelContext& ctx, const Graph& body, const ScanLayout& l) {
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));
  std::vector<RuntimeValue> states;
  for (size_t i = 0; i < l.states; ++i) states.push_back(ctx.input_value(i));
  std::vector<Tensor> inputs;
  std::vector<int64_t> axes;
  std::vector<bool> reverse;
  int64_t length = -1;
  for (size_t j = 0; j < l.scan_inputs; ++j) {
    if (!ctx.has_input(l.states + j) || !ctx.input_value(l.states + j).is_tensor()) {
      return ctx.Error("scan input ", j, " must be a tensor");
    }
    const Tensor& x = ctx.input(l.states + j);
    absl::StatusOr<int64_t> axis =
        NormalizeAxis(ListAttr(ctx.node(), "scan_input_axes", j, 0), x.rank());
    if (!axis.ok()) return ctx.Error("scan input ", j, ": ", axis.status().message());
    if (length >= 0 && x.dim(*axis) != length) {
      return ctx.Error("scan input ", j, " has ", x.dim(*axis), " steps, expected ", length);
    }
    length = x.dim(*axis);
    inputs.push_back(x);
    axes.push_back(*axis);
    reverse.push_back(ListAttr(ctx.node(), "scan_input_directions", j, 0) == 1);
  }
  absl::StatusOr<ScanRun> run = Iterate(body, *runner, l, std::move(states), inputs, axes,
                                        reverse, length);
  if (!run.ok()) return ctx.Error(run.status().message());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (i < l.states) {
      ctx.set_output_value(i, std::move(run->states[i]));
      continue;
    }
    const size_t k = i - l.states;
    std::vector<Tensor>& parts = run->parts[k];
    if (ListAttr(ctx.node(), "scan_output_directions", k, 0) == 1) {
      std::reverse(parts.begin(), parts.end());
    }
    const TypeInfo& per_iteration = body.outputs()[i]->type();
    int64_t axis = ListAttr(ctx.node(), "scan_output_axes", k, 0);
    const int64_t rank = parts.empty() ? per_iteration.shape.rank() : parts[0].rank();
    if (axis < 0) axis += rank + 1;
    if (axis < 0 || axis > rank) return ctx.Error("scan output ", k, " has no axis ", axis);
    absl::StatusOr<Tensor> stacked = StackIterations(parts, per_iteration, axis);
    if (!stacked.ok()) return ctx.Error("scan output ", k, ": ", stacked.status().message());
    ctx.set_output(i, *std::move(stacked));
  }
  return absl::OkStatus();
}

// Opset 8: every state and scan input carries a leading batch axis.
absl::Status RunScan8(KernelContext& ctx, const Graph& body, const ScanLayout& l) {
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));
  for (size_t i = l.first; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor() || ctx.input(i).rank() < 1) {
      return ctx.Error("input ", i, " must be a tensor with a batch axis");
    }
  }
  const int64_t batch = ctx.input(l.first).dim(0);
  int64_t max_len = -1;
  for (size_t j = 0; j < l.scan_inputs; ++j) {
    const Tensor& x = ctx.input(l.first + l.states + j);
    if (x.rank() < 2 || x.dim(0) != batch || (max_len >= 0 && x.dim(1) != max_len)) {
      return ctx.Error("scan input ", j, " must be [batch=", batch, ", sequence, ...], got ",
                       DimsToString(x.dims()));
    }
    max_len = x.dim(1);
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
  if (ctx.has_input(0)) {
    const Tensor& sl = ctx.input(0);
    if (sl.num_elements() != batch) return ctx.Error("sequence_lens must have one entry per batch");
    for (int64_t b = 0; b < batch; ++b) {
      lens[static_cast<size_t>(b)] = static_cast<int64_t>(sl.ElementAsDouble(b));
      if (lens[static_cast<size_t>(b)] < 0 || lens[static_cast<size_t>(b)] > max_len) {
        return ctx.Error("sequence_lens[", b, "] = ", lens[static_cast<size_t>(b)],
                         " is outside [0, ", max_len, "]");
      }
    }
  }
  const std::vector<int64_t> axes(l.scan_inputs, 0);
  std::vector<bool> reverse;
  for (size_t j = 0; j < l.scan_inputs; ++j) {
    reverse.push_back(ListAttr(ctx.node(), "directions", j, 0) == 1);
  }
  std::vector<std::vector<Tensor>> per_batch(l.states + l.scan_outputs);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<RuntimeValue> states;
    for (size_t i = 0; i < l.states; ++i) {
      states.emplace_back(TakeAlongAxis(ctx.input(l.first + i), 0, b));
    }
    std::vector<Tensor> inputs;
    for (size_t j = 0; j < l.scan_inputs; ++j) {
      // Only this entry's own length is scanned (reverse runs from its last step).
      Tensor x = TakeAlongAxis(ctx.input(l.first + l.states + j), 0, b);
      inputs.push_back(SliceAlongAxis(x, 0, 0, lens[static_cast<size_t>(b)]));
    }
    absl::StatusOr<ScanRun> run = Iterate(body, *runner, l, std::move(states), inputs, axes,
                                          reverse, lens[static_cast<size_t>(b)]);
    if (!run.ok()) return ctx.Error("batch ", b, ": ", run.status().message());
    for (size_t i = 0; i < l.states; ++i) {
      if (!run->states[i].is_tensor()) return ctx.Error("state ", i, " is not a tensor");
      per_batch[i].push_back(std::move(run->states[i].tensor));
    }
    for (size_t k = 0; k < l.scan_outputs; ++k) {
      std::vector<Tensor>& parts = run->parts[k];
      if (parts.empty() && max_len > 0) {
        // No step ran for this entry: the padding takes the body's declared shape.
        absl::StatusOr<Tensor> none = EmptyStack(body.outputs()[l.states + k]->type(), 0);
        if (!none.ok()) return ctx.Error("scan output ", k, ": ", none.status().message());
        parts.emplace_back(none->dtype(),
                           std::vector<int64_t>(none->dims().begin() + 1, none->dims().end()));
      }
      while (static_cast<int64_t>(parts.size()) < max_len) {
        parts.emplace_back(parts[0].dtype(), parts[0].dims());  // zeros past this entry's end
      }
      absl::StatusOr<Tensor> stacked =
          StackIterations(parts, body.outputs()[l.states + k]->type(), 0);
      if (!stacked.ok()) return ctx.Error("scan output ", k, ": ", stacked.status().message());
      per_batch[l.states + k].push_back(*std::move(stacked));
    }
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TypeInfo& per_step = body.outputs()[i]->type();
    absl::StatusOr<Tensor> joined = StackIterations(
        per_batch[i], i < l.states ? per_step : StackedType(per_step, Dim(0), 0), 0);
    if (!joined.ok()) return ctx.Error("output ", i, ": ", joined.status().message());
    ctx.set_output(i, *std::move(joined));
  }
  return absl::OkStatus();
}

absl::Status RunScan(KernelContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  if (body == nullptr) return ctx.Error("needs graph attribute body");
  AIC_ASSIGN_OR_RETURN(ScanLayout l, Layout(ctx.node(), *body, ctx.num_inputs(), ctx.opset()));
  return ctx.opset() < 9 ? RunScan8(ctx, *body, l) : RunScan9(ctx, *body, l);
}

Traits ScanTraits(const OpContext& ctx) {
  const Graph* body = GraphAttr(ctx.node(), "body");
  std::string meaning = "(state, scans) = fold body over the scan inputs' steps";
  if (body != nullptr) absl::StrAppend(&meaning, " (", body->TotalNodeCount(), " nodes)");
  return ControlFlowTraits("Scan", meaning, "the scan inputs have 0 steps");
}

}  // namespace

void RegisterScanOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "Scan",
                   .since_version = 8,
                   .infer = InferScan,
                   .traits = ScanTraits,
                   .cost = [](const OpContext& ctx) { return ControlFlowCost(ctx, true); },
                   .kernel = RunScan});
}

}  // namespace aic

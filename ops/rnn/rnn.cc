// The recurrent op family: RNN, GRU and LSTM. They share inference, the time
// loop and cost accounting (ops/rnn/recurrence.*); this file registers them
// and states what each one means to a user of the report.
#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/rnn/recurrence.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// W, R, B and (LSTM) the peepholes P are the learned parameters.
std::initializer_list<size_t> ParamInputs(RnnCell cell) {
  static constexpr std::initializer_list<size_t> kRnn = {1, 2, 3};
  static constexpr std::initializer_list<size_t> kLstm = {1, 2, 3, 7};
  return cell == RnnCell::kLstm ? kLstm : kRnn;
}

std::string Meaning(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn: return "h_t = f(W·x_t + R·h_{t−1} + b)";
    case RnnCell::kGru:
      return "z,r = σ(W·x_t + R·h_{t−1} + b); h̃ = tanh(W_h·x_t + R_h·(r⊙h_{t−1}) + b_h); "
             "h_t = (1−z)⊙h̃ + z⊙h_{t−1}";
    case RnnCell::kLstm:
      return "i,o,f = σ(W·x_t + R·h_{t−1} + b); c_t = f⊙c_{t−1} + i⊙tanh(W_c·x_t + R_c·h_{t−1} + "
             "b_c); h_t = o⊙tanh(c_t)";
  }
  return "";
}

Traits RecurrenceTraits(const OpContext& ctx, RnnCell cell) {
  Traits t;
  t.semantic_name = RnnCellName(cell);
  t.meaning = Meaning(cell);
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kSaturates;
  t.collapse_how = "gates squash pre-activations into (0, 1) / (−1, 1)";
  t.trainable = true;
  const Shape& x = ctx.input_shape(0);
  const Shape& r = ctx.input_shape(2);
  if (x.has_rank() && x.rank() == 3 && r.has_rank() && r.rank() == 3) {
    const Dim& in = x[2];
    const Dim& hidden = r[2];
    t.effect_detail = absl::StrCat(in.ToString(), " → ", hidden.ToString(), " per step");
    if (in.is_value() && hidden.is_value()) {
      const int dirs = std::max(RnnNumDirections(ctx.node()), 1);
      const int64_t out = hidden.value() * dirs;
      t.effect = out > in.value()   ? RepresentationEffect::kExpands
                 : out < in.value() ? RepresentationEffect::kRestricts
                                    : RepresentationEffect::kPreserves;
    }
  }
  t.safe_transform_when = "weights constant; direction and layout preserved";
  return t;
}

// MACs per step = batch · directions · gates · hidden · (input + hidden), times
// the sequence length; FLOPs add the gate activations and updates.
Cost RecurrenceCost(const OpContext& ctx, RnnCell cell) {
  Cost c = BytesOnlyCost(ctx, ParamInputs(cell));
  const Shape& x = ctx.input_shape(0);
  const Shape& r = ctx.input_shape(2);
  if (!x.has_rank() || x.rank() != 3 || !x.IsStatic() || !r.has_rank() || r.rank() != 3 ||
      !r.IsStatic()) {
    c.known = false;
    return c;
  }
  const int64_t layout = ctx.opset() >= 14 ? ctx.node().GetInt("layout", 0) : 0;
  const int64_t seq = x[layout == 0 ? 0 : 1].value(), batch = x[layout == 0 ? 1 : 0].value();
  const int64_t in = x[2].value(), hidden = r[2].value();
  const int64_t dirs = std::max(RnnNumDirections(ctx.node()), 1);
  const int64_t gates = RnnNumGates(cell);
  int64_t macs_per_step = batch * dirs * gates * hidden * (in + hidden);
  // Elementwise work per hidden unit and step: activations and state updates.
  int64_t ew_per_unit = cell == RnnCell::kRnn ? 2 : cell == RnnCell::kGru ? 10 : 14;
  if (cell == RnnCell::kLstm) macs_per_step += batch * dirs * 3 * hidden;  // peepholes
  c.macs = macs_per_step * seq;
  c.flops = 2 * c.macs + seq * batch * dirs * hidden * ew_per_unit;
  return c;
}

}  // namespace

void RegisterRnnOps(OpRegistry& r) {
  for (RnnCell cell : {RnnCell::kRnn, RnnCell::kGru, RnnCell::kLstm}) {
    r.Register(OpDef{
        .domain = "",
        .op_type = RnnCellName(cell),
        .since_version = 1,
        .infer = [cell](OpContext& ctx) { return InferRecurrence(ctx, cell); },
        .traits = [cell](const OpContext& ctx) { return RecurrenceTraits(ctx, cell); },
        .cost = [cell](const OpContext& ctx) { return RecurrenceCost(ctx, cell); },
        .kernel = [cell](KernelContext& ctx) { return RecurrenceKernel(ctx, cell); },
    });
  }
}

}  // namespace aic

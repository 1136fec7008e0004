// RNN, GRU and LSTM onto kernels/recurrence.h: f32 X with static dims,
// constant W, R, B and P (prepared once into the kernel), any direction,
// clip, input_forget, linear_before_reset, activations (parsed by
// ops/rnn/rnn_activation.h, as the reference kernel parses them), opset-14
// layout, sequence_lens (int32 or int64, computed or constant), initial
// states, and any subset of the outputs. Returns false (the reference kernel
// runs) for what this does not cover: other dtypes, computed weights, and
// malformed nodes (the reference kernel reports those).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/recurrence.h"
#include "exec/cpu/native_step.h"
#include "ops/rnn/recurrence.h"
#include "ops/rnn/rnn_activation.h"

namespace aic::cpu {

namespace {

// A constant f32 parameter of exactly `count` elements; null when absent,
// `*ok` false when present but computed or of another size.
const float* ConstParam(Lowerer& L, const Value* v, int64_t count, bool* ok) {
  if (v == nullptr) return nullptr;
  const Tensor* t = L.Const(v);
  if (t == nullptr || t->dtype() != DType::kFloat || t->num_elements() != count) {
    *ok = false;
    return nullptr;
  }
  return t->data<float>();
}

// Whether an optional runtime input can be read here: absent, or with a
// value of `count` elements.
bool OptionalReady(Lowerer& L, const Value* v, int64_t count) {
  return v == nullptr || (NativeReady(L, v) && NumElements(L.V(v).dims) == count);
}

}  // namespace

bool LowerRecurrence(Lowerer& L, const Node& n) {
  const RnnCell cell = n.op_type == "LSTM" ? RnnCell::kLstm : n.op_type == "GRU" ? RnnCell::kGru : RnnCell::kRnn;
  const bool lstm = cell == RnnCell::kLstm;
  // X W R B sequence_lens initial_h (initial_c P); Y Y_h (Y_c).
  if (n.num_inputs() > (lstm ? 8u : 6u) || n.num_outputs() > (lstm ? 3u : 2u)) return false;
  const int dirs = RnnNumDirections(n);
  if (dirs < 0) return false;
  const Value* x = n.input(0);
  if (!L.IsF32(x) || !NativeReady(L, x) || L.V(x).dims.size() != 3) return false;
  const Tensor* w = L.Const(n.input(1));
  const Tensor* r = L.Const(n.input(2));
  if (w == nullptr || r == nullptr || w->dtype() != DType::kFloat || r->dtype() != DType::kFloat) return false;
  if (w->rank() != 3 || r->rank() != 3) return false;

  kernels::RecurrenceConfig cfg;
  cfg.cell = cell;
  cfg.dirs = dirs;
  cfg.batch_first = L.OpsetOf(n) >= 14 && n.GetInt("layout", 0) != 0;
  const std::vector<int64_t>& xd = L.V(x).dims;
  cfg.seq = xd[cfg.batch_first ? 1 : 0];
  cfg.batch = xd[cfg.batch_first ? 0 : 1];
  cfg.input = xd[2];
  cfg.hidden = r->dim(2);
  const int64_t S = cfg.seq, B = cfg.batch, H = cfg.hidden, G = RnnNumGates(cell);
  // Empty sequences, batches or states: nothing worth a kernel of our own.
  if (S * B * cfg.input * H == 0) return false;
  if (n.HasAttr("hidden_size") && n.GetInt("hidden_size", 0) != H) return false;
  if (w->dims() != std::vector<int64_t>{dirs, G * H, cfg.input} || r->dims() != std::vector<int64_t>{dirs, G * H, H}) {
    return false;
  }
  cfg.reverse = n.GetString("direction", "forward") == "reverse";
  cfg.clip = n.HasAttr("clip") ? n.GetFloat("clip", 0) : 0.0f;
  cfg.linear_before_reset = n.GetInt("linear_before_reset", 0) != 0;
  cfg.input_forget = n.GetInt("input_forget", 0) != 0;
  auto acts = ParseRnnActivations(n, RnnDefaultActivations(cell), dirs);
  if (!acts.ok()) return false;

  bool ok = true;
  const float* bias = ConstParam(L, n.input(3), dirs * 2 * G * H, &ok);
  const float* peep = lstm ? ConstParam(L, n.input(7), dirs * 3 * H, &ok) : nullptr;
  const Value* lens = n.input(4);
  if (lens != nullptr && L.V(lens).dtype != DType::kInt32 && L.V(lens).dtype != DType::kInt64) return false;
  const bool lens_int64 = lens != nullptr && L.V(lens).dtype == DType::kInt64;
  const int64_t state_count = dirs * B * H;
  for (size_t i : {5u, 6u}) {
    if (n.input(i) != nullptr && !L.IsF32(n.input(i))) return false;
  }
  if (!ok || !OptionalReady(L, lens, B) || !OptionalReady(L, n.input(5), state_count) ||
      (lstm && !OptionalReady(L, n.input(6), state_count))) {
    return false;
  }

  const std::vector<int64_t> y_dims =
      cfg.batch_first ? std::vector<int64_t>{B, S, dirs, H} : std::vector<int64_t>{S, dirs, B, H};
  const std::vector<int64_t> state_dims =
      cfg.batch_first ? std::vector<int64_t>{B, dirs, H} : std::vector<int64_t>{dirs, B, H};
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    const Value* o = n.output(i);
    if (o != nullptr && (!L.IsF32(o) || L.V(o).dims != (i == 0 ? y_dims : state_dims))) return false;
  }

  // Checked: from here on nothing declines, so slots and reorders are made only for a step.
  auto slot_of = [&L](const Value* v) { return v != nullptr ? L.PlainSlot(v) : -1; };
  const std::vector<int> ins = {L.PlainSlot(x), slot_of(lens), slot_of(n.input(5)), lstm ? slot_of(n.input(6)) : -1};
  auto kernel = std::make_shared<const kernels::Recurrence>(cfg, *w, *r, bias, peep, *acts);
  std::vector<int> outs;
  for (size_t i = 0; i < 3; ++i) {
    const Value* o = n.output(i);
    outs.push_back(o != nullptr ? NativeOutSlot(L, o) : -1);
  }
  const int scratch = L.NewArenaSlot(nullptr, PlainMd({kernel->ScratchFloats()}), true);
  L.plan().slots[scratch].name = "recurrence_scratch";
  outs.push_back(scratch);
  const std::string label = n.Describe();
  NativeStep* step = AddNativeStep(
      L, n, ins, outs,
      [kernel, lens_int64, label](const void* const* in, void* const* out) -> absl::Status {
        kernels::RecurrenceIo io;
        io.x = static_cast<const float*>(in[0]);
        io.lens = in[1];
        io.lens_int64 = lens_int64;
        io.h0 = static_cast<const float*>(in[2]);
        io.c0 = static_cast<const float*>(in[3]);
        io.y = static_cast<float*>(out[0]);
        io.yh = static_cast<float*>(out[1]);
        io.yc = static_cast<float*>(out[2]);
        io.scratch = static_cast<float*>(out[3]);
        absl::Status st = kernel->Run(io);
        if (!st.ok()) return absl::Status(st.code(), absl::StrCat(label, ": ", st.message()));
        return st;
      });
  step->kind = "recurrence";
  return true;
}

}  // namespace aic::cpu

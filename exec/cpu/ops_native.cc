// Lowerings onto our own elementwise kernels (exec/cpu/kernels/): unary ops
// oneDNN's eltwise lacks (Erf, Reciprocal, Floor, ...), any broadcasting
// binary oneDNN's binary cannot take (broadcast first operand, Pow, PRelu,
// integers, comparisons, logical ops) and Where, one GELU step for the
// exported erf pattern when no producer took it as a post-op, and IsNaN /
// IsInf. Each returns
// false (nothing emitted) to let the reference kernel run instead.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/binary.h"
#include "exec/cpu/kernels/broadcast.h"
#include "exec/cpu/kernels/swiglu.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/kernels/streaming_stores.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

int NativeOutSlot(Lowerer& L, const Value* v) {
  if (v == nullptr) return -1;
  ValueState& st = L.V(v);
  size_t elem = ElementSize(st.dtype);
  if (!st.is_static || elem == 0 || st.dtype == DType::kString || IsOpaqueStorageOnly(st.dtype)) return -1;
  int64_t count = NumElements(st.dims);
  if (count <= 0) return -1;
  if (st.dtype == DType::kFloat) return L.NewArenaSlot(v, PlainMd(st.dims), true);
  // Other dtypes: the arena sizes buffers by their desc, so describe the bytes.
  Plan& plan = L.plan();
  memory::desc bytes({static_cast<memory::dim>(static_cast<size_t>(count) * elem)}, memory::data_type::u8,
                     memory::format_tag::a);
  Slot s;
  s.name = v->name();
  s.dtype = st.dtype;
  s.dims = st.dims;
  s.md = bytes;
  s.plain = true;
  s.storage = Slot::Storage::kArena;
  s.buffer = static_cast<int>(plan.buffers.size());
  plan.buffers.push_back({bytes.get_size(), -1, -1, 0});
  plan.slots.push_back(std::move(s));
  st.slot = static_cast<int>(plan.slots.size()) - 1;
  return st.slot;
}

bool NativeReady(Lowerer& L, const Value* v) {
  if (v == nullptr) return false;
  ValueState& st = L.V(v);
  if (!st.is_static || ElementSize(st.dtype) == 0 || st.dtype == DType::kString) return false;
  return L.Const(v) != nullptr || st.slot >= 0;
}

NativeStep* AddNativeStep(Lowerer& L, const Node& n, std::vector<int> inputs, std::vector<int> outputs,
                          NativeStep::Body body) {
  auto step = std::make_unique<NativeStep>(std::move(inputs), std::move(outputs), std::move(body), "native",
                                           n.Describe());
  NativeStep* raw = step.get();
  L.plan().steps.push_back(std::move(step));
  return raw;
}

NativeStep* AddNativeStep(Lowerer& L, const Node& n, std::vector<int> inputs, int output,
                          std::function<absl::Status(const void* const* in, void* out)> body) {
  return AddNativeStep(L, n, std::move(inputs), std::vector<int>{output},
                       [body = std::move(body)](const void* const* in, void* const* out) { return body(in, out[0]); });
}

namespace {

// y = fn(x) elementwise over f32; out must have x's dims.
bool EmitUnary(Lowerer& L, const Node& n, const Value* x, const Value* out, kernels::UnaryRowFn fn) {
  if (fn == nullptr || !L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x) || L.V(out).dims != L.V(x).dims) {
    return false;
  }
  int64_t count = NumElements(L.V(x).dims);
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [fn, count](const void* const* ins, void* y) {
    kernels::UnaryF32(fn, static_cast<const float*>(ins[0]), static_cast<float*>(y), count);
    return absl::OkStatus();
  });
  step->inplace_ok = true;
  return true;
}

bool TryOneDnn(bool (*lower)(Lowerer&, const Node&), Lowerer& L, const Node& n) {
  try {
    return lower(L, n);
  } catch (const dnnl::error&) {
    return false;  // declined by oneDNN before anything was emitted
  }
}

}  // namespace

bool LowerBareUnaryNative(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (n.num_inputs() < 1 || out == nullptr || !L.IsF32(x) || !L.IsF32(out) || L.V(out).dims != L.V(x).dims) {
    return false;
  }
  std::string op = n.op_type;
  float alpha = n.GetFloat("alpha", 0.2f), beta = n.GetFloat("beta", 0.5f);  // HardSigmoid's
  kernels::UnaryRowFn fn = nullptr;
  if (op == "Gelu") {
    op = n.GetString("approximate", "none") == "tanh" ? "GeluTanh" : "";
    if (op.empty()) return false;  // the erf form: oneDNN's eltwise is as fast
  }
  if (op == "Swish" && n.GetFloat("alpha", 1.0f) != 1.0f) return false;
  if (op != "HardSigmoid") {
    fn = kernels::FastUnaryKernel(op);
    if (fn == nullptr) return false;
  }
  // In x's layout, blocked included, when the op maps 0 to 0 (a blocked
  // layout's padding stays zero) or the layout has no padding; else plain.
  int64_t count = NumElements(L.V(x).dims);
  int in = -1, slot = -1;
  const int s = L.V(x).slot;
  if (s >= 0 && L.Const(x) == nullptr && L.plan().slots[s].storage == Slot::Storage::kArena) {
    const Slot& src = L.plan().slots[s];
    auto physical = static_cast<int64_t>(src.md.get_size() / sizeof(float));
    bool zero_to_zero = op == "Tanh" || op == "GeluTanh" || op == "Mish" || op == "Swish";
    if (physical == count || zero_to_zero) {
      in = s;
      count = physical;
      Slot copy = src;  // the desc and plainness, before the slot vector grows
      slot = L.NewArenaSlot(out, copy.md, copy.plain);
    }
  }
  if (in < 0) {
    if (!NativeReady(L, x)) return false;
    in = L.PlainSlot(x);
    slot = NativeOutSlot(L, out);
  }
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [fn, count, alpha, beta](const void* const* ins, void* y) {
    const auto* xs = static_cast<const float*>(ins[0]);
    if (fn == nullptr) {
      kernels::HardSigmoidF32(xs, static_cast<float*>(y), count, alpha, beta);
    } else {
      kernels::UnaryF32(fn, xs, static_cast<float*>(y), count);
    }
    return absl::OkStatus();
  });
  step->kind = absl::AsciiStrToLower(op);
  step->inplace_ok = true;
  return true;
}

bool LowerNativeUnary(Lowerer& L, const Node& n) {
  if (n.num_inputs() < 1 || n.output(0) == nullptr) return false;
  std::string op = n.op_type;
  if (op == "Gelu") op = n.GetString("approximate", "none") == "tanh" ? "GeluTanh" : "GeluErf";
  return EmitUnary(L, n, n.input(0), n.output(0), kernels::UnaryKernel(op));
}

// SwiGLU (opset 28): two f32 inputs of one shape (the op does not broadcast).
bool LowerSwiGlu(Lowerer& L, const Node& n) {
  if (n.num_inputs() != 2 || n.output(0) == nullptr) return false;
  const Value *a = n.input(0), *b = n.input(1), *out = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out) || !NativeReady(L, a) || !NativeReady(L, b)) return false;
  if (L.V(b).dims != L.V(a).dims || L.V(out).dims != L.V(a).dims) return false;
  int64_t count = NumElements(L.V(a).dims);
  float alpha = n.GetFloat("alpha", 1.0f);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.PlainSlot(a), L.PlainSlot(b)}, slot,
                                   [count, alpha](const void* const* in, void* y) {
                                     kernels::SwiGluF32(static_cast<const float*>(in[0]),
                                                        static_cast<const float*>(in[1]), static_cast<float*>(y),
                                                        count, alpha);
                                     return absl::OkStatus();
                                   });
  step->kind = "swiglu";
  step->inplace_ok = true;
  return true;
}

bool LowerNativeElementwise(Lowerer& L, const Node& n) {
  const Value* out = n.output(0);
  bool where = n.op_type == "Where";
  if (out == nullptr || n.num_inputs() != (where ? 3u : 2u)) return false;
  for (const Value* v : n.inputs()) {
    if (!NativeReady(L, v)) return false;
  }
  kernels::RowFn fn = nullptr;
  DType out_dtype = DType::kUndefined;
  if (where) {
    DType t = L.V(n.input(1)).dtype;
    if (L.V(n.input(0)).dtype != DType::kBool || L.V(n.input(2)).dtype != t) return false;
    fn = kernels::WhereKernel(ElementSize(t));
    out_dtype = t;
  } else {
    DType t = L.V(n.input(0)).dtype;
    if (L.V(n.input(1)).dtype != t) return false;
    fn = kernels::BinaryKernel(n.op_type, t, &out_dtype);
  }
  if (fn == nullptr || L.V(out).dtype != out_dtype) return false;
  std::vector<std::vector<int64_t>> dims;
  std::vector<int64_t> sizes;
  for (const Value* v : n.inputs()) {
    dims.push_back(L.V(v).dims);
    sizes.push_back(static_cast<int64_t>(ElementSize(L.V(v).dtype)));
  }
  auto loop = kernels::MakeBroadcastLoop(L.V(out).dims, dims, sizes, static_cast<int64_t>(ElementSize(out_dtype)));
  if (!loop) return false;
  std::vector<int> ins;
  for (const Value* v : n.inputs()) ins.push_back(L.PlainSlot(v));
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, ins, slot, [fn, l = *loop](const void* const* in, void* y) {
    kernels::RunBroadcast(l, in, y, fn);
    return absl::OkStatus();
  });
  // In place only when the first operand is not broadcast (same bytes, same
  // walk) and no broadcast operand views the same bytes.
  bool inplace = L.V(n.input(0)).dims == L.V(out).dims && L.V(n.input(0)).dtype == out_dtype;
  const Slot& first = L.plan().slots[ins[0]];
  for (size_t k = 1; k < ins.size(); ++k) {
    const Slot& other = L.plan().slots[ins[k]];
    bool shares = first.storage == Slot::Storage::kArena && other.storage == Slot::Storage::kArena &&
                  other.buffer == first.buffer;
    if (shares && L.V(n.input(k)).dims != L.V(out).dims) inplace = false;
  }
  step->inplace_ok = inplace;
  return true;
}

const Node* HalfCastOf(Lowerer& L, const Value* y, const std::vector<int64_t>& dims) {
  const Node* back = y != nullptr ? L.SoleConsumer(y) : nullptr;
  if (back == nullptr || back->op_type != "Cast" || !back->domain.empty() || L.V(y).dtype != DType::kFloat ||
      L.V(y).dims != dims) {
    return nullptr;
  }
  const Value* y16 = back->output(0);
  return y16 != nullptr && L.V(y16).dtype == DType::kFloat16 && L.V(y16).dims == dims ? back : nullptr;
}

const Node* CastBackToHalf(Lowerer& L, const Node& op, const std::vector<int64_t>& dims) {
  // Outputs after the first (LayerNormalization's Mean, InvStdDev) unread.
  for (size_t i = 1; i < op.num_outputs(); ++i) {
    const Value* extra = op.output(i);
    if (extra != nullptr && (!L.V(extra).consumers.empty() || L.V(extra).graph_output)) return nullptr;
  }
  return HalfCastOf(L, op.num_outputs() >= 1 ? op.output(0) : nullptr, dims);
}

std::optional<HalfEdges> HalfEdgesAround(Lowerer& L, const Node& cast_in) {
  HalfEdges e;
  e.x16 = cast_in.input(0);
  const Value* x = cast_in.output(0);
  if (e.x16 == nullptr || x == nullptr || L.V(e.x16).dtype != DType::kFloat16 || L.V(x).dtype != DType::kFloat ||
      L.V(x).dims != L.V(e.x16).dims || !NativeReady(L, e.x16)) {
    return std::nullopt;
  }
  e.op = L.SoleConsumer(x);
  if (e.op == nullptr || e.op->num_inputs() < 1 || e.op->input(0) != x) return std::nullopt;
  e.back = CastBackToHalf(L, *e.op, L.V(e.x16).dims);
  if (e.back == nullptr) return std::nullopt;
  e.y16 = e.back->output(0);
  return e;
}

// Cast(a: f16 -> f32), Cast(b: f16 -> f32) -> Add/Sub/Mul/Div/Max/Min ->
// Cast(-> f16) over same-shaped operands: what widen_half makes of an
// elementwise op between half tensors (a half model's edges). One step over
// the half bytes (kernels::HalfBinary) instead of four passes, equal bit for
// bit: these ops are exactly rounded in f32, and a half rounding of that is
// what the Cast stores. Called by LowerCast with either operand's Cast; a
// binary reading one Cast twice (x * x) works too.
bool LowerHalfBinary(Lowerer& L, const Node& cast_in) {
  const Value* widened = cast_in.output(0);
  if (widened == nullptr || L.V(widened).dtype != DType::kFloat) return false;
  const Node* op = L.SoleConsumer(widened);
  const std::vector<const Node*>& readers = L.V(widened).consumers;
  if (op == nullptr && readers.size() == 2 && readers[0] == readers[1] && !L.V(widened).graph_output &&
      !L.Done(readers[0])) {
    op = readers[0];  // x * x: one Cast read twice
  }
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  if (op == nullptr || !op->domain.empty() || op->num_inputs() != 2 ||
      std::find_if(std::begin(kOps), std::end(kOps), [&](const char* o) { return op->op_type == o; }) == std::end(kOps)) {
    return false;
  }
  // Each operand: the Cast producing it from a ready half value.
  const Value* halves[2];
  const Node* casts[2];
  for (int k = 0; k < 2; ++k) {
    const Value* v = op->input(k);
    const Node* c = v != nullptr ? v->producer() : nullptr;
    if (c == nullptr || c->op_type != "Cast" || !c->domain.empty() || L.V(v).graph_output) return false;
    if (L.V(v).consumers.size() != (op->input(0) == op->input(1) ? 2u : 1u)) return false;
    if (c != &cast_in && L.Done(c)) return false;  // lowered already: it declined this fusion
    halves[k] = c->input(0);
    casts[k] = c;
    if (halves[k] == nullptr || L.V(halves[k]).dtype != DType::kFloat16 || !NativeReady(L, halves[k])) return false;
  }
  const std::vector<int64_t>& dims = L.V(halves[0]).dims;
  if (L.V(halves[1]).dims != dims) return false;
  const Node* back = CastBackToHalf(L, *op, dims);
  if (back == nullptr) return false;
  const Value* y16 = back->output(0);
  DType out_dtype = DType::kUndefined;
  kernels::RowFn fn = kernels::BinaryKernel(op->op_type, DType::kFloat, &out_dtype);
  if (fn == nullptr || out_dtype != DType::kFloat) return false;
  int out = NativeOutSlot(L, y16);
  if (out < 0) return false;
  const int64_t count = NumElements(dims);
  NativeStep* step = AddNativeStep(L, *op, {L.PlainSlot(halves[0]), L.PlainSlot(halves[1])}, out,
                                   [fn, count](const void* const* in, void* o) {
                                     kernels::HalfBinary(fn, static_cast<const uint16_t*>(in[0]),
                                                         static_cast<const uint16_t*>(in[1]),
                                                         static_cast<uint16_t*>(o), count);
                                     return absl::OkStatus();
                                   });
  step->kind = "binary";
  if (casts[0] != &cast_in) L.MarkFused(casts[0]);
  if (casts[1] != &cast_in && casts[1] != casts[0]) L.MarkFused(casts[1]);
  L.MarkFused(op);
  L.MarkFused(back);
  return true;
}

namespace {

// Add/Sub/Mul/Div/Max/Min of two same-shaped plain f32 activations with a
// large output and nothing fused after it: kernels/streaming_stores.h.
bool LowerStreamingBinary(Lowerer& L, const Node& n) {
  kernels::StreamingOp op;
  if (n.num_inputs() != 2 || !kernels::StreamingOpOf(n.op_type, &op) || !kernels::HaveStreamingStores()) return false;
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* out = n.output(0);
  if (out == nullptr || !L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out) || L.Const(a) != nullptr ||
      L.Const(b) != nullptr || L.V(a).slot < 0 || L.V(b).slot < 0 || !NativeReady(L, a) || !NativeReady(L, b)) {
    return false;
  }
  const std::vector<int64_t>& od = L.V(out).dims;
  const int64_t count = NumElements(od);
  if (L.V(a).dims != od || L.V(b).dims != od || count * static_cast<int64_t>(sizeof(float)) < kernels::kStreamingMinBytes ||
      !L.plan().slots[L.V(a).slot].plain || !L.plan().slots[L.V(b).slot].plain || !L.CollectPostOps(out).empty()) {
    return false;
  }
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.V(a).slot, L.V(b).slot}, slot, [op, count](const void* const* in, void* y) {
    kernels::StreamingBinaryF32(op, static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                                static_cast<float*>(y), count);
    return absl::OkStatus();
  });
  step->kind = "streaming_binary";
  step->inplace_ok = true;
  return true;
}

}  // namespace

bool LowerBinaryOrNative(Lowerer& L, const Node& n) {
  return LowerChannelScale(L, n) || LowerStreamingBinary(L, n) || TryOneDnn(LowerBinary, L, n) ||
         LowerNativeElementwise(L, n);
}

bool LowerUnaryOrNative(Lowerer& L, const Node& n) {
  if (TryOneDnn(LowerUnary, L, n)) return true;
  return n.op_type == "Pow" ? LowerNativeElementwise(L, n) : LowerNativeUnary(L, n);
}

bool LowerNativePredicate(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !NativeReady(L, x) || out == nullptr || L.V(out).dtype != DType::kBool ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  int64_t count = NumElements(L.V(x).dims);
  bool is_nan = n.op_type == "IsNaN";
  bool positive = n.GetInt("detect_positive", 1) != 0, negative = n.GetInt("detect_negative", 1) != 0;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [=](const void* const* i, void* y) {
    const auto* xs = static_cast<const float*>(i[0]);
    auto* ys = static_cast<uint8_t*>(y);
    is_nan ? kernels::IsNaNF32(xs, ys, count) : kernels::IsInfF32(xs, ys, count, positive, negative);
    return absl::OkStatus();
  });
  return true;
}

// Not over bool (masks: DeBERTa's inverted attention mask), one byte each.
bool LowerNativeNot(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (out == nullptr || !NativeReady(L, x) || L.V(x).dtype != DType::kBool || L.V(out).dtype != DType::kBool ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  const int64_t count = NumElements(L.V(x).dims);
  const int in = L.PlainSlot(x);
  const int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [count](const void* const* i, void* y) {
    const auto* xs = static_cast<const uint8_t*>(i[0]);
    auto* ys = static_cast<uint8_t*>(y);
    for (int64_t k = 0; k < count; ++k) ys[k] = xs[k] == 0;
    return absl::OkStatus();
  });
  step->inplace_ok = true;
  return true;
}

}  // namespace aic::cpu

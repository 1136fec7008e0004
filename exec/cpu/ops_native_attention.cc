// Attention (opset 23-25, or its ai.aic alias) onto kernels/attention.h:
// f32 Q/K/V in the 4-D or 3-D layout, grouped-query heads, a boolean or
// float attn_mask, is_causal, scale, softcap, past_key/past_value (present
// outputs), nonpad_kv_seqlen and the opset-25 window. The attributes and
// dims are read by ops/nn/attention_params.h, as the reference kernel reads
// them. Returns false (the reference kernel runs) for what this does not
// cover: other dtypes, the qk_matmul_output output, a softmax_precision
// other than float, and malformed inputs (the reference kernel reports those).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "exec/cpu/kernels/attention.h"
#include "exec/cpu/native_step.h"
#include "ops/nn/attention_params.h"

namespace aic::cpu {

namespace {

using kernels::AttentionGeometry;
using kernels::HeadLayout;

// Strides of a 4-D [B, H, S, D] value, or of a 3-D [B, S, H·D] one.
HeadLayout LayoutOf(bool four_d, int64_t heads, int64_t seq, int64_t size) {
  if (four_d) return {heads * seq * size, seq * size, size};
  return {seq * heads * size, size, heads * size};
}

// dst [B, H, past + seq, D] <- past [B, H, past, D] ++ src (seq rows per head
// in `layout`); f32 or half elements.
template <typename T>
void ConcatHeads(const T* past, const T* src, const HeadLayout& layout, T* dst, int64_t batch, int64_t heads,
                 int64_t past_seq, int64_t seq, int64_t size) {
  const int64_t total = past_seq + seq;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      T* d = dst + (b * heads + h) * total * size;
      if (past_seq > 0) {
        std::memcpy(d, past + (b * heads + h) * past_seq * size, sizeof(T) * past_seq * size);
      }
      const T* s = src + b * layout.batch + h * layout.head;
      for (int64_t i = 0; i < seq; ++i) {
        std::memcpy(d + (past_seq + i) * size, s + i * layout.seq, sizeof(T) * size);
      }
    }
  }
}

// What both lowerings read from the node: the kernel's geometry, the K/V
// layouts as given, the past, the mask and nonpad_kv_seqlen.
struct AttentionSetup {
  AttentionGeometry g;
  HeadLayout k_in, v_in;
  int64_t kv_seq = 0, past_seq = 0;
  bool has_past = false;
  const Value* mask = nullptr;
  const Value* nonpad = nullptr;
  std::vector<int64_t> pk_dims, pv_dims;  // present_key/present_value: [B, kv_heads, total, size]
};

// The node as the kernel runs it, from its attributes and its values' dims
// (a half model's widened values have the dims of its half ones); nullopt
// where the kernel does not cover it. Dtypes of Q/K/V/past/outputs are the
// caller's to check.
std::optional<AttentionSetup> ReadAttention(Lowerer& L, const Node& n) {
  const int64_t opset = L.OpsetOf(n);
  auto attrs = ReadAttentionAttrs(n, opset);
  if (!attrs.ok()) return std::nullopt;
  const AttentionAttrs& a = *attrs;
  if (a.softmax_precision != DType::kUndefined && a.softmax_precision != DType::kFloat) return std::nullopt;
  if (n.num_outputs() > 3 && n.output(3) != nullptr) return std::nullopt;  // qk_matmul_output
  if (n.output(0) == nullptr) return std::nullopt;
  AttentionSetup s;
  s.has_past = n.has_input(kAttentionPastKey);
  if (s.has_past != n.has_input(kAttentionPastValue)) return std::nullopt;
  s.nonpad = opset >= 24 && n.has_input(kAttentionNonpad) ? n.input(kAttentionNonpad) : nullptr;
  if (s.nonpad != nullptr && s.has_past) return std::nullopt;

  std::vector<Shape> shapes;
  for (size_t i = 0; i <= kAttentionPastValue; ++i) {
    shapes.push_back(n.has_input(i) ? Shape::FromValues(L.V(n.input(i)).dims) : Shape());
  }
  auto dims = ResolveAttentionDims(shapes, s.has_past, a);
  if (!dims.ok()) return std::nullopt;
  const AttentionDims& d = *dims;
  AttentionGeometry& g = s.g;
  g.batch = d.batch.value();
  g.q_heads = d.q_heads.value();
  g.kv_heads = d.kv_heads.value();
  g.q_seq = d.q_seq.value();
  g.total_seq = d.total_seq.value();
  g.head = d.head.value();
  g.v_head = d.v_head.value();
  s.kv_seq = d.kv_seq.value();
  s.past_seq = d.past_seq.value();
  const bool four_d = d.rank == 4;
  std::vector<int64_t> y_dims = four_d ? std::vector<int64_t>{g.batch, g.q_heads, g.q_seq, g.v_head}
                                       : std::vector<int64_t>{g.batch, g.q_seq, g.q_heads * g.v_head};
  if (L.V(n.output(0)).dims != y_dims || g.batch * g.q_heads * g.q_seq * g.v_head == 0) return std::nullopt;
  g.q = LayoutOf(four_d, g.q_heads, g.q_seq, g.head);
  g.y = LayoutOf(four_d, g.q_heads, g.q_seq, g.v_head);
  s.k_in = LayoutOf(four_d, g.kv_heads, s.kv_seq, g.head);
  s.v_in = LayoutOf(four_d, g.kv_heads, s.kv_seq, g.v_head);
  g.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(g.head)));
  g.softcap = static_cast<float>(a.softcap);
  g.causal = a.causal;
  g.left_window = a.left_window;
  g.right_window = a.right_window;

  s.mask = n.has_input(kAttentionMask) ? n.input(kAttentionMask) : nullptr;
  if (s.mask != nullptr) {
    if (!NativeReady(L, s.mask)) return std::nullopt;
    DType mt = L.V(s.mask).dtype;
    if (mt != DType::kBool && mt != DType::kFloat) return std::nullopt;
    std::vector<int64_t> md = L.V(s.mask).dims;
    if (md.size() > 4) return std::nullopt;
    md.insert(md.begin(), 4 - md.size(), 1);
    const int64_t want[3] = {g.batch, g.q_heads, g.q_seq};
    for (int i = 0; i < 3; ++i) {
      if (md[i] != 1 && md[i] != want[i]) return std::nullopt;
    }
    if (md[3] > g.total_seq) return std::nullopt;
    g.mask = mt == DType::kBool ? AttentionGeometry::Mask::kBool : AttentionGeometry::Mask::kFloat;
    g.mask_cols = md[3];
    g.mask_row = md[2] == 1 ? 0 : md[3];
    g.mask_head = md[1] == 1 ? 0 : md[2] * md[3];
    g.mask_batch = md[0] == 1 ? 0 : md[1] * md[2] * md[3];
  }
  if (s.nonpad != nullptr) {
    if (!NativeReady(L, s.nonpad) || L.V(s.nonpad).dtype != DType::kInt64 ||
        L.V(s.nonpad).dims != std::vector<int64_t>{g.batch}) {
      return std::nullopt;
    }
  }
  s.pk_dims = {g.batch, g.kv_heads, g.total_seq, g.head};
  s.pv_dims = {g.batch, g.kv_heads, g.total_seq, g.v_head};
  return s;
}

// The kernel's geometry for one run: K/V read from the present outputs
// where there is a past, and each batch's first query position among the
// keys: after the past, or (nonpad_kv_seqlen, an external cache) ending at
// its last valid key.
AttentionGeometry RunGeometry(const AttentionSetup& s, const int64_t* key_end, std::vector<int64_t>& offset) {
  AttentionGeometry run = s.g;
  run.k = s.has_past ? LayoutOf(true, s.g.kv_heads, s.g.total_seq, s.g.head) : s.k_in;
  run.v = s.has_past ? LayoutOf(true, s.g.kv_heads, s.g.total_seq, s.g.v_head) : s.v_in;
  offset.assign(static_cast<size_t>(s.g.batch), s.past_seq);
  if (key_end != nullptr) {
    for (int64_t b = 0; b < s.g.batch; ++b) offset[static_cast<size_t>(b)] = key_end[b] - s.g.q_seq;
  }
  return run;
}

// One run of either step: present outputs as past ++ current (elements of
// T), then `kernel` (AttentionF32 or AttentionHalf) over the keys. Inputs:
// q, k, v, mask, past_key, past_value, nonpad_kv_seqlen; outputs: y,
// present_key, present_value (null where absent).
template <typename T, typename Kernel>
void RunAttentionStep(const AttentionSetup& s, const void* const* in, void* const* out, Kernel kernel) {
  const AttentionGeometry& g = s.g;
  const auto* kp = static_cast<const T*>(in[1]);
  const auto* vp = static_cast<const T*>(in[2]);
  auto* present_k = static_cast<T*>(out[1]);
  auto* present_v = static_cast<T*>(out[2]);
  if (present_k != nullptr) {
    ConcatHeads(static_cast<const T*>(in[4]), kp, s.k_in, present_k, g.batch, g.kv_heads, s.past_seq, s.kv_seq, g.head);
  }
  if (present_v != nullptr) {
    ConcatHeads(static_cast<const T*>(in[5]), vp, s.v_in, present_v, g.batch, g.kv_heads, s.past_seq, s.kv_seq,
                g.v_head);
  }
  const auto* key_end = static_cast<const int64_t*>(in[6]);
  std::vector<int64_t> offset;
  const AttentionGeometry run = RunGeometry(s, key_end, offset);
  kernel(run, static_cast<const T*>(in[0]), s.has_past ? present_k : kp, s.has_past ? present_v : vp, in[3],
         offset.data(), key_end, static_cast<T*>(out[0]));
}

}  // namespace

bool LowerAttention(Lowerer& L, const Node& n) {
  std::optional<AttentionSetup> setup = ReadAttention(L, n);
  if (!setup) return false;
  const AttentionSetup& s = *setup;
  const Value *q = n.input(kAttentionQ), *k = n.input(kAttentionK), *v = n.input(kAttentionV);
  const Value* y = n.output(0);
  if (!L.IsF32(y)) return false;
  for (const Value* x : {q, k, v}) {
    if (!L.IsF32(x) || !NativeReady(L, x)) return false;
  }
  const Value* past_k = s.has_past ? n.input(kAttentionPastKey) : nullptr;
  const Value* past_v = s.has_past ? n.input(kAttentionPastValue) : nullptr;
  if (s.has_past && (!L.IsF32(past_k) || !L.IsF32(past_v) || !NativeReady(L, past_k) || !NativeReady(L, past_v))) {
    return false;
  }
  // present_key/present_value: past ++ current in [B, kv_heads, total, size].
  // With a past they are also where the kernel reads the keys; then a scratch
  // slot stands in for one that is not requested.
  int present_slot[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const Value* p = n.num_outputs() > static_cast<size_t>(i + 1) ? n.output(i + 1) : nullptr;
    const std::vector<int64_t>& want = i == 0 ? s.pk_dims : s.pv_dims;
    if (p != nullptr) {
      if (!L.IsF32(p) || L.V(p).dims != want) return false;
      if (NumElements(want) > 0 && (present_slot[i] = NativeOutSlot(L, p)) < 0) return false;
    } else if (s.has_past && NumElements(want) > 0) {
      present_slot[i] = L.NewArenaSlot(nullptr, PlainMd(want), true);
    }
  }
  int y_slot = NativeOutSlot(L, y);
  if (y_slot < 0) return false;

  std::vector<int> ins = {L.PlainSlot(q),
                          L.PlainSlot(k),
                          L.PlainSlot(v),
                          s.mask != nullptr ? L.PlainSlot(s.mask) : -1,
                          s.has_past ? L.PlainSlot(past_k) : -1,
                          s.has_past ? L.PlainSlot(past_v) : -1,
                          s.nonpad != nullptr ? L.PlainSlot(s.nonpad) : -1};
  std::vector<int> outs = {y_slot, present_slot[0], present_slot[1]};
  NativeStep* step = AddNativeStep(L, n, ins, outs, [s](const void* const* in, void* const* out) {
    RunAttentionStep<float>(s, in, out, kernels::AttentionF32);
    return absl::OkStatus();
  });
  step->kind = "attention";
  return true;
}

// widen_half's Casts around an Attention of a half model: Cast(f16 -> f32)
// into each of Q, K, V and the past (read by it alone), each output read by
// a Cast back to f16 alone. One step on the half values instead
// (kernels::AttentionHalf; present outputs concatenated as half bytes), the
// Casts fused into it. Called by LowerCast with any of those input Casts.
bool LowerHalfAttention(Lowerer& L, const Node& cast_in) {
  const Value* widened = cast_in.output(0);
  if (widened == nullptr || L.V(widened).dtype != DType::kFloat || L.V(widened).graph_output) return false;
  const Node* n = L.SoleConsumer(widened);
  if (n == nullptr || n->op_type != "Attention" || (!n->domain.empty() && n->domain != kAicDomain)) return false;
  // Q, K, V, past_key, past_value: each the output of a Cast from a ready half value.
  const size_t kHalfInputs[] = {kAttentionQ, kAttentionK, kAttentionV, kAttentionPastKey, kAttentionPastValue};
  const Value* halves[5] = {};
  const Node* casts[5] = {};
  bool from_this_cast = false;
  for (int i = 0; i < 5; ++i) {
    const size_t slot = kHalfInputs[i];
    if (!n->has_input(slot)) {
      if (i < 3) return false;
      continue;
    }
    const Value* x = n->input(slot);
    const Node* c = x->producer();
    if (c == nullptr || c->op_type != "Cast" || !c->domain.empty() || L.V(x).graph_output ||
        L.V(x).consumers.size() != 1 || L.V(x).dtype != DType::kFloat) {
      return false;
    }
    if (c != &cast_in && L.Done(c)) return false;  // lowered already: it declined this fusion
    from_this_cast = from_this_cast || c == &cast_in;
    casts[i] = c;
    halves[i] = c->input(0);
    if (halves[i] == nullptr || L.V(halves[i]).dtype != DType::kFloat16 || !NativeReady(L, halves[i]) ||
        L.V(halves[i]).dims != L.V(x).dims) {
      return false;
    }
  }
  if (!from_this_cast) return false;  // cast_in feeds the mask: lowered as a Cast of its own
  // A float mask of the half model arrives through its own widening Cast,
  // which may come later in the order: lowered first, the step reads it.
  const Value* mask = n->has_input(kAttentionMask) ? n->input(kAttentionMask) : nullptr;
  const Node* widen = mask != nullptr ? mask->producer() : nullptr;
  if (widen != nullptr && !NativeReady(L, mask) && widen->op_type == "Cast" && !L.Done(widen) &&
      NativeReady(L, widen->input(0)) && !L.LowerEarly(*widen).ok()) {
    return false;
  }
  std::optional<AttentionSetup> setup = ReadAttention(L, *n);
  if (!setup) return false;
  const AttentionSetup& s = *setup;
  // Outputs: each present one read by a Cast back to f16 alone (an unread present output counts as absent).
  const Node* backs[3] = {};
  for (size_t i = 0; i < 3 && i < n->num_outputs(); ++i) {
    const Value* o = n->output(i);
    if (o == nullptr || (i > 0 && L.V(o).consumers.empty() && !L.V(o).graph_output)) continue;
    backs[i] = HalfCastOf(L, o, i == 0 ? L.V(o).dims : i == 1 ? s.pk_dims : s.pv_dims);
    if (backs[i] == nullptr) return false;
  }
  if (backs[0] == nullptr) return false;
  int out_slots[3] = {-1, -1, -1};
  for (int i = 0; i < 3; ++i) {
    const std::vector<int64_t>& want = i == 1 ? s.pk_dims : s.pv_dims;
    if (backs[i] != nullptr) {
      if (i > 0 && NumElements(want) == 0) continue;
      if ((out_slots[i] = NativeOutSlot(L, backs[i]->output(0))) < 0) return false;
    } else if (i > 0 && s.has_past && NumElements(want) > 0) {
      out_slots[i] = L.NewArenaSlot(
          nullptr,
          memory::desc(memory::dims(want.begin(), want.end()), memory::data_type::f16, memory::format_tag::abcd), true);
      L.plan().slots[out_slots[i]].dtype = DType::kFloat16;
    }
  }
  std::vector<int> ins = {L.PlainSlot(halves[0]),
                          L.PlainSlot(halves[1]),
                          L.PlainSlot(halves[2]),
                          s.mask != nullptr ? L.PlainSlot(s.mask) : -1,
                          s.has_past ? L.PlainSlot(halves[3]) : -1,
                          s.has_past ? L.PlainSlot(halves[4]) : -1,
                          s.nonpad != nullptr ? L.PlainSlot(s.nonpad) : -1};
  std::vector<int> outs = {out_slots[0], out_slots[1], out_slots[2]};
  NativeStep* step = AddNativeStep(L, *n, ins, outs, [s](const void* const* in, void* const* out) {
    RunAttentionStep<uint16_t>(s, in, out, kernels::AttentionHalf);
    return absl::OkStatus();
  });
  step->kind = "attention";
  for (const Node* c : casts) {
    if (c != nullptr && c != &cast_in) L.MarkFused(c);
  }
  L.MarkFused(n);
  for (const Node* b : backs) {
    if (b != nullptr) L.MarkFused(b);
  }
  return true;
}

}  // namespace aic::cpu

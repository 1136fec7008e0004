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
// in `layout`).
void ConcatHeads(const float* past, const float* src, const HeadLayout& layout, float* dst, int64_t batch,
                 int64_t heads, int64_t past_seq, int64_t seq, int64_t size) {
  const int64_t total = past_seq + seq;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      float* d = dst + (b * heads + h) * total * size;
      if (past_seq > 0) {
        std::memcpy(d, past + (b * heads + h) * past_seq * size, sizeof(float) * past_seq * size);
      }
      const float* s = src + b * layout.batch + h * layout.head;
      for (int64_t i = 0; i < seq; ++i) {
        std::memcpy(d + (past_seq + i) * size, s + i * layout.seq, sizeof(float) * size);
      }
    }
  }
}

}  // namespace

bool LowerAttention(Lowerer& L, const Node& n) {
  const int64_t opset = L.OpsetOf(n);
  auto attrs = ReadAttentionAttrs(n, opset);
  if (!attrs.ok()) return false;
  const AttentionAttrs& a = *attrs;
  if (a.softmax_precision != DType::kUndefined && a.softmax_precision != DType::kFloat) return false;
  if (n.num_outputs() > 3 && n.output(3) != nullptr) return false;  // qk_matmul_output
  const Value *q = n.input(kAttentionQ), *k = n.input(kAttentionK), *v = n.input(kAttentionV);
  const Value* y = n.output(0);
  if (y == nullptr || !L.IsF32(y)) return false;
  for (const Value* x : {q, k, v}) {
    if (!L.IsF32(x) || !NativeReady(L, x)) return false;
  }
  const bool has_past = n.has_input(kAttentionPastKey);
  if (has_past != n.has_input(kAttentionPastValue)) return false;
  const Value* past_k = has_past ? n.input(kAttentionPastKey) : nullptr;
  const Value* past_v = has_past ? n.input(kAttentionPastValue) : nullptr;
  if (has_past && (!L.IsF32(past_k) || !L.IsF32(past_v) || !NativeReady(L, past_k) || !NativeReady(L, past_v))) {
    return false;
  }
  const Value* nonpad = opset >= 24 && n.has_input(kAttentionNonpad) ? n.input(kAttentionNonpad) : nullptr;
  if (nonpad != nullptr && has_past) return false;

  std::vector<Shape> shapes;
  for (size_t i = 0; i <= kAttentionPastValue; ++i) {
    shapes.push_back(n.has_input(i) ? Shape::FromValues(L.V(n.input(i)).dims) : Shape());
  }
  auto dims = ResolveAttentionDims(shapes, has_past, a);
  if (!dims.ok()) return false;
  const AttentionDims& d = *dims;
  AttentionGeometry g;
  g.batch = d.batch.value();
  g.q_heads = d.q_heads.value();
  g.kv_heads = d.kv_heads.value();
  g.q_seq = d.q_seq.value();
  g.total_seq = d.total_seq.value();
  g.head = d.head.value();
  g.v_head = d.v_head.value();
  const int64_t kv_seq = d.kv_seq.value(), past_seq = d.past_seq.value();
  const bool four_d = d.rank == 4;
  std::vector<int64_t> y_dims = four_d ? std::vector<int64_t>{g.batch, g.q_heads, g.q_seq, g.v_head}
                                       : std::vector<int64_t>{g.batch, g.q_seq, g.q_heads * g.v_head};
  if (L.V(y).dims != y_dims || g.batch * g.q_heads * g.q_seq * g.v_head == 0) return false;
  g.q = LayoutOf(four_d, g.q_heads, g.q_seq, g.head);
  g.y = LayoutOf(four_d, g.q_heads, g.q_seq, g.v_head);
  const HeadLayout k_in = LayoutOf(four_d, g.kv_heads, kv_seq, g.head);
  const HeadLayout v_in = LayoutOf(four_d, g.kv_heads, kv_seq, g.v_head);
  g.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(g.head)));
  g.softcap = static_cast<float>(a.softcap);
  g.causal = a.causal;
  g.left_window = a.left_window;
  g.right_window = a.right_window;

  const Value* mask = n.has_input(kAttentionMask) ? n.input(kAttentionMask) : nullptr;
  if (mask != nullptr) {
    if (!NativeReady(L, mask)) return false;
    DType mt = L.V(mask).dtype;
    if (mt != DType::kBool && mt != DType::kFloat) return false;
    std::vector<int64_t> md = L.V(mask).dims;
    if (md.size() > 4) return false;
    md.insert(md.begin(), 4 - md.size(), 1);
    const int64_t want[3] = {g.batch, g.q_heads, g.q_seq};
    for (int i = 0; i < 3; ++i) {
      if (md[i] != 1 && md[i] != want[i]) return false;
    }
    if (md[3] > g.total_seq) return false;
    g.mask = mt == DType::kBool ? AttentionGeometry::Mask::kBool : AttentionGeometry::Mask::kFloat;
    g.mask_cols = md[3];
    g.mask_row = md[2] == 1 ? 0 : md[3];
    g.mask_head = md[1] == 1 ? 0 : md[2] * md[3];
    g.mask_batch = md[0] == 1 ? 0 : md[1] * md[2] * md[3];
  }
  if (nonpad != nullptr) {
    if (!NativeReady(L, nonpad) || L.V(nonpad).dtype != DType::kInt64 ||
        L.V(nonpad).dims != std::vector<int64_t>{g.batch}) {
      return false;
    }
  }

  // present_key/present_value: past ++ current in [B, kv_heads, total, size].
  // With a past they are also where the kernel reads the keys; then a scratch
  // slot stands in for one that is not requested.
  const std::vector<int64_t> pk_dims = {g.batch, g.kv_heads, g.total_seq, g.head};
  const std::vector<int64_t> pv_dims = {g.batch, g.kv_heads, g.total_seq, g.v_head};
  int present_slot[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const Value* p = n.num_outputs() > static_cast<size_t>(i + 1) ? n.output(i + 1) : nullptr;
    const std::vector<int64_t>& want = i == 0 ? pk_dims : pv_dims;
    if (p != nullptr) {
      if (!L.IsF32(p) || L.V(p).dims != want) return false;
      if (NumElements(want) > 0 && (present_slot[i] = NativeOutSlot(L, p)) < 0) return false;
    } else if (has_past && NumElements(want) > 0) {
      present_slot[i] = L.NewArenaSlot(nullptr, PlainMd(want), true);
    }
  }
  int y_slot = NativeOutSlot(L, y);
  if (y_slot < 0) return false;

  std::vector<int> ins = {L.PlainSlot(q),
                          L.PlainSlot(k),
                          L.PlainSlot(v),
                          mask != nullptr ? L.PlainSlot(mask) : -1,
                          has_past ? L.PlainSlot(past_k) : -1,
                          has_past ? L.PlainSlot(past_v) : -1,
                          nonpad != nullptr ? L.PlainSlot(nonpad) : -1};
  std::vector<int> outs = {y_slot, present_slot[0], present_slot[1]};
  const HeadLayout k_total = LayoutOf(true, g.kv_heads, g.total_seq, g.head);
  const HeadLayout v_total = LayoutOf(true, g.kv_heads, g.total_seq, g.v_head);
  NativeStep* step = AddNativeStep(L, n, ins, outs, [=](const void* const* in, void* const* out) {
    const auto* qp = static_cast<const float*>(in[0]);
    const auto* kp = static_cast<const float*>(in[1]);
    const auto* vp = static_cast<const float*>(in[2]);
    auto* present_k = static_cast<float*>(out[1]);
    auto* present_v = static_cast<float*>(out[2]);
    if (present_k != nullptr) {
      ConcatHeads(static_cast<const float*>(in[4]), kp, k_in, present_k, g.batch, g.kv_heads, past_seq, kv_seq,
                  g.head);
    }
    if (present_v != nullptr) {
      ConcatHeads(static_cast<const float*>(in[5]), vp, v_in, present_v, g.batch, g.kv_heads, past_seq, kv_seq,
                  g.v_head);
    }
    AttentionGeometry run = g;
    run.k = has_past ? k_total : k_in;
    run.v = has_past ? v_total : v_in;
    // Each batch's first query position among the keys: after the past, or
    // (nonpad_kv_seqlen, an external cache) ending at its last valid key.
    std::vector<int64_t> offset(static_cast<size_t>(g.batch), past_seq);
    const auto* key_end = static_cast<const int64_t*>(in[6]);
    if (key_end != nullptr) {
      for (int64_t b = 0; b < g.batch; ++b) offset[static_cast<size_t>(b)] = key_end[b] - g.q_seq;
    }
    kernels::AttentionF32(run, qp, has_past ? present_k : kp, has_past ? present_v : vp, in[3], offset.data(),
                          key_end, static_cast<float*>(out[0]));
    return absl::OkStatus();
  });
  step->kind = "attention";
  return true;
}

}  // namespace aic::cpu

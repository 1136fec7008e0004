// Attention's attributes and dims, read once for every user: shape
// inference, cost and the reference kernel (attention.cc) and the CPU
// backend's lowering (exec/cpu/ops_native_attention.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/dtype.h"
#include "graph/graph.h"
#include "graph/shape.h"

namespace aic {

// Input slots.
constexpr size_t kAttentionQ = 0, kAttentionK = 1, kAttentionV = 2, kAttentionMask = 3, kAttentionPastKey = 4,
                 kAttentionPastValue = 5, kAttentionNonpad = 6;

struct AttentionAttrs {
  bool causal = false;
  int64_t q_num_heads = 0, kv_num_heads = 0;    // 0: absent (4-D inputs carry heads)
  int64_t mode = 0;                             // what qk_matmul_output shows, 0..3
  std::optional<double> scale;                  // default 1/√head_size
  double softcap = 0;                           // <= 0: none
  DType softmax_precision = DType::kUndefined;  // kUndefined: T1
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
};

// The attributes at `opset` (23: no window); an error for values out of range.
absl::StatusOr<AttentionAttrs> ReadAttentionAttrs(const Node& n, int64_t opset);

// The op's dims, read off whichever inputs know them. Unknown stays unknown
// (Dim()); callers of shape inference turn those into fresh symbols.
struct AttentionDims {
  int64_t rank = 0;  // 3 or 4; 0 when no input's rank is known
  Dim batch, q_heads, kv_heads, q_seq, kv_seq, past_seq, total_seq, head, v_head;
  Dim y_hidden;  // 3-D only: q_heads · v_head
};

// The dims of 4-D Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] (an
// unknown rank: unknown dims) into d's batch, heads, sequence and head
// sizes, each read off whichever input knows it; an error when they
// disagree. Attention's 4-D form and FlexAttention share it.
absl::Status UnifyFourDimQkv(const Shape& q, const Shape& k, const Shape& v, AttentionDims& d);

// Q, K, V, past_key, past_value shapes (absent inputs: unknown rank), in
// slot order; an error when they disagree.
absl::StatusOr<AttentionDims> ResolveAttentionDims(const std::vector<Shape>& s, bool has_past,
                                                   const AttentionAttrs& a);

}  // namespace aic

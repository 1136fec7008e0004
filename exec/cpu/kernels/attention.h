// Scaled dot-product attention over dense f32 (ONNX Attention, opset 23-25):
// per (batch, query head) two GEMMs (oneDNN's sgemm) around a row softmax,
//   Y = softmax(softcap(scale · Q·Kᵀ) + bias) · V,
// reading Q/K/V/Y through strides so that both the 4-D [B, H, S, D] layout
// and the 3-D [B, S, H·D] one are used in place, without a transpose. The
// bias is the op's: attn_mask (boolean: false hides a key; float: added;
// keys past the mask's last dim hidden), the causal frontier and window
// around each batch's query offset, and a per-batch end of valid keys. A
// query that sees no key gives zeros, like the reference kernel.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// Element strides of a [batch, heads, seq, size] view (size contiguous).
struct HeadLayout {
  int64_t batch = 0, head = 0, seq = 0;
};

struct AttentionGeometry {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, q_seq = 1, total_seq = 1, head = 1, v_head = 1;
  HeadLayout q, k, v, y;
  float scale = 1;
  float softcap = 0;  // <= 0: none
  bool causal = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
  // attn_mask as [B, H, Sq, cols] with stride 0 on broadcast dims.
  enum class Mask { kNone, kBool, kFloat } mask = Mask::kNone;
  int64_t mask_batch = 0, mask_head = 0, mask_row = 0, mask_cols = 0;
};

// `offset[b]`: the position of batch b's first query among the keys (the
// past length); `key_end[b]`: keys from it on are hidden (null: none).
void AttentionF32(const AttentionGeometry& g, const float* q, const float* k, const float* v, const void* mask,
                  const int64_t* offset, const int64_t* key_end, float* y);

// The same with Q, K, V and Y as float16 bits (a half model's Attention,
// between the Casts widen_half puts around it): each (batch, kv head)
// widens its K and V rows, and each of its query heads its Q rows, into
// per-thread buffers, and rounds its Y rows to half; the arithmetic of
// AttentionF32 on the widened values. Widening whole K/V caches instead
// (Casts to f32 and back around the op) was 28-33% of an f16 decoder
// step's attention ([4, 8, 512, 64] caches).
void AttentionHalf(const AttentionGeometry& g, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                   const void* mask, const int64_t* offset, const int64_t* key_end, uint16_t* y);

}  // namespace aic::cpu::kernels

// The lowering of RotaryEmbedding (opset 23, or its ai.aic alias) onto our own
// kernel (exec/cpu/kernels/rotary.h): f32 X of static shape, 3-D with
// num_heads or 4-D, interleaved or not, any even rotary_embedding_dim, caches
// per token ([B, S, dim/2]) or indexed by int64 position_ids ([max_pos,
// dim/2]); the geometry is ops/nn/rotary_params.h's, the reference kernel's
// own. Returns false (nothing emitted) for anything else, and the
// reference kernel runs, reporting what is wrong with the node.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/rotary.h"
#include "exec/cpu/native_step.h"
#include "ops/nn/rotary_params.h"

namespace aic::cpu {

bool LowerRotaryEmbedding(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* cos = n.input(1);
  const Value* sin = n.input(2);
  const Value* positions = n.input(3);
  const Value* out = n.output(0);
  if (n.num_inputs() < 3 || n.num_inputs() > 4 || n.num_outputs() != 1) return false;
  for (const Value* v : {x, cos, sin, out}) {
    if (!L.IsF32(v) || (v != out && !NativeReady(L, v))) return false;
  }
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (L.V(out).dims != dims) return false;
  absl::StatusOr<RotaryDims> geometry = ResolveRotaryDims(dims, n);
  if (!geometry.ok()) return false;
  kernels::RotaryShape shape;
  shape.heads_first = geometry->four_d;
  shape.batch = geometry->batch;
  shape.seq = geometry->seq;
  shape.heads = geometry->heads;
  shape.head = geometry->head;
  shape.rot = geometry->rot;
  shape.interleaved = geometry->interleaved;
  if (NumElements(dims) == 0) return false;
  const int64_t half = shape.rot / 2;

  // The caches: [B, S, half] per token, or [rows, half] read through position_ids [B, S].
  int64_t cache_rows = -1;
  if (positions != nullptr) {
    const ValueState& p = L.V(positions);
    if (!NativeReady(L, positions) || p.dtype != DType::kInt64 ||
        p.dims != std::vector<int64_t>{shape.batch, shape.seq}) {
      return false;
    }
    const std::vector<int64_t>& c = L.V(cos).dims;
    if (c.size() != 2 || c[1] != half) return false;
    cache_rows = c[0];
  } else if (L.V(cos).dims != std::vector<int64_t>{shape.batch, shape.seq, half}) {
    return false;
  }
  if (L.V(sin).dims != L.V(cos).dims) return false;

  std::vector<int> ins = {L.PlainSlot(x), L.PlainSlot(cos), L.PlainSlot(sin),
                          positions != nullptr ? L.PlainSlot(positions) : -1};
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  const int64_t tokens = shape.batch * shape.seq;
  std::string where = n.Describe();
  NativeStep* step = AddNativeStep(L, n, ins, slot, [=](const void* const* in, void* y) {
    const auto* pos = static_cast<const int64_t*>(in[3]);
    // Position ids are data: checked on every run, before anything is written.
    for (int64_t t = 0; pos != nullptr && t < tokens; ++t) {
      if (pos[t] < 0 || pos[t] >= cache_rows) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": position id ", pos[t], " (element ", t,
                                                       " of position_ids) outside the cache's ", cache_rows,
                                                       " rows"));
      }
    }
    kernels::RotaryEmbeddingF32(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                                static_cast<const float*>(in[2]), pos, static_cast<float*>(y), shape);
    return absl::OkStatus();
  });
  step->kind = "rotary";
  step->inplace_ok = true;
  return true;
}

}  // namespace aic::cpu

// The lowering of RotaryEmbedding (opset 23, or its ai.aic alias) onto our own
// kernel (exec/cpu/kernels/rotary.h): f32 X of static shape, 3-D with
// num_heads or 4-D, interleaved or not, any even rotary_embedding_dim, caches
// per token ([B, S, dim/2]) or indexed by int64 position_ids ([max_pos,
// dim/2]); the geometry is ops/nn/rotary_params.h's, the reference kernel's
// own. Returns false (nothing emitted) for anything else, and the
// reference kernel runs, reporting what is wrong with the node.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/rotary.h"
#include "exec/cpu/native_step.h"
#include "ops/nn/rotary_params.h"

namespace aic::cpu {

namespace {

struct RotaryPlan {
  kernels::RotaryShape shape;
  int64_t cache_rows = -1;  // rows of a position-indexed cache, -1 for per-token caches
};

// n's geometry over x of `dims`, with f32 caches (and int64 position_ids)
// ready to read; nullopt for anything else.
std::optional<RotaryPlan> RotaryPlanOf(Lowerer& L, const Node& n, const std::vector<int64_t>& dims) {
  const Value* cos = n.input(1);
  const Value* sin = n.input(2);
  const Value* positions = n.num_inputs() > 3 ? n.input(3) : nullptr;
  if (n.num_inputs() < 3 || n.num_inputs() > 4 || n.num_outputs() != 1 || NumElements(dims) == 0) return std::nullopt;
  for (const Value* v : {cos, sin}) {
    if (!L.IsF32(v) || !NativeReady(L, v)) return std::nullopt;
  }
  absl::StatusOr<RotaryDims> geometry = ResolveRotaryDims(dims, n);
  if (!geometry.ok()) return std::nullopt;
  RotaryPlan plan;
  kernels::RotaryShape& shape = plan.shape;
  shape.heads_first = geometry->four_d;
  shape.batch = geometry->batch;
  shape.seq = geometry->seq;
  shape.heads = geometry->heads;
  shape.head = geometry->head;
  shape.rot = geometry->rot;
  shape.interleaved = geometry->interleaved;
  const int64_t half = shape.rot / 2;
  // The caches: [B, S, half] per token, or [rows, half] read through position_ids [B, S].
  if (positions != nullptr) {
    const ValueState& p = L.V(positions);
    if (!NativeReady(L, positions) || p.dtype != DType::kInt64 ||
        p.dims != std::vector<int64_t>{shape.batch, shape.seq}) {
      return std::nullopt;
    }
    const std::vector<int64_t>& c = L.V(cos).dims;
    if (c.size() != 2 || c[1] != half) return std::nullopt;
    plan.cache_rows = c[0];
  } else if (L.V(cos).dims != std::vector<int64_t>{shape.batch, shape.seq, half}) {
    return std::nullopt;
  }
  if (L.V(sin).dims != L.V(cos).dims) return std::nullopt;
  return plan;
}

// The step of n reading x from `x_slot` into `out_slot`: f32 both, or (half)
// float16 bits both.
NativeStep* AddRotaryStep(Lowerer& L, const Node& n, int x_slot, int out_slot, const RotaryPlan& plan, bool half) {
  const Value* positions = n.num_inputs() > 3 ? n.input(3) : nullptr;
  std::vector<int> ins = {x_slot, L.PlainSlot(n.input(1)), L.PlainSlot(n.input(2)),
                          positions != nullptr ? L.PlainSlot(positions) : -1};
  const kernels::RotaryShape shape = plan.shape;
  const int64_t cache_rows = plan.cache_rows;
  const int64_t tokens = shape.batch * shape.seq;
  std::string where = n.Describe();
  NativeStep* step = AddNativeStep(L, n, ins, out_slot, [=](const void* const* in, void* y) {
    const auto* pos = static_cast<const int64_t*>(in[3]);
    // Position ids are data: checked on every run, before anything is written.
    for (int64_t t = 0; pos != nullptr && t < tokens; ++t) {
      if (pos[t] < 0 || pos[t] >= cache_rows) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": position id ", pos[t], " (element ", t,
                                                       " of position_ids) outside the cache's ", cache_rows,
                                                       " rows"));
      }
    }
    const auto* c = static_cast<const float*>(in[1]);
    const auto* s = static_cast<const float*>(in[2]);
    if (half) {
      kernels::RotaryEmbeddingHalf(static_cast<const uint16_t*>(in[0]), c, s, pos, static_cast<uint16_t*>(y), shape);
    } else {
      kernels::RotaryEmbeddingF32(static_cast<const float*>(in[0]), c, s, pos, static_cast<float*>(y), shape);
    }
    return absl::OkStatus();
  });
  step->kind = "rotary";
  step->inplace_ok = true;
  return step;
}

bool IsRotary(const Node& n) {
  return n.op_type == "RotaryEmbedding" && (n.domain.empty() || n.domain == kAicDomain);
}

}  // namespace

bool LowerRotaryEmbedding(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (x == nullptr || out == nullptr || !L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (L.V(out).dims != dims) return false;
  std::optional<RotaryPlan> plan = RotaryPlanOf(L, n, dims);
  if (!plan) return false;
  int x_slot = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddRotaryStep(L, n, x_slot, slot, *plan, /*half=*/false);
  return true;
}

// Cast(x: f16 -> f32) -> RotaryEmbedding -> Cast(-> f16), what widen_half
// makes of rotary embeddings between half tensors: one step over the half
// head vectors (kernels::RotaryEmbeddingHalf), bit-equal to the three. The
// caches are f32 by then (widened constants, or Casts already run or run
// first here).
bool LowerHalfRotary(Lowerer& L, const Node& cast_in) {
  std::optional<HalfEdges> edges = HalfEdgesAround(L, cast_in);
  if (!edges || !IsRotary(*edges->op)) return false;
  const Node* rot = edges->op;
  // Half caches that are graph inputs are widened in input order, after x:
  // their Casts (of ready values) are lowered here first, so the one step
  // can read them; they would run before the rotary step anyway.
  for (size_t i = 1; i < 3 && i < rot->num_inputs(); ++i) {
    const Value* cache = rot->input(i);
    const Node* widen = cache != nullptr ? cache->producer() : nullptr;
    if (widen == nullptr || NativeReady(L, cache) || widen->op_type != "Cast" || L.Done(widen) ||
        !NativeReady(L, widen->input(0))) {
      continue;
    }
    if (!L.LowerEarly(*widen).ok()) return false;
  }
  const std::vector<int64_t>& dims = L.V(edges->x16).dims;
  std::optional<RotaryPlan> plan = RotaryPlanOf(L, *rot, dims);
  if (!plan) return false;
  int x_slot = L.PlainSlot(edges->x16);
  int slot = NativeOutSlot(L, edges->y16);
  if (slot < 0) return false;
  AddRotaryStep(L, *rot, x_slot, slot, *plan, /*half=*/true);
  L.MarkFused(rot);
  L.MarkFused(edges->back);
  return true;
}

}  // namespace aic::cpu

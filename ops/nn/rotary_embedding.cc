// RotaryEmbedding (opset 23): rotary position embeddings (RoPE). Within each
// head the first rotary_embedding_dim features (default: all) form pairs
// (x1, x2), either the two halves or (interleaved) neighbours, and each pair
// is rotated by its position's angle:
//   (x1, x2) -> (x1·cos − x2·sin, x1·sin + x2·cos);
// the other features pass through. cos/sin come from caches indexed by
// position_ids ([max_pos, dim/2]) or, without them, given per token
// ([B, S, dim/2]). X is [B, heads, S, head] or 3-D [B, S, heads·head] with
// the num_heads attribute.
#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/attention_internal.h"
#include "ops/nn/rotary_params.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

absl::Status InferRotaryEmbedding(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank()) {
    if (x.rank() != 3 && x.rank() != 4) {
      return ctx.Error("input must be 3-D or 4-D, got ", x.ToString());
    }
    int64_t num_heads = ctx.node().GetInt("num_heads", 0);
    if (x.rank() == 3 && num_heads <= 0) return ctx.Error("a 3-D input needs num_heads");
    const Dim& last = x[static_cast<size_t>(x.rank() - 1)];
    if (x.rank() == 3 && last.is_value() && last.value() % num_heads != 0) {
      return ctx.Error("hidden size ", last.value(), " does not split into ", num_heads, " heads");
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return absl::OkStatus();
}

absl::Status RotaryEmbeddingKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  DType t = xt.dtype();
  if (!IsRealDType(t)) return ctx.Unimplemented("dtype ", DTypeName(t));
  absl::StatusOr<RotaryDims> dims = ResolveRotaryDims(xt.dims(), ctx.node());
  if (!dims.ok()) return ctx.Error(dims.status().message());
  const bool four_d = dims->four_d, interleaved = dims->interleaved;
  const int64_t b_n = dims->batch, s_n = dims->seq, heads = dims->heads, head = dims->head;
  const int64_t half = dims->rot / 2;

  const Tensor &cos_t = ctx.input(1), &sin_t = ctx.input(2);
  bool by_position = ctx.has_input(3);
  std::vector<int64_t> pos;
  int64_t rows = b_n * s_n;  // cache rows when the caches are per token
  if (by_position) {
    const Tensor& p = ctx.input(3);
    if (p.rank() != 2 || p.dim(0) != b_n || p.dim(1) != s_n) {
      return ctx.Error("position_ids ", DimsToString(p.dims()), " is not [", b_n, ", ", s_n, "]");
    }
    pos = TensorToInt64(p);
    rows = cos_t.rank() == 2 ? cos_t.dim(0) : -1;
  }
  for (const Tensor* c : {&cos_t, &sin_t}) {
    int64_t want_rank = by_position ? 2 : 3;
    bool ok = c->rank() == want_rank && c->dim(want_rank - 1) == half &&
              (by_position ? c->dim(0) == rows : c->dim(0) == b_n && c->dim(1) == s_n);
    if (!ok) {
      return ctx.Error("cos/sin cache ", DimsToString(c->dims()), " does not fit dim/2 = ", half);
    }
  }
  for (int64_t p : pos) {
    if (p < 0 || p >= rows) {
      return ctx.Error("position id ", p, " outside the cache's ", rows, " rows");
    }
  }

  std::vector<double> x = TensorToDoubles(xt), cs = TensorToDoubles(cos_t),
                      sn = TensorToDoubles(sin_t);
  std::vector<double> y = x;
  auto r = [t](double v) { return RoundToDType(t, v); };
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t s = 0; s < s_n; ++s) {
      int64_t row = by_position ? pos[static_cast<size_t>(b * s_n + s)] : b * s_n + s;
      const double* c = cs.data() + row * half;
      const double* si = sn.data() + row * half;
      for (int64_t h = 0; h < heads; ++h) {
        int64_t base =
            four_d ? ((b * heads + h) * s_n + s) * head : (b * s_n + s) * heads * head + h * head;
        for (int64_t k = 0; k < half; ++k) {
          size_t i1 = static_cast<size_t>(base + (interleaved ? 2 * k : k));
          size_t i2 = static_cast<size_t>(base + (interleaved ? 2 * k + 1 : k + half));
          double x1 = x[i1], x2 = x[i2];
          y[i1] = r(r(c[k] * x1) - r(si[k] * x2));
          y[i2] = r(r(si[k] * x1) + r(c[k] * x2));
        }
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(y, xt.dims(), t));
  return absl::OkStatus();
}

Traits RotaryEmbeddingTraits(const OpContext&) {
  Traits t;
  t.semantic_name = "RotaryEmbedding";
  t.meaning = "(x1, x2) -> (x1·cos − x2·sin, x1·sin + x2·cos) per feature pair, angle by position";
  t.linearity = Linearity::kLinear;  // in X, for given cos/sin caches
  t.effect = RepresentationEffect::kPreserves;
  t.fuses_with = {"Attention"};
  return t;
}

}  // namespace

void RegisterRotaryEmbeddingOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "RotaryEmbedding",
                   .since_version = 23,
                   .infer = InferRotaryEmbedding,
                   .traits = RotaryEmbeddingTraits,
                   // Two products and one sum per output element of a rotated pair.
                   .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 3); },
                   .kernel = RotaryEmbeddingKernel});
}

}  // namespace aic

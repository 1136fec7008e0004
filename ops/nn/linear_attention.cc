// LinearAttention (opset 27): the recurrent attention of linear-attention and
// DeltaNet LLM blocks, one token at a time. Each key/value head keeps a
// d_k × d_v state S (past_state, or zeros) and, for every token t,
//   linear:      S ← S + k_t ⊗ v_t
//   gated:       S ← exp(g_t)·S + k_t ⊗ v_t
//   delta:       S ← S + k_t ⊗ β_t·(v_t − Sᵀk_t)
//   gated_delta: S ← exp(g_t)·S, then the delta update on that S;
//   o_t = scale · q_tᵀ S   (scale default 1/√d_k),
// g_t the decay (log-space, one per head or per key feature), β_t the update
// rate (per head, or one shared by all heads). Query head h reads the state
// of key/value head h / (q_num_heads / kv_num_heads) (grouped-query).
// query/key/value/decay/beta are packed [B, T, heads·size]; output is
// [B, T, q_num_heads·d_v], present_state (the last S) [B, kv_num_heads, d_k, d_v]
// in past_state's dtype (the query's without one).
//
// The reference kernel computes in double and rounds only the outputs:
// onnx.reference carries the state in float32 whatever the input type, so
// a float16 state is never rounded between tokens.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/state_space_internal.h"
#include "ops/util/cost_util.h"
#include "support/status.h"

namespace aic {

namespace {

constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kPastState = 3, kDecay = 4, kBeta = 5;

struct LinearAttentionAttrs {
  int64_t q_heads = 0, kv_heads = 0;
  double scale = 0;    // 0: 1/√d_k
  bool gated = false;  // multiplies S by exp(decay) first
  bool delta = false;  // writes β·(v − Sᵀk) instead of v
  std::string rule;
};

absl::StatusOr<LinearAttentionAttrs> ReadLinearAttentionAttrs(const Node& n) {
  LinearAttentionAttrs a;
  a.q_heads = n.GetInt("q_num_heads", 0);
  a.kv_heads = n.GetInt("kv_num_heads", 0);
  if (!n.HasAttr("q_num_heads") || !n.HasAttr("kv_num_heads")) {
    return absl::InvalidArgumentError("q_num_heads and kv_num_heads are required");
  }
  if (a.q_heads <= 0 || a.kv_heads <= 0 || a.q_heads % a.kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("q_num_heads ", a.q_heads,
                                                   " is not a positive multiple of kv_num_heads ",
                                                   a.kv_heads));
  }
  a.scale = n.GetFloat("scale", 0.0f);
  a.rule = n.GetString("update_rule", "gated_delta");
  if (a.rule != "linear" && a.rule != "gated" && a.rule != "delta" && a.rule != "gated_delta") {
    return absl::InvalidArgumentError(absl::StrCat(
        "update_rule '", a.rule, "' is not one of 'linear', 'gated', 'delta', 'gated_delta'"));
  }
  a.gated = a.rule == "gated" || a.rule == "gated_delta";
  a.delta = a.rule == "delta" || a.rule == "gated_delta";
  return a;
}

// The op's dims, from whichever inputs know them; unknown stays Dim().
struct LinearAttentionDims {
  Dim batch, seq, d_k, d_v;
};

// size / heads of a packed last dim; unknown when the size is.
absl::StatusOr<Dim> SplitHeads(const Dim& size, int64_t heads, const char* what) {
  if (!size.is_value()) return Dim();
  if (size.value() % heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " size ", size.value(), " does not split into ", heads, " heads"));
  }
  return Dim(size.value() / heads);
}

// Shapes in slot order (absent inputs: unknown rank); has_decay/has_beta say
// which optional inputs are given.
absl::StatusOr<LinearAttentionDims> ResolveLinearAttentionDims(const std::vector<Shape>& s,
                                                               const LinearAttentionAttrs& a,
                                                               bool has_decay, bool has_beta) {
  if (a.gated != has_decay) {
    return absl::InvalidArgumentError(absl::StrCat("update_rule '", a.rule, "' ",
                                                   a.gated ? "needs" : "takes no", " decay input"));
  }
  if (a.delta != has_beta) {
    return absl::InvalidArgumentError(absl::StrCat("update_rule '", a.rule, "' ",
                                                   a.delta ? "needs" : "takes no", " beta input"));
  }
  static const char* const kNames[] = {"query", "key", "value", "past_state", "decay", "beta"};
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t want = i == kPastState ? 4 : 3;
    if (s[i].has_rank() && s[i].rank() != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(kNames[i], " must be ", want, "-D, got ", s[i].ToString()));
    }
  }
  auto at = [&](size_t i, size_t axis) { return s[i].has_rank() ? s[i][axis] : Dim(); };
  LinearAttentionDims d;
  for (size_t i = 0; i < s.size(); ++i) {
    AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(i, 0), "batch size"));
    if (i != kPastState) AIC_RETURN_IF_ERROR(UnifyDim(d.seq, at(i, 1), "sequence length"));
  }
  AIC_ASSIGN_OR_RETURN(d.d_k, SplitHeads(at(kQuery, 2), a.q_heads, "query hidden"));
  AIC_ASSIGN_OR_RETURN(Dim k_head, SplitHeads(at(kKey, 2), a.kv_heads, "key hidden"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.d_k, k_head, "key head size"));
  AIC_ASSIGN_OR_RETURN(d.d_v, SplitHeads(at(kValue, 2), a.kv_heads, "value hidden"));
  Dim past_heads = at(kPastState, 1);
  if (past_heads.is_value() && past_heads.value() != a.kv_heads) {
    return absl::InvalidArgumentError(absl::StrCat("past_state has ", past_heads.value(),
                                                   " heads, kv_num_heads is ", a.kv_heads));
  }
  AIC_RETURN_IF_ERROR(UnifyDim(d.d_k, at(kPastState, 2), "key head size"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.d_v, at(kPastState, 3), "value head size"));
  Dim decay_last = at(kDecay, 2);
  if (decay_last.is_value() && decay_last.value() != a.kv_heads &&
      !(d.d_k.is_value() && decay_last.value() == a.kv_heads * d.d_k.value())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decay's last dim ", decay_last.value(), " is neither kv_num_heads (", a.kv_heads,
        ") nor kv_num_heads·d_k", d.d_k.is_value() ? absl::StrCat(" (", a.kv_heads * d.d_k.value(), ")") : ""));
  }
  Dim beta_last = at(kBeta, 2);
  if (beta_last.is_value() && beta_last.value() != a.kv_heads && beta_last.value() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("beta's last dim ", beta_last.value(),
                                                   " is neither kv_num_heads (", a.kv_heads, ") nor 1"));
  }
  return d;
}

std::vector<Shape> InputShapes(const OpContext& ctx) {
  std::vector<Shape> s;
  for (size_t i = 0; i <= kBeta; ++i) s.push_back(ctx.has_input(i) ? ctx.input_shape(i) : Shape());
  return s;
}

absl::Status InferLinearAttention(OpContext& ctx) {
  auto attrs = ReadLinearAttentionAttrs(ctx.node());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  DType t = ctx.input_dtype(kQuery);
  if (t != DType::kUndefined && !IsRealDType(t)) {
    return ctx.Error("query dtype ", DTypeName(t), " is not float, float16 or bfloat16");
  }
  for (size_t i : {kKey, kValue, kDecay, kBeta}) {
    DType u = ctx.has_input(i) ? ctx.input_dtype(i) : DType::kUndefined;
    if (t != DType::kUndefined && u != DType::kUndefined && u != t) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(u), ", query ", DTypeName(t));
    }
  }
  DType s = ctx.has_input(kPastState) ? ctx.input_dtype(kPastState) : t;
  if (s != DType::kUndefined && !IsRealDType(s)) {
    return ctx.Error("past_state dtype ", DTypeName(s), " is not float, float16 or bfloat16");
  }
  auto d = ResolveLinearAttentionDims(InputShapes(ctx), *attrs, ctx.has_input(kDecay),
                                      ctx.has_input(kBeta));
  if (!d.ok()) return ctx.Error(d.status().message());
  auto known = [&](const Dim& x) { return x.is_unknown() ? ctx.FreshDim() : x; };
  Dim batch = known(d->batch);
  Dim hidden;
  if (d->d_v.is_value()) {
    hidden = Dim(attrs->q_heads * d->d_v.value());
  } else if (attrs->q_heads == attrs->kv_heads && ctx.input_shape(kValue).has_rank()) {
    hidden = ctx.input_shape(kValue)[2];  // same head count: the output's hidden size is value's
  }
  ctx.set_output(0, t, Shape({batch, known(d->seq), known(hidden)}));
  if (ctx.num_outputs() > 1) {
    ctx.set_output(1, s, Shape({batch, Dim(attrs->kv_heads), known(d->d_k), known(d->d_v)}));
  }
  return absl::OkStatus();
}

// Per token and batch: the write k ⊗ u (d_k·d_v MACs per KV head), with the
// delta rule the read Sᵀk (as many again), and each query head's read q·S
// (d_k·d_v MACs). FLOPs add the decay (exp per gate, a multiply per state
// element), the delta's subtract and β multiply, and the output scale.
Cost LinearAttentionCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  auto attrs = ReadLinearAttentionAttrs(ctx.node());
  if (!attrs.ok()) return Cost{};
  auto d = ResolveLinearAttentionDims(InputShapes(ctx), *attrs, ctx.has_input(kDecay),
                                      ctx.has_input(kBeta));
  if (!d.ok()) return Cost{};
  for (const Dim* x : {&d->batch, &d->seq, &d->d_k, &d->d_v}) {
    if (!x->is_value()) {
      c.known = false;
      return c;
    }
  }
  int64_t tokens = d->batch.value() * d->seq.value(), dk = d->d_k.value(), dv = d->d_v.value();
  int64_t state = dk * dv;
  int64_t hq = attrs->q_heads, hkv = attrs->kv_heads;
  c.macs = tokens * (hkv * state * (attrs->delta ? 2 : 1) + hq * state);
  c.flops = 2 * c.macs + tokens * hq * dv * kFlopsBasic;
  if (attrs->gated) {
    const Shape& g = ctx.input_shape(kDecay);
    int64_t gates = g.has_rank() && g[2].is_value() ? g[2].value() : hkv;
    c.flops += tokens * (gates * kFlopsTranscendental + hkv * state * kFlopsBasic);
  }
  if (attrs->delta) c.flops += tokens * hkv * dv * 2 * kFlopsBasic;
  return c;
}

Traits LinearAttentionTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "LinearAttention";
  auto attrs = ReadLinearAttentionAttrs(ctx.node());
  std::string rule = attrs.ok() ? attrs->rule : "?";
  t.meaning = absl::StrCat("o_t = scale·q_tᵀS_t, S_t = ", rule == "linear" ? "S_{t−1} + k_t⊗v_t"
                                                    : rule == "gated"    ? "exp(g_t)·S_{t−1} + k_t⊗v_t"
                                                    : rule == "delta"    ? "S_{t−1} + β_t·k_t⊗(v_t − S_{t−1}ᵀk_t)"
                                                                         : "S' + β_t·k_t⊗(v_t − S'ᵀk_t), S' = exp(g_t)·S_{t−1}",
                           " per head (", rule, ")");
  // Bilinear in (q, S) and (k, v); exp of the decay.
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  // Each head's whole prefix is summed into one fixed-size state.
  t.collapse = CollapseKind::kReduces;
  t.collapse_how = "each head's prefix of keys and values is summed into one d_k×d_v state";
  return t;
}

absl::Status LinearAttentionKernel(KernelContext& ctx) {
  auto attrs = ReadLinearAttentionAttrs(ctx.node());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  const LinearAttentionAttrs& a = *attrs;
  const Tensor& q = ctx.input(kQuery);
  DType t = q.dtype();
  if (!IsRealDType(t)) return ctx.Unimplemented("dtype ", DTypeName(t));
  for (size_t i : {kKey, kValue, kDecay, kBeta}) {
    if (ctx.has_input(i) && ctx.input(i).dtype() != t) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(ctx.input(i).dtype()), ", query ",
                       DTypeName(t));
    }
  }
  bool has_past = ctx.has_input(kPastState);
  DType s_type = has_past ? ctx.input(kPastState).dtype() : t;
  if (!IsRealDType(s_type)) return ctx.Unimplemented("past_state dtype ", DTypeName(s_type));
  std::vector<Shape> shapes;
  for (size_t i = 0; i <= kBeta; ++i) {
    shapes.push_back(ctx.has_input(i) ? Shape::FromValues(ctx.input(i).dims()) : Shape());
  }
  auto dims = ResolveLinearAttentionDims(shapes, a, ctx.has_input(kDecay), ctx.has_input(kBeta));
  if (!dims.ok()) return ctx.Error(dims.status().message());
  const int64_t b_n = dims->batch.value(), t_n = dims->seq.value();
  const int64_t dk = dims->d_k.value(), dv = dims->d_v.value();
  const int64_t hq = a.q_heads, hkv = a.kv_heads, group = hq / hkv;
  const double scale = a.scale != 0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(dk));

  std::vector<double> qv = TensorToDoubles(q), kv = TensorToDoubles(ctx.input(kKey)),
                      vv = TensorToDoubles(ctx.input(kValue));
  std::vector<double> g = a.gated ? TensorToDoubles(ctx.input(kDecay)) : std::vector<double>();
  std::vector<double> beta = a.delta ? TensorToDoubles(ctx.input(kBeta)) : std::vector<double>();
  // Decay per key feature ([B, T, H_kv·d_k]) or per head ([B, T, H_kv]);
  // β per head or one for all heads ([B, T, 1]).
  const int64_t g_last = a.gated ? ctx.input(kDecay).dim(2) : 0;
  const bool g_per_key = g_last != hkv;
  const int64_t beta_last = a.delta ? ctx.input(kBeta).dim(2) : 0;

  // S[b][h] is d_k rows of d_v.
  std::vector<double> state =
      has_past ? TensorToDoubles(ctx.input(kPastState)) : std::vector<double>(static_cast<size_t>(b_n * hkv * dk * dv));
  std::vector<double> y(static_cast<size_t>(b_n * t_n * hq * dv));
  std::vector<double> u(static_cast<size_t>(dv));
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t i = 0; i < t_n; ++i) {
      const int64_t tok = b * t_n + i;
      for (int64_t h = 0; h < hkv; ++h) {
        double* s = state.data() + (b * hkv + h) * dk * dv;
        const double* k = kv.data() + (tok * hkv + h) * dk;
        const double* v = vv.data() + (tok * hkv + h) * dv;
        if (a.gated) {
          for (int64_t r = 0; r < dk; ++r) {
            double f = std::exp(g[static_cast<size_t>(g_per_key ? (tok * hkv + h) * dk + r : tok * hkv + h)]);
            for (int64_t m = 0; m < dv; ++m) s[r * dv + m] *= f;
          }
        }
        for (int64_t m = 0; m < dv; ++m) u[static_cast<size_t>(m)] = v[m];
        if (a.delta) {
          double bt = beta[static_cast<size_t>(tok * beta_last + (beta_last == 1 ? 0 : h))];
          for (int64_t m = 0; m < dv; ++m) {
            double read = 0;  // (Sᵀk)[m]
            for (int64_t r = 0; r < dk; ++r) read += s[r * dv + m] * k[r];
            u[static_cast<size_t>(m)] = bt * (v[m] - read);
          }
        }
        for (int64_t r = 0; r < dk; ++r)
          for (int64_t m = 0; m < dv; ++m) s[r * dv + m] += k[r] * u[static_cast<size_t>(m)];
      }
      for (int64_t h = 0; h < hq; ++h) {
        const double* s = state.data() + (b * hkv + h / group) * dk * dv;
        const double* qh = qv.data() + (tok * hq + h) * dk;
        double* o = y.data() + (tok * hq + h) * dv;
        for (int64_t m = 0; m < dv; ++m) {
          double acc = 0;
          for (int64_t r = 0; r < dk; ++r) acc += qh[r] * s[r * dv + m];
          o[m] = scale * acc;
        }
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(y, {b_n, t_n, hq * dv}, t));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DoublesToTensor(state, {b_n, hkv, dk, dv}, s_type));
  return absl::OkStatus();
}

}  // namespace

void RegisterStateSpaceOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "LinearAttention",
                   .since_version = 27,
                   .infer = InferLinearAttention,
                   .traits = LinearAttentionTraits,
                   .cost = LinearAttentionCost,
                   .kernel = LinearAttentionKernel});
  RegisterCausalConvWithStateOps(r);
}

}  // namespace aic

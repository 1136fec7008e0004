// FlexAttention (ai.onnx.preview, opset 1): scaled dot-product attention over
// rank-4 inputs with two optional user subgraphs,
//   Y = prob_mod(softmax(score_mod(Q·√s · (K·√s)ᵀ))) · V,
// Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev].
// Query head h reads key/value head h / (Hq / Hkv) (grouped-query). s defaults
// to 1/√E; √s is taken in float32 and cast to the input type. score_mod and
// prob_mod each take and give one [B, Hq, L, S] tensor in the softmax
// precision (softmax_precision, default float32 for float16/bfloat16 inputs,
// else the input type); they run through the executor's SubgraphRunner, as
// If/Loop bodies do.
//
// The reference kernel computes in double and rounds every intermediate where
// numpy's reference does: the pre-scaled Q and K and their product in the input
// type (a float16 product accumulates in float32, as numpy's half matmul does;
// a bfloat16 one stays float32, as ml_dtypes' matmul returns), the softmax and
// P·V in the softmax precision. A query row whose scores are all -inf gives
// NaN, like the numpy reference and the op's function body (ONNX Softmax).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/control/control_util.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/attention_internal.h"
#include "ops/nn/attention_params.h"
#include "ops/util/cost_util.h"
#include "ops/util/dim_unify.h"
#include "support/status.h"

namespace aic {

namespace {

constexpr size_t kQ = 0, kK = 1, kV = 2;
constexpr char kPreviewDomain[] = "ai.onnx.preview";
constexpr char kRealTypes[] = "float, float16, bfloat16 or double";

struct FlexAttentionAttrs {
  std::optional<float> scale;                   // default 1/√E
  DType softmax_precision = DType::kUndefined;  // kUndefined: by the input type
  const Graph* score_mod = nullptr;
  const Graph* prob_mod = nullptr;
};

absl::StatusOr<FlexAttentionAttrs> ReadFlexAttentionAttrs(const Node& n) {
  FlexAttentionAttrs a;
  if (n.HasAttr("scale")) a.scale = n.GetFloat("scale", 1.0f);
  if (n.HasAttr("softmax_precision")) {
    int64_t p = n.GetInt("softmax_precision", 0);
    a.softmax_precision = static_cast<DType>(p);
    if (!IsRealDType(a.softmax_precision)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "softmax_precision ", p, " is not ", kRealTypes));
    }
  }
  a.score_mod = GraphAttr(n, "score_mod");
  a.prob_mod = GraphAttr(n, "prob_mod");
  for (const auto& [name, g] : {std::pair{"score_mod", a.score_mod}, std::pair{"prob_mod", a.prob_mod}}) {
    if (g != nullptr && (g->inputs().size() != 1 || g->outputs().size() != 1)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has ", g->inputs().size(), " inputs and ",
                                                     g->outputs().size(), " outputs, expected 1 and 1"));
    }
  }
  return a;
}

// The dtype of the scores, softmax and P·V.
DType SoftmaxDType(DType t, const FlexAttentionAttrs& a) {
  if (a.softmax_precision != DType::kUndefined) return a.softmax_precision;
  return t == DType::kFloat16 || t == DType::kBFloat16 ? DType::kFloat : t;
}

// The dtype numpy's matmul gives for operands of `t`: ml_dtypes returns
// float32 for bfloat16, the others keep their type.
DType ProductDType(DType t) { return t == DType::kBFloat16 ? DType::kFloat : t; }

// Q, K, V shapes (unknown rank allowed); an error when they disagree.
absl::StatusOr<AttentionDims> ResolveFlexAttentionDims(const Shape& q, const Shape& k, const Shape& v) {
  for (const auto& [name, s] : {std::pair{"Q", &q}, std::pair{"K", &k}, std::pair{"V", &v}}) {
    if (s->has_rank() && s->rank() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be 4-D, got ", s->ToString()));
    }
  }
  AttentionDims d;
  d.rank = 4;
  AIC_RETURN_IF_ERROR(UnifyFourDimQkv(q, k, v, d));
  if (d.q_heads.is_value() && d.kv_heads.is_value()) {
    int64_t hq = d.q_heads.value(), hkv = d.kv_heads.value();
    if (hkv == 0 ? hq != 0 : hq % hkv != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("q_num_heads ", hq, " is not a multiple of kv_num_heads ", hkv));
    }
  }
  return d;
}

// A modifier's declared input must be the [B, Hq, L, S] scores in the softmax
// precision; its output a real tensor (declared types only, where known).
absl::Status CheckModifier(const OpContext& ctx, const char* name, const Graph* g, DType p) {
  if (g == nullptr) return absl::OkStatus();
  const TypeInfo& in = g->inputs()[0]->type();
  if (in.known() && !in.is_tensor()) return ctx.Error(name, "'s input is not a tensor");
  if (in.is_tensor() && in.dtype != DType::kUndefined && p != DType::kUndefined && in.dtype != p) {
    return ctx.Error(name, "'s input is ", DTypeName(in.dtype), ", the softmax precision is ", DTypeName(p));
  }
  if (in.is_tensor() && in.shape.has_rank() && in.shape.rank() != 4) {
    return ctx.Error(name, "'s input must be 4-D, got ", in.shape.ToString());
  }
  const TypeInfo& out = g->outputs()[0]->type();
  if (out.is_tensor() && out.dtype != DType::kUndefined && !IsRealDType(out.dtype)) {
    return ctx.Error(name, "'s output is ", DTypeName(out.dtype), ", expected a float type");
  }
  return absl::OkStatus();
}

absl::Status InferFlexAttention(OpContext& ctx) {
  auto attrs = ReadFlexAttentionAttrs(ctx.node());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  DType t = DType::kUndefined;
  for (size_t i : {kQ, kK, kV}) {
    DType u = ctx.input_dtype(i);
    if (u == DType::kUndefined) continue;
    if (!IsRealDType(u)) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(u), ", expected ", kRealTypes);
    }
    if (t != DType::kUndefined && u != t) {
      return ctx.Error("Q, K and V must share one dtype, got ", DTypeName(t), " and ", DTypeName(u));
    }
    t = u;
  }
  auto d = ResolveFlexAttentionDims(ctx.input_shape(kQ), ctx.input_shape(kK), ctx.input_shape(kV));
  if (!d.ok()) return ctx.Error(d.status().message());
  DType p = t == DType::kUndefined ? attrs->softmax_precision : SoftmaxDType(t, *attrs);
  AIC_RETURN_IF_ERROR(CheckModifier(ctx, "score_mod", attrs->score_mod, p));
  AIC_RETURN_IF_ERROR(CheckModifier(ctx, "prob_mod", attrs->prob_mod, p));
  auto known = [&](const Dim& x) { return x.is_unknown() ? ctx.FreshDim() : x; };
  ctx.set_output(0, t, Shape({known(d->batch), known(d->q_heads), known(d->q_seq), known(d->v_head)}));
  return absl::OkStatus();
}

// MACs of Q·Kᵀ and P·V; FLOPs add the pre-scaling of Q and K and the
// softmax's max, subtract, exp, sum and divide per score. The modifiers'
// nodes are counted by the analyzer, body by body.
Cost FlexAttentionCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  auto d = ResolveFlexAttentionDims(ctx.input_shape(kQ), ctx.input_shape(kK), ctx.input_shape(kV));
  if (!d.ok()) return Cost{};
  for (const Dim* x : {&d->batch, &d->q_heads, &d->kv_heads, &d->q_seq, &d->kv_seq, &d->head, &d->v_head}) {
    if (!x->is_value()) {
      c.known = false;
      return c;
    }
  }
  int64_t b = d->batch.value(), e = d->head.value();
  int64_t scores = b * d->q_heads.value() * d->q_seq.value() * d->kv_seq.value();
  c.macs = scores * (e + d->v_head.value());
  int64_t scaled_rows = b * (d->q_heads.value() * d->q_seq.value() + d->kv_heads.value() * d->kv_seq.value());
  c.flops = 2 * c.macs + 5 * scores + scaled_rows * e;
  return c;
}

Traits FlexAttentionTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "FlexAttention";
  bool score_mod = GraphAttr(ctx.node(), "score_mod") != nullptr;
  bool prob_mod = GraphAttr(ctx.node(), "prob_mod") != nullptr;
  std::string scores = score_mod ? "score_mod(Q·Kᵀ·scale)" : "Q·Kᵀ·scale";
  std::string probs = absl::StrCat("softmax(", scores, ")");
  if (prob_mod) probs = absl::StrCat("prob_mod(", probs, ")");
  t.meaning = absl::StrCat("Y = ", probs, "·V per head");
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  // Without score_mod the softmax sees the scores themselves and forgets their
  // shift; a score_mod (a cap, a mask) may not commute with that shift.
  if (!score_mod) {
    t.collapse = CollapseKind::kProjects;
    t.collapse_how =
        "softmax over the keys is shift-invariant: scores s and s + c (c constant over a query's "
        "keys) give the same output";
  }
  return t;
}

// Σ a[i]·b[i·stride] as numpy's matmul sums operands of `t`: float16 and
// bfloat16 products (exact in float) accumulate in float32; float32 and
// double in double (BLAS's order is not ours to copy; the caller rounds).
double Dot(const double* a, const double* b, int64_t n, int64_t stride, DType t) {
  if (t == DType::kFloat16 || t == DType::kBFloat16) {
    float acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += static_cast<float>(a[i] * b[i * stride]);
    return acc;
  }
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i * stride];
  return acc;
}

// softmax of one row as numpy computes it in dtype p: x - max, exp, sum and
// divide each rounded to p; a float16 sum accumulates in float32, a bfloat16
// one in bfloat16 (ml_dtypes' add). NaN, or a row of -inf, gives NaN.
void SoftmaxRow(double* x, int64_t n, DType p) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(x[j])) {
      mx = x[j];
      break;
    }
    mx = std::max(mx, x[j]);
  }
  double sum = 0;
  float sum_f = 0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = RoundToDType(p, std::exp(RoundToDType(p, x[j] - mx)));
    if (p == DType::kFloat16) {
      sum_f += static_cast<float>(x[j]);
    } else {
      sum = p == DType::kBFloat16 ? RoundToDType(p, sum + x[j]) : sum + x[j];
    }
  }
  sum = RoundToDType(p, p == DType::kFloat16 ? static_cast<double>(sum_f) : sum);
  for (int64_t j = 0; j < n; ++j) x[j] = RoundToDType(p, x[j] / sum);
}

// Runs modifier `name` on `values` ([B, Hq, L, S] in dtype p) and gives its
// output, cast to p; its shape must be the input's.
absl::Status ApplyModifier(KernelContext& ctx, const char* name, const Graph& g,
                           const std::vector<int64_t>& dims, DType p, std::vector<double>& values) {
  AIC_ASSIGN_OR_RETURN(SubgraphRunner * runner, RunnerOf(ctx));
  AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs,
                       runner->RunSubgraph(g, {RuntimeValue(DoublesToTensor(values, dims, p))}));
  if (outs.empty() || !outs[0].is_tensor()) return ctx.Error(name, " gave no tensor");
  const Tensor& out = outs[0].tensor;
  if (out.dims() != dims) {
    return ctx.Error(name, " gave shape ", DimsToString(out.dims()), ", expected ", DimsToString(dims));
  }
  if (!IsRealDType(out.dtype())) {
    return ctx.Error(name, " gave ", DTypeName(out.dtype()), ", expected a float type");
  }
  values = TensorToDoubles(out);
  for (double& x : values) x = RoundToDType(p, x);
  return absl::OkStatus();
}

absl::Status FlexAttentionKernel(KernelContext& ctx) {
  auto attrs = ReadFlexAttentionAttrs(ctx.node());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  const FlexAttentionAttrs& a = *attrs;
  const Tensor &q = ctx.input(kQ), &k = ctx.input(kK), &v = ctx.input(kV);
  const DType t = q.dtype();
  if (!IsRealDType(t)) return ctx.Error("Q has dtype ", DTypeName(t), ", expected ", kRealTypes);
  if (k.dtype() != t || v.dtype() != t) {
    return ctx.Error("Q, K and V must share one dtype, got ", DTypeName(t), ", ", DTypeName(k.dtype()),
                     " and ", DTypeName(v.dtype()));
  }
  auto dims = ResolveFlexAttentionDims(Shape::FromValues(q.dims()), Shape::FromValues(k.dims()),
                                       Shape::FromValues(v.dims()));
  if (!dims.ok()) return ctx.Error(dims.status().message());
  const int64_t b_n = dims->batch.value(), hq = dims->q_heads.value(), hkv = dims->kv_heads.value();
  const int64_t l_n = dims->q_seq.value(), s_n = dims->kv_seq.value();
  const int64_t e = dims->head.value(), ev = dims->v_head.value();
  const int64_t group = hkv == 0 ? 1 : hq / hkv;
  const DType p = SoftmaxDType(t, a);

  // √scale in float32, cast to T; Q and K are scaled separately in T.
  const float scale = a.scale ? *a.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(e)));
  const double root = RoundToDType(t, std::sqrt(scale));
  std::vector<double> qv = TensorToDoubles(q), kv = TensorToDoubles(k), vv = TensorToDoubles(v);
  for (double& x : qv) x = RoundToDType(t, x * root);
  for (double& x : kv) x = RoundToDType(t, x * root);
  for (double& x : vv) x = RoundToDType(p, x);

  const std::vector<int64_t> score_dims = {b_n, hq, l_n, s_n};
  std::vector<double> scores(static_cast<size_t>(b_n * hq * l_n * s_n));
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const double* kb = kv.data() + (b * hkv + h / group) * s_n * e;
      for (int64_t i = 0; i < l_n; ++i) {
        const double* qi = qv.data() + ((b * hq + h) * l_n + i) * e;
        double* row = scores.data() + ((b * hq + h) * l_n + i) * s_n;
        for (int64_t j = 0; j < s_n; ++j) {
          row[j] = RoundToDType(p, RoundToDType(ProductDType(t), Dot(qi, kb + j * e, e, 1, t)));
        }
      }
    }
  }
  if (a.score_mod != nullptr) {
    AIC_RETURN_IF_ERROR(ApplyModifier(ctx, "score_mod", *a.score_mod, score_dims, p, scores));
  }
  for (int64_t r = 0; r < b_n * hq * l_n; ++r) SoftmaxRow(scores.data() + r * s_n, s_n, p);
  if (a.prob_mod != nullptr) {
    AIC_RETURN_IF_ERROR(ApplyModifier(ctx, "prob_mod", *a.prob_mod, score_dims, p, scores));
  }

  std::vector<double> y(static_cast<size_t>(b_n * hq * l_n * ev));
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const double* vb = vv.data() + (b * hkv + h / group) * s_n * ev;
      for (int64_t i = 0; i < l_n; ++i) {
        const double* pi = scores.data() + ((b * hq + h) * l_n + i) * s_n;
        double* yi = y.data() + ((b * hq + h) * l_n + i) * ev;
        for (int64_t c = 0; c < ev; ++c) yi[c] = RoundToDType(ProductDType(p), Dot(pi, vb + c, s_n, ev, p));
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(y, {b_n, hq, l_n, ev}, t));
  return absl::OkStatus();
}

}  // namespace

void RegisterFlexAttentionOps(OpRegistry& r) {
  r.Register(OpDef{.domain = kPreviewDomain,
                   .op_type = "FlexAttention",
                   .since_version = 1,
                   .infer = InferFlexAttention,
                   .traits = FlexAttentionTraits,
                   .cost = FlexAttentionCost,
                   .kernel = FlexAttentionKernel});
}

}  // namespace aic

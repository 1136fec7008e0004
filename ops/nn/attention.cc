// Attention (opset 23; 24 adds nonpad_kv_seqlen, 25 the sliding window):
// scaled dot-product attention per head,
//   Y = softmax(softcap(Q·√s · (K·√s)ᵀ) + bias) · V,
// where bias adds attn_mask (boolean: False -> -inf; numeric: added), the
// causal frontier (key j visible to query i iff j <= i + offset, offset the
// past length or nonpad_kv_seqlen - q_len), the window and the key padding.
// 3-D inputs [B, S, heads·size] are split into heads; K/V may have fewer heads
// than Q (grouped-query: Q head h reads KV head h / (q_heads / kv_heads)).
// With past_key/past_value the keys are past ++ current (present_key/value).
// A query row with no visible key gives zeros, not NaN.
//
// The reference kernel walks the op's function body: each intermediate is
// rounded to T1 (the softmax to softmax_precision), so float16/bfloat16
// outputs match numpy's step-by-step arithmetic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/attention_internal.h"
#include "ops/nn/attention_params.h"
#include "ops/util/cost_util.h"
#include "support/half.h"

namespace aic {

double RoundToDType(DType t, double x) {
  switch (t) {
    case DType::kFloat:
      return static_cast<float>(x);
    case DType::kFloat16:
      return HalfToFloat(FloatToHalf(static_cast<float>(x)));
    case DType::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(x)));
    default:
      return x;
  }
}

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Input slots, shorter.
constexpr size_t kQ = kAttentionQ, kK = kAttentionK, kV = kAttentionV, kMask = kAttentionMask,
                 kPastKey = kAttentionPastKey, kPastValue = kAttentionPastValue, kNonpad = kAttentionNonpad;

std::vector<Shape> InputShapes(const OpContext& ctx) {
  std::vector<Shape> s;
  for (size_t i = 0; i <= kPastValue; ++i)
    s.push_back(ctx.has_input(i) ? ctx.input_shape(i) : Shape());
  return s;
}

absl::Status InferAttention(OpContext& ctx) {
  auto attrs = ReadAttentionAttrs(ctx.node(), ctx.opset());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  bool has_past = ctx.has_input(kPastKey);
  if (has_past != ctx.has_input(kPastValue)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  auto d = ResolveAttentionDims(InputShapes(ctx), has_past, *attrs);
  if (!d.ok()) return ctx.Error(d.status().message());
  DType t1 = ctx.input_dtype(kQ), t2 = ctx.input_dtype(kV);
  if (d->rank == 0) {
    for (size_t i = 0; i < ctx.num_outputs(); ++i)
      ctx.set_output(i, i == 2 ? t2 : t1, Shape::UnknownRank());
    return absl::OkStatus();
  }
  auto known = [&](const Dim& x) { return x.is_unknown() ? ctx.FreshDim() : x; };
  Dim total = known(d->total_seq);
  if (d->rank == 4) {
    ctx.set_output(0, t1,
                   Shape({known(d->batch), known(d->q_heads), known(d->q_seq), known(d->v_head)}));
  } else {
    ctx.set_output(0, t1, Shape({known(d->batch), known(d->q_seq), known(d->y_hidden)}));
  }
  Dim batch = known(d->batch), kv_heads = known(d->kv_heads);
  ctx.set_output(1, t1, Shape({batch, kv_heads, total, known(d->head)}));
  ctx.set_output(2, t2, Shape({batch, kv_heads, total, known(d->v_head)}));
  ctx.set_output(3, t1, Shape({batch, known(d->q_heads), known(d->q_seq), total}));
  return absl::OkStatus();
}

// MACs of Q·Kᵀ and P·V; FLOPs add the softmax's max, subtract, exp, sum and
// divide per score.
Cost AttentionCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  auto attrs = ReadAttentionAttrs(ctx.node(), ctx.opset());
  if (!attrs.ok()) return Cost{};
  auto d =
      ResolveAttentionDims(InputShapes(ctx), ctx.has_input(kPastKey) && ctx.has_input(kPastValue), *attrs);
  if (!d.ok() || d->rank == 0) return Cost{};
  for (const Dim* x : {&d->batch, &d->q_heads, &d->q_seq, &d->total_seq, &d->head, &d->v_head}) {
    if (!x->is_value()) {
      c.known = false;
      return c;
    }
  }
  int64_t scores = d->batch.value() * d->q_heads.value() * d->q_seq.value() * d->total_seq.value();
  c.macs = scores * (d->head.value() + d->v_head.value());
  c.flops = 2 * c.macs + 5 * scores;
  return c;
}

Traits AttentionTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Attention";
  t.meaning = "Y = softmax(Q·Kᵀ·scale + mask)·V per head";
  if (ctx.node().GetInt("is_causal", 0) != 0) t.meaning += ", causal";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  // The softmax over each query's keys forgets the scores' shift.
  t.collapse = CollapseKind::kProjects;
  t.collapse_how =
      "softmax over the keys is shift-invariant: scores s and s + c (c constant over a query's "
      "keys) give the same output";
  return t;
}

// Head-major [B, H, S, D] values of a 4-D input, or of a 3-D [B, S, H·D] one.
std::vector<double> HeadMajor(const Tensor& x, int64_t heads, int64_t size) {
  std::vector<double> v = TensorToDoubles(x);
  if (x.rank() == 4) return v;
  int64_t b_n = x.dim(0), s_n = x.dim(1);
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < b_n; ++b)
    for (int64_t s = 0; s < s_n; ++s)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t k = 0; k < size; ++k)
          out[static_cast<size_t>(((b * heads + h) * s_n + s) * size + k)] =
              v[static_cast<size_t>((b * s_n + s) * heads * size + h * size + k)];
  return out;
}

// past ++ current along the sequence axis of [B, H, S, D] values.
std::vector<double> Concat(const std::vector<double>& past, int64_t past_n,
                           const std::vector<double>& cur, int64_t cur_n, int64_t rows,
                           int64_t size) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(rows * (past_n + cur_n) * size));
  for (int64_t r = 0; r < rows; ++r) {
    out.insert(out.end(), past.begin() + r * past_n * size, past.begin() + (r + 1) * past_n * size);
    out.insert(out.end(), cur.begin() + r * cur_n * size, cur.begin() + (r + 1) * cur_n * size);
  }
  return out;
}

// The additive bias of every (b, h, i, j): attn_mask (padded with "masked"
// past its last dim), causal frontier, window and key padding; 0 or -inf
// except for a numeric mask's values.
class AttentionBias {
 public:
  absl::Status Init(KernelContext& ctx, const AttentionAttrs& a, const AttentionDims& d, DType t1) {
    attrs_ = a;
    int64_t batch = d.batch.value(), heads = d.q_heads.value(), q_seq = d.q_seq.value();
    if (ctx.has_input(kMask)) {
      const Tensor& m = ctx.input(kMask);
      if (m.rank() > 4) return ctx.Error("attn_mask has rank ", m.rank(), ", expected <= 4");
      mask_dims_.assign(static_cast<size_t>(4 - m.rank()), 1);
      mask_dims_.insert(mask_dims_.end(), m.dims().begin(), m.dims().end());
      std::vector<int64_t> want = {batch, heads, q_seq, d.total_seq.value()};
      for (size_t k = 0; k < 4; ++k) {
        bool fits =
            k == 3 ? mask_dims_[k] <= want[k] : mask_dims_[k] == 1 || mask_dims_[k] == want[k];
        if (!fits) {
          return ctx.Error("attn_mask ", DimsToString(m.dims()), " does not broadcast to ",
                           DimsToString(want));
        }
      }
      mask_bool_ = m.dtype() == DType::kBool;
      mask_ = TensorToDoubles(m);
      // A numeric mask is cast to T1 in the function body.
      if (!mask_bool_) {
        for (double& x : mask_) x = RoundToDType(t1, x);
      }
    }
    offset_.assign(static_cast<size_t>(batch), d.past_seq.value());
    if (ctx.opset() >= 24 && ctx.has_input(kNonpad)) {
      const Tensor& np = ctx.input(kNonpad);
      if (np.dtype() != DType::kInt64 || np.rank() != 1 || np.dim(0) != batch) {
        return ctx.Error("nonpad_kv_seqlen must be int64 [", batch, "], got ",
                         DimsToString(np.dims()));
      }
      nonpad_ = TensorToInt64(np);
      // An external cache: the query block ends at each sample's last valid key.
      for (int64_t b = 0; b < batch; ++b)
        offset_[static_cast<size_t>(b)] = nonpad_[static_cast<size_t>(b)] - q_seq;
    }
    return absl::OkStatus();
  }

  double operator()(int64_t b, int64_t h, int64_t i, int64_t j) const {
    double bias = 0;
    if (!mask_dims_.empty()) {
      if (j >= mask_dims_[3]) return kNegInf;
      int64_t idx = (((mask_dims_[0] == 1 ? 0 : b) * mask_dims_[1] + (mask_dims_[1] == 1 ? 0 : h)) *
                         mask_dims_[2] +
                     (mask_dims_[2] == 1 ? 0 : i)) *
                        mask_dims_[3] +
                    j;
      double m = mask_[static_cast<size_t>(idx)];
      if (mask_bool_ && m == 0) return kNegInf;
      if (!mask_bool_) bias = m;
    }
    int64_t diff = i + offset_[static_cast<size_t>(b)] - j;  // query position minus key position
    if (attrs_.causal && diff < 0) return kNegInf;
    if (attrs_.left_window >= 0 && diff > attrs_.left_window) return kNegInf;
    if (attrs_.right_window >= 0 && -diff > attrs_.right_window) return kNegInf;
    if (!nonpad_.empty() && j >= nonpad_[static_cast<size_t>(b)]) return kNegInf;
    return bias;
  }

 private:
  AttentionAttrs attrs_;
  std::vector<int64_t> mask_dims_;  // padded to rank 4; empty: no mask
  std::vector<double> mask_;
  bool mask_bool_ = false;
  std::vector<int64_t> offset_, nonpad_;
};

// softmax over one row as numpy computes it in dtype p: a row that is all
// -inf gives zeros; bfloat16 sums accumulate in bfloat16 (ml_dtypes' add).
void SoftmaxRow(std::vector<double>& x, DType p) {
  double mx = kNegInf;
  bool nan = false;
  for (double v : x) {
    nan = nan || std::isnan(v);
    mx = std::max(mx, v);
  }
  if (nan) mx = std::numeric_limits<double>::quiet_NaN();
  double shift = mx == kNegInf ? 0.0 : mx;
  double sum = 0;
  for (double& v : x) {
    v = RoundToDType(p, std::exp(RoundToDType(p, v - shift)));
    sum = p == DType::kBFloat16 ? RoundToDType(p, sum + v) : sum + v;
  }
  sum = RoundToDType(p, sum);
  if (sum == 0) sum = 1;
  for (double& v : x) v = RoundToDType(p, v / sum);
}

absl::Status AttentionKernel(KernelContext& ctx) {
  auto attrs = ReadAttentionAttrs(ctx.node(), ctx.opset());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  const AttentionAttrs& a = *attrs;
  const Tensor &q = ctx.input(kQ), &k = ctx.input(kK), &v = ctx.input(kV);
  DType t1 = q.dtype(), t2 = v.dtype();
  if (!IsRealDType(t1) || !IsRealDType(t2)) return ctx.Unimplemented("dtype ", DTypeName(t1));
  if (k.dtype() != t1) {
    return ctx.Error("K has dtype ", DTypeName(k.dtype()), ", Q ", DTypeName(t1));
  }
  bool has_past = ctx.has_input(kPastKey);
  if (has_past != ctx.has_input(kPastValue)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  if (has_past && ctx.opset() >= 24 && ctx.has_input(kNonpad)) {
    return ctx.Error("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i <= kPastValue; ++i) {
    shapes.push_back(ctx.has_input(i) ? Shape::FromValues(ctx.input(i).dims()) : Shape());
  }
  auto dims = ResolveAttentionDims(shapes, has_past, a);
  if (!dims.ok()) return ctx.Error(dims.status().message());
  const AttentionDims& d = *dims;
  int64_t b_n = d.batch.value(), qh = d.q_heads.value(), kvh = d.kv_heads.value();
  int64_t q_seq = d.q_seq.value(), kv_seq = d.kv_seq.value(), past = d.past_seq.value();
  int64_t total = d.total_seq.value(), head = d.head.value(), v_head = d.v_head.value();

  std::vector<double> qv = HeadMajor(q, qh, head);
  std::vector<double> kv = HeadMajor(k, kvh, head), vv = HeadMajor(v, kvh, v_head);
  if (has_past) {
    if (ctx.input(kPastKey).dtype() != t1 || ctx.input(kPastValue).dtype() != t2) {
      return ctx.Error("past_key/past_value dtypes differ from K/V");
    }
    kv = Concat(TensorToDoubles(ctx.input(kPastKey)), past, kv, kv_seq, b_n * kvh, head);
    vv = Concat(TensorToDoubles(ctx.input(kPastValue)), past, vv, kv_seq, b_n * kvh, v_head);
  }
  ctx.set_output(1, DoublesToTensor(kv, {b_n, kvh, total, head}, t1));
  ctx.set_output(2, DoublesToTensor(vv, {b_n, kvh, total, v_head}, t2));

  // Q and K are each scaled by √scale (cast to T1) before the product.
  double scale = a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(head));
  double root = RoundToDType(t1, std::sqrt(scale));
  for (double& x : qv) x = RoundToDType(t1, x * root);
  for (double& x : kv) x = RoundToDType(t1, x * root);
  double cap = RoundToDType(t1, a.softcap);
  DType p = a.softmax_precision == DType::kUndefined ? t1 : a.softmax_precision;

  AttentionBias bias;
  AIC_RETURN_IF_ERROR(bias.Init(ctx, a, d, t1));
  std::vector<double> y(static_cast<size_t>(b_n * qh * q_seq * v_head));
  std::vector<double> qk_out(static_cast<size_t>(b_n * qh * q_seq * total));
  std::vector<double> row(static_cast<size_t>(total)), row_bias(row.size());
  int64_t group = qh / kvh;
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t h = 0; h < qh; ++h) {
      int64_t kh = h / group;
      const double* kb = kv.data() + (b * kvh + kh) * total * head;
      const double* vb = vv.data() + (b * kvh + kh) * total * v_head;
      for (int64_t i = 0; i < q_seq; ++i) {
        const double* qi = qv.data() + ((b * qh + h) * q_seq + i) * head;
        double* qk = qk_out.data() + ((b * qh + h) * q_seq + i) * total;
        bool all_masked = true;
        for (int64_t j = 0; j < total; ++j) {
          double s = 0;
          for (int64_t c = 0; c < head; ++c) s += qi[c] * kb[j * head + c];
          s = RoundToDType(t1, s);
          // Mode 0 is the raw product, as the spec and the function body say
          // (numpy's reference shows it softcapped).
          if (a.mode == 0) qk[j] = s;
          // Softcap before the mask, so masked scores stay -inf. In T1 like the
          // function body (numpy promotes a half softcap to float32).
          if (a.softcap > 0) {
            s = RoundToDType(t1, RoundToDType(t1, std::tanh(RoundToDType(t1, s / cap))) * cap);
          }
          if (a.mode == 1) qk[j] = s;
          row_bias[static_cast<size_t>(j)] = bias(b, h, i, j);
          all_masked = all_masked && row_bias[static_cast<size_t>(j)] == kNegInf;
          s = RoundToDType(t1, s + row_bias[static_cast<size_t>(j)]);
          if (a.mode == 2) qk[j] = s;
          row[static_cast<size_t>(j)] = RoundToDType(p, s);
        }
        SoftmaxRow(row, p);
        // A query with no visible key: zeros, decided on the bias, not on the
        // (possibly NaN) scores.
        for (double& x : row) x = all_masked ? 0.0 : RoundToDType(t1, x);
        if (a.mode == 3) std::copy(row.begin(), row.end(), qk);
        double* yi = y.data() + ((b * qh + h) * q_seq + i) * v_head;
        for (int64_t c = 0; c < v_head; ++c) {
          double s = 0;
          for (int64_t j = 0; j < total; ++j) s += row[static_cast<size_t>(j)] * vb[j * v_head + c];
          yi[c] = s;
        }
      }
    }
  }
  if (q.rank() == 3) {
    // [B, H, S, Dv] -> [B, S, H·Dv]
    std::vector<double> y3(y.size());
    for (int64_t b = 0; b < b_n; ++b)
      for (int64_t h = 0; h < qh; ++h)
        for (int64_t i = 0; i < q_seq; ++i)
          for (int64_t c = 0; c < v_head; ++c)
            y3[static_cast<size_t>(((b * q_seq + i) * qh + h) * v_head + c)] =
                y[static_cast<size_t>(((b * qh + h) * q_seq + i) * v_head + c)];
    ctx.set_output(0, DoublesToTensor(y3, {b_n, q_seq, qh * v_head}, t1));
  } else {
    ctx.set_output(0, DoublesToTensor(y, {b_n, qh, q_seq, v_head}, t1));
  }
  ctx.set_output(3, DoublesToTensor(qk_out, {b_n, qh, q_seq, total}, t1));
  return absl::OkStatus();
}

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  // 24 adds nonpad_kv_seqlen, 25 left/right_window_size; one kernel reads
  // them by opset.
  for (int since : {23, 24, 25}) {
    r.Register(OpDef{.domain = "",
                     .op_type = "Attention",
                     .since_version = since,
                     .infer = InferAttention,
                     .traits = AttentionTraits,
                     .cost = AttentionCost,
                     .kernel = AttentionKernel});
  }
  RegisterRotaryEmbeddingOps(r);
  RegisterFlexAttentionOps(r);
}

}  // namespace aic

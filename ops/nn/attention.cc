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

// Input slots.
constexpr size_t kQ = 0, kK = 1, kV = 2, kMask = 3, kPastKey = 4, kPastValue = 5, kNonpad = 6;

struct AttentionAttrs {
  bool causal = false;
  int64_t q_num_heads = 0, kv_num_heads = 0;    // 0: absent (4-D inputs carry heads)
  int64_t mode = 0;                             // what qk_matmul_output shows, 0..3
  std::optional<double> scale;                  // default 1/√head_size
  double softcap = 0;                           // <= 0: none
  DType softmax_precision = DType::kUndefined;  // kUndefined: T1
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
};

absl::StatusOr<AttentionAttrs> ReadAttrs(const Node& n, int64_t opset) {
  AttentionAttrs a;
  a.causal = n.GetInt("is_causal", 0) != 0;
  a.q_num_heads = n.GetInt("q_num_heads", 0);
  a.kv_num_heads = n.GetInt("kv_num_heads", 0);
  a.mode = n.GetInt("qk_matmul_output_mode", 0);
  if (n.HasAttr("scale")) a.scale = n.GetFloat("scale", 1.0f);
  a.softcap = n.GetFloat("softcap", 0.0f);
  if (n.HasAttr("softmax_precision")) {
    a.softmax_precision = static_cast<DType>(n.GetInt("softmax_precision", 0));
    if (!IsRealDType(a.softmax_precision)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "softmax_precision ", n.GetInt("softmax_precision", 0), " is not a float type"));
    }
  }
  if (opset >= 25) {
    a.left_window = n.GetInt("left_window_size", -1);
    a.right_window = n.GetInt("right_window_size", -1);
  }
  if (a.mode < 0 || a.mode > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("qk_matmul_output_mode ", a.mode, " is not 0..3"));
  }
  if (a.left_window < -1 || a.right_window < -1) {
    return absl::InvalidArgumentError("window sizes must be -1 or nonnegative");
  }
  return a;
}

// The op's dims, read off whichever inputs know them. Unknown stays unknown
// (Dim()); callers of shape inference turn those into fresh symbols.
struct AttentionDims {
  int64_t rank = 0;  // 3 or 4; 0 when no input's rank is known
  Dim batch, q_heads, kv_heads, q_seq, kv_seq, past_seq, total_seq, head, v_head;
  Dim y_hidden;  // 3-D only: q_heads · v_head
};

// Two views of one dim: a known value wins, two known values must agree.
absl::Status Unify(Dim& into, const Dim& other, const char* what) {
  if (other.is_value()) {
    if (into.is_value() && into.value() != other.value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is ", into.value(), " in one input and ", other.value(), " in another"));
    }
    into = other;
  } else if (into.is_unknown()) {
    into = other;
  }
  return absl::OkStatus();
}

// hidden / heads for a 3-D input's hidden size.
absl::StatusOr<Dim> SplitHeads(const Dim& hidden, int64_t heads, const char* what) {
  if (!hidden.is_value()) return Dim();
  if (hidden.value() % heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " hidden size ", hidden.value(),
                                                   " does not split into ", heads, " heads"));
  }
  return Dim(hidden.value() / heads);
}

// Q, K, V, past_key, past_value shapes (absent inputs: unknown rank).
absl::StatusOr<AttentionDims> ResolveDims(const std::vector<Shape>& s, bool has_past,
                                          const AttentionAttrs& a) {
  const Shape &q = s[kQ], &k = s[kK], &v = s[kV];
  AttentionDims d;
  for (const Shape* x : {&q, &k, &v}) {
    if (!x->has_rank()) continue;
    if (x->rank() != 3 && x->rank() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("Q, K, V must be 3-D or 4-D, got ", x->ToString()));
    }
    if (d.rank != 0 && x->rank() != d.rank) {
      return absl::InvalidArgumentError("Q, K and V must have the same rank");
    }
    d.rank = x->rank();
  }
  if (d.rank == 0) return d;
  auto at = [](const Shape& x, size_t i) { return x.has_rank() ? x[i] : Dim(); };
  d.batch = at(q, 0);
  AIC_RETURN_IF_ERROR(Unify(d.batch, at(k, 0), "batch size"));
  AIC_RETURN_IF_ERROR(Unify(d.batch, at(v, 0), "batch size"));
  if (d.rank == 4) {
    d.q_heads = at(q, 1);
    d.kv_heads = at(k, 1);
    AIC_RETURN_IF_ERROR(Unify(d.kv_heads, at(v, 1), "kv_num_heads"));
    d.q_seq = at(q, 2);
    d.kv_seq = at(k, 2);
    AIC_RETURN_IF_ERROR(Unify(d.kv_seq, at(v, 2), "kv_sequence_length"));
    d.head = at(q, 3);
    AIC_RETURN_IF_ERROR(Unify(d.head, at(k, 3), "head_size"));
    d.v_head = at(v, 3);
  } else {
    if (a.q_num_heads <= 0 || a.kv_num_heads <= 0) {
      return absl::InvalidArgumentError("3-D inputs need q_num_heads and kv_num_heads");
    }
    d.q_heads = Dim(a.q_num_heads);
    d.kv_heads = Dim(a.kv_num_heads);
    d.q_seq = at(q, 1);
    d.kv_seq = at(k, 1);
    AIC_RETURN_IF_ERROR(Unify(d.kv_seq, at(v, 1), "kv_sequence_length"));
    AIC_ASSIGN_OR_RETURN(d.head, SplitHeads(at(q, 2), a.q_num_heads, "Q"));
    AIC_ASSIGN_OR_RETURN(Dim k_head, SplitHeads(at(k, 2), a.kv_num_heads, "K"));
    AIC_RETURN_IF_ERROR(Unify(d.head, k_head, "head_size"));
    AIC_ASSIGN_OR_RETURN(d.v_head, SplitHeads(at(v, 2), a.kv_num_heads, "V"));
  }
  d.past_seq = Dim(0);
  if (has_past) {
    const Shape &pk = s[kPastKey], &pv = s[kPastValue];
    for (const Shape* x : {&pk, &pv}) {
      if (x->has_rank() && x->rank() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("past_key/past_value must be 4-D, got ", x->ToString()));
      }
    }
    d.past_seq = at(pk, 2);
    AIC_RETURN_IF_ERROR(Unify(d.past_seq, at(pv, 2), "past_sequence_length"));
    for (const Shape* x : {&pk, &pv}) {
      AIC_RETURN_IF_ERROR(Unify(d.batch, at(*x, 0), "batch size"));
      AIC_RETURN_IF_ERROR(Unify(d.kv_heads, at(*x, 1), "kv_num_heads"));
    }
    AIC_RETURN_IF_ERROR(Unify(d.head, at(pk, 3), "head_size"));
    AIC_RETURN_IF_ERROR(Unify(d.v_head, at(pv, 3), "v_head_size"));
  }
  if (d.past_seq.is_value() && d.kv_seq.is_value()) {
    d.total_seq = Dim(d.past_seq.value() + d.kv_seq.value());
  } else if (d.past_seq.is_value() && d.past_seq.value() == 0) {
    d.total_seq = d.kv_seq;
  }
  if (d.q_heads.is_value() && d.kv_heads.is_value() &&
      (d.kv_heads.value() <= 0 || d.q_heads.value() % d.kv_heads.value() != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(d.q_heads.value(),
                                                   " query heads do not group over ",
                                                   d.kv_heads.value(), " key/value heads"));
  }
  if (d.rank == 3) {
    if (d.v_head.is_value()) {
      d.y_hidden = Dim(a.q_num_heads * d.v_head.value());
    } else if (a.q_num_heads == a.kv_num_heads && v.has_rank()) {
      d.y_hidden = v[2];  // same head count: Y's hidden size is V's
    }
  }
  return d;
}

std::vector<Shape> InputShapes(const OpContext& ctx) {
  std::vector<Shape> s;
  for (size_t i = 0; i <= kPastValue; ++i)
    s.push_back(ctx.has_input(i) ? ctx.input_shape(i) : Shape());
  return s;
}

absl::Status InferAttention(OpContext& ctx) {
  auto attrs = ReadAttrs(ctx.node(), ctx.opset());
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  bool has_past = ctx.has_input(kPastKey);
  if (has_past != ctx.has_input(kPastValue)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  auto d = ResolveDims(InputShapes(ctx), has_past, *attrs);
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
  auto attrs = ReadAttrs(ctx.node(), ctx.opset());
  if (!attrs.ok()) return Cost{};
  auto d =
      ResolveDims(InputShapes(ctx), ctx.has_input(kPastKey) && ctx.has_input(kPastValue), *attrs);
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
  auto attrs = ReadAttrs(ctx.node(), ctx.opset());
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
  auto dims = ResolveDims(shapes, has_past, a);
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
}

}  // namespace aic

#include "ops/nn/attention_params.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/util/dim_unify.h"
#include "support/status.h"

namespace aic {

namespace {

// hidden / heads for a 3-D input's hidden size.
absl::StatusOr<Dim> SplitHeads(const Dim& hidden, int64_t heads, const char* what) {
  if (!hidden.is_value()) return Dim();
  if (hidden.value() % heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " hidden size ", hidden.value(),
                                                   " does not split into ", heads, " heads"));
  }
  return Dim(hidden.value() / heads);
}

}  // namespace

absl::StatusOr<AttentionAttrs> ReadAttentionAttrs(const Node& n, int64_t opset) {
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

// Q, K, V, past_key, past_value shapes (absent inputs: unknown rank).
absl::Status UnifyFourDimQkv(const Shape& q, const Shape& k, const Shape& v, AttentionDims& d) {
  auto at = [](const Shape& x, size_t i) { return x.has_rank() ? x[i] : Dim(); };
  d.batch = at(q, 0);
  AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(k, 0), "batch size"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(v, 0), "batch size"));
  d.q_heads = at(q, 1);
  d.kv_heads = at(k, 1);
  AIC_RETURN_IF_ERROR(UnifyDim(d.kv_heads, at(v, 1), "kv_num_heads"));
  d.q_seq = at(q, 2);
  d.kv_seq = at(k, 2);
  AIC_RETURN_IF_ERROR(UnifyDim(d.kv_seq, at(v, 2), "kv_sequence_length"));
  d.head = at(q, 3);
  AIC_RETURN_IF_ERROR(UnifyDim(d.head, at(k, 3), "head_size"));
  d.v_head = at(v, 3);
  return absl::OkStatus();
}

absl::StatusOr<AttentionDims> ResolveAttentionDims(const std::vector<Shape>& s, bool has_past,
                                                   const AttentionAttrs& a) {
  const Shape &q = s[kAttentionQ], &k = s[kAttentionK], &v = s[kAttentionV];
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
  if (d.rank == 4) {
    AIC_RETURN_IF_ERROR(UnifyFourDimQkv(q, k, v, d));
  } else {
    d.batch = at(q, 0);
    AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(k, 0), "batch size"));
    AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(v, 0), "batch size"));
    if (a.q_num_heads <= 0 || a.kv_num_heads <= 0) {
      return absl::InvalidArgumentError("3-D inputs need q_num_heads and kv_num_heads");
    }
    d.q_heads = Dim(a.q_num_heads);
    d.kv_heads = Dim(a.kv_num_heads);
    d.q_seq = at(q, 1);
    d.kv_seq = at(k, 1);
    AIC_RETURN_IF_ERROR(UnifyDim(d.kv_seq, at(v, 1), "kv_sequence_length"));
    AIC_ASSIGN_OR_RETURN(d.head, SplitHeads(at(q, 2), a.q_num_heads, "Q"));
    AIC_ASSIGN_OR_RETURN(Dim k_head, SplitHeads(at(k, 2), a.kv_num_heads, "K"));
    AIC_RETURN_IF_ERROR(UnifyDim(d.head, k_head, "head_size"));
    AIC_ASSIGN_OR_RETURN(d.v_head, SplitHeads(at(v, 2), a.kv_num_heads, "V"));
  }
  d.past_seq = Dim(0);
  if (has_past) {
    const Shape &pk = s[kAttentionPastKey], &pv = s[kAttentionPastValue];
    for (const Shape* x : {&pk, &pv}) {
      if (x->has_rank() && x->rank() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("past_key/past_value must be 4-D, got ", x->ToString()));
      }
    }
    d.past_seq = at(pk, 2);
    AIC_RETURN_IF_ERROR(UnifyDim(d.past_seq, at(pv, 2), "past_sequence_length"));
    for (const Shape* x : {&pk, &pv}) {
      AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(*x, 0), "batch size"));
      AIC_RETURN_IF_ERROR(UnifyDim(d.kv_heads, at(*x, 1), "kv_num_heads"));
    }
    AIC_RETURN_IF_ERROR(UnifyDim(d.head, at(pk, 3), "head_size"));
    AIC_RETURN_IF_ERROR(UnifyDim(d.v_head, at(pv, 3), "v_head_size"));
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

}  // namespace aic

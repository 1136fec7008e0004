// CausalConvWithState (opset 27): the causal depthwise 1-D convolution of
// Mamba and Gated DeltaNet blocks, with a carry state for token-by-token
// decoding. Per batch b and channel c, with k the kernel width and
//   padded = past_state[b, c, :] ++ input[b, c, :]   (k − 1 zeros without a past),
//   output[b, c, t] = act(Σ_{j<k} weight[c, 0, j] · padded[t + j] + bias[c]),
//   present_state[b, c, :] = the last k − 1 positions of padded,
// act being identity ("none") or SiLU ("silu", alias "swish"): x · σ(x).
// input/output are [B, C, L], weight [C, 1, k], bias [C], the states [B, C, k−1].
//
// The reference kernel computes in double and rounds where onnx.reference
// does (the convolution's sum, the bias add, SiLU's result), so float16
// outputs match it rather than being one rounding more accurate.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/attention_internal.h"
#include "ops/nn/state_space_internal.h"
#include "ops/util/cost_util.h"
#include "support/status.h"

namespace aic {

namespace {

constexpr size_t kInput = 0, kWeight = 1, kBias = 2, kPastState = 3;

// The activation attribute; true for SiLU.
absl::StatusOr<bool> ReadSilu(const Node& n) {
  std::string act = n.GetString("activation", "none");
  if (act == "silu" || act == "swish") return true;
  if (act == "none") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("activation '", act, "' is not one of 'none', 'silu', 'swish'"));
}

// The op's dims, from whichever inputs know them; unknown stays Dim().
struct CausalConvDims {
  Dim batch, channels, length, kernel, state;  // state = kernel − 1
};

// Shapes of input, weight, bias, past_state (absent: unknown rank).
absl::StatusOr<CausalConvDims> ResolveCausalConvDims(const Shape& x, const Shape& w,
                                                     const Shape& bias, const Shape& past) {
  auto rank_is = [](const Shape& s, int64_t r, const char* what) -> absl::Status {
    if (s.has_rank() && s.rank() != r) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be ", r, "-D, got ", s.ToString()));
    }
    return absl::OkStatus();
  };
  AIC_RETURN_IF_ERROR(rank_is(x, 3, "input [batch, channels, length]"));
  AIC_RETURN_IF_ERROR(rank_is(w, 3, "weight [channels, 1, k]"));
  AIC_RETURN_IF_ERROR(rank_is(bias, 1, "bias [channels]"));
  AIC_RETURN_IF_ERROR(rank_is(past, 3, "past_state [batch, channels, k - 1]"));
  auto at = [](const Shape& s, size_t i) { return s.has_rank() ? s[i] : Dim(); };
  CausalConvDims d;
  d.batch = at(x, 0);
  d.channels = at(x, 1);
  d.length = at(x, 2);
  AIC_RETURN_IF_ERROR(UnifyDim(d.channels, at(w, 0), "channels"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.channels, at(bias, 0), "channels"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.batch, at(past, 0), "batch size"));
  AIC_RETURN_IF_ERROR(UnifyDim(d.channels, at(past, 1), "channels"));
  // Depthwise: one input channel per group.
  if (at(w, 1).is_value() && at(w, 1).value() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight ", w.ToString(), " is not depthwise [channels, 1, k]"));
  }
  d.kernel = at(w, 2);
  if (d.kernel.is_value()) {
    if (d.kernel.value() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("kernel size ", d.kernel.value(), " must be >= 1"));
    }
    d.state = Dim(d.kernel.value() - 1);
  }
  Dim past_len = at(past, 2);
  if (past_len.is_value() && d.state.is_value() && past_len.value() != d.state.value()) {
    return absl::InvalidArgumentError(absl::StrCat("past_state has ", past_len.value(),
                                                   " positions, the kernel of size ", d.kernel.value(),
                                                   " needs ", d.state.value()));
  }
  AIC_RETURN_IF_ERROR(UnifyDim(d.state, past_len, "state length"));
  if (d.kernel.is_unknown() && d.state.is_value()) d.kernel = Dim(d.state.value() + 1);
  return d;
}

Shape OptionalShape(const OpContext& ctx, size_t i) {
  return ctx.has_input(i) ? ctx.input_shape(i) : Shape::UnknownRank();
}

absl::Status InferCausalConv(OpContext& ctx) {
  if (auto silu = ReadSilu(ctx.node()); !silu.ok()) return ctx.Error(silu.status().message());
  DType t = ctx.input_dtype(kInput);
  if (t != DType::kUndefined && !IsRealDType(t)) {
    return ctx.Error("input dtype ", DTypeName(t), " is not float, float16 or bfloat16");
  }
  for (size_t i : {kWeight, kBias, kPastState}) {
    DType u = ctx.has_input(i) ? ctx.input_dtype(i) : DType::kUndefined;
    if (t != DType::kUndefined && u != DType::kUndefined && u != t) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(u), ", input 0 ", DTypeName(t));
    }
  }
  auto d = ResolveCausalConvDims(ctx.input_shape(kInput), ctx.input_shape(kWeight),
                                 OptionalShape(ctx, kBias), OptionalShape(ctx, kPastState));
  if (!d.ok()) return ctx.Error(d.status().message());
  auto known = [&](const Dim& x) { return x.is_unknown() ? ctx.FreshDim() : x; };
  Dim batch = known(d->batch), channels = known(d->channels);
  ctx.set_output(0, t, Shape({batch, channels, known(d->length)}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, t, Shape({batch, channels, known(d->state)}));
  return absl::OkStatus();
}

// k MACs per output element; FLOPs add the bias and SiLU (exp, add, divide,
// multiply) per element.
Cost CausalConvCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx, {kWeight, kBias});
  const Shape& y = ctx.output_type(0).shape;
  const Shape& w = ctx.input_shape(kWeight);
  if (!y.IsStatic() || !w.has_rank() || w.rank() != 3 || !w[2].is_value()) {
    c.known = false;
    return c;
  }
  int64_t n = *y.NumElements();
  c.macs = n * w[2].value();
  c.flops = 2 * c.macs;
  if (ctx.has_input(kBias)) c.flops += n * kFlopsBasic;
  auto silu = ReadSilu(ctx.node());
  if (silu.ok() && *silu) c.flops += n * (kFlopsTranscendental + 3 * kFlopsBasic);
  return c;
}

Traits CausalConvTraits(const OpContext& ctx) {
  auto silu = ReadSilu(ctx.node());
  bool act = silu.ok() && *silu;
  bool has_bias = ctx.has_input(kBias);
  Traits t;
  t.semantic_name = "CausalConvWithState";
  t.meaning = absl::StrCat("y[t] = ", act ? "silu(" : "", "Σⱼ w[j]·x[t−k+1+j]", has_bias ? " + b" : "",
                           act ? ")" : "", " per channel, past_state ++ x; present_state = last k−1 inputs");
  // Linear in the input for a given weight; the bias makes it affine, SiLU
  // nonlinear. A weight that is not constant makes it bilinear.
  bool weight_known = ctx.input_constant(kWeight) != nullptr;
  if (act || !weight_known) {
    t.linearity = Linearity::kNonlinear;
  } else {
    t.linearity = has_bias ? Linearity::kAffine : Linearity::kLinear;
  }
  if (act) {
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kSaturates;
    t.collapse_how = "SiLU's negative tail flattens to 0";
  }
  t.trainable = weight_known;
  t.effect = RepresentationEffect::kPreserves;  // channels in = channels out
  return t;
}

absl::Status CausalConvKernel(KernelContext& ctx) {
  auto act = ReadSilu(ctx.node());
  if (!act.ok()) return ctx.Error(act.status().message());
  bool silu = *act;
  const Tensor &x = ctx.input(kInput), &w = ctx.input(kWeight);
  DType t = x.dtype();
  if (!IsRealDType(t)) return ctx.Unimplemented("dtype ", DTypeName(t));
  bool has_bias = ctx.has_input(kBias), has_past = ctx.has_input(kPastState);
  for (size_t i : {kWeight, kBias, kPastState}) {
    if (ctx.has_input(i) && ctx.input(i).dtype() != t) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(ctx.input(i).dtype()), ", input 0 ",
                       DTypeName(t));
    }
  }
  auto shape_of = [&](size_t i) {
    return ctx.has_input(i) ? Shape::FromValues(ctx.input(i).dims()) : Shape::UnknownRank();
  };
  auto dims = ResolveCausalConvDims(shape_of(kInput), shape_of(kWeight), shape_of(kBias),
                                    shape_of(kPastState));
  if (!dims.ok()) return ctx.Error(dims.status().message());
  int64_t b_n = dims->batch.value(), c_n = dims->channels.value(), len = dims->length.value();
  int64_t k = dims->kernel.value(), s_n = k - 1, p_n = len + s_n;

  std::vector<double> xv = TensorToDoubles(x), wv = TensorToDoubles(w);
  std::vector<double> bias = has_bias ? TensorToDoubles(ctx.input(kBias)) : std::vector<double>();
  std::vector<double> past = has_past ? TensorToDoubles(ctx.input(kPastState)) : std::vector<double>();
  std::vector<double> y(static_cast<size_t>(b_n * c_n * len)), present(static_cast<size_t>(b_n * c_n * s_n));
  std::vector<double> padded(static_cast<size_t>(p_n));
  auto r = [t](double v) { return RoundToDType(t, v); };
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t c = 0; c < c_n; ++c) {
      int64_t row = b * c_n + c;
      for (int64_t j = 0; j < s_n; ++j) {
        padded[static_cast<size_t>(j)] = has_past ? past[static_cast<size_t>(row * s_n + j)] : 0.0;
      }
      std::copy(xv.begin() + row * len, xv.begin() + (row + 1) * len, padded.begin() + s_n);
      const double* wc = wv.data() + c * k;
      for (int64_t i = 0; i < len; ++i) {
        double s = 0;
        for (int64_t j = 0; j < k; ++j) s += wc[j] * padded[static_cast<size_t>(i + j)];
        s = r(s);
        if (has_bias) s = r(s + bias[static_cast<size_t>(c)]);
        if (silu) s = r(s / (1.0 + std::exp(-s)));
        y[static_cast<size_t>(row * len + i)] = s;
      }
      std::copy(padded.begin() + len, padded.end(), present.begin() + row * s_n);
    }
  }
  ctx.set_output(0, DoublesToTensor(y, {b_n, c_n, len}, t));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DoublesToTensor(present, {b_n, c_n, s_n}, t));
  return absl::OkStatus();
}

}  // namespace

void RegisterCausalConvWithStateOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "CausalConvWithState",
                   .since_version = 27,
                   .infer = InferCausalConv,
                   .traits = CausalConvTraits,
                   .cost = CausalConvCost,
                   .kernel = CausalConvKernel});
}

}  // namespace aic

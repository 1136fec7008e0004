// The softmax family: Softmax, LogSoftmax, Hardmax. Before opset 13 the input
// is coerced to 2-D at `axis` (default 1) and normalized over everything from
// `axis` on; from 13 it is one axis (default -1). Both views are the same
// (outer, n, inner) walk, so one driver serves the three ops, which differ
// only in how a row is rewritten. Softmax forgets the row's shift: x and x+c
// give the same output.
//
// float16/bfloat16 Softmax rounds to the element type after every step, as
// onnx.reference (numpy, ml_dtypes) does and the backend tests expect: one
// rounding at the end differs from theirs by an ulp often enough to fail them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/registry.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/float_convert.h"
#include "support/half.h"

namespace aic {

namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

struct RowLayout {
  int64_t outer = 1, n = 1, inner = 1;
};

absl::StatusOr<RowLayout> Layout(const Node& node, int64_t opset, const std::vector<int64_t>& dims) {
  int64_t rank = static_cast<int64_t>(dims.size());
  bool single_axis = opset >= 13;
  int64_t axis = node.GetInt("axis", single_axis ? -1 : 1);
  if (rank == 0) return RowLayout{};
  AIC_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank));
  RowLayout l;
  for (int64_t k = 0; k < rank; ++k) {
    int64_t d = dims[static_cast<size_t>(k)];
    if (k < a) {
      l.outer *= d;
    } else if (k == a || !single_axis) {
      l.n *= d;
    } else {
      l.inner *= d;
    }
  }
  return l;
}

void RewriteRow(SoftmaxKind kind, double* v, int64_t n, int64_t stride) {
  double mx = -std::numeric_limits<double>::infinity();
  int64_t arg = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (v[i * stride] > mx) mx = v[i * stride], arg = i;
  }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) v[i * stride] = i == arg ? 1.0 : 0.0;
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(v[i * stride] - mx);
  for (int64_t i = 0; i < n; ++i) {
    double s = v[i * stride] - mx;
    v[i * stride] = kind == SoftmaxKind::kSoftmax ? std::exp(s) / sum : s - std::log(sum);
  }
}

// numpy's pairwise summation (the float accumulator of its float16 add.reduce
// along a contiguous axis): 8 partial sums per block of up to 128, halves above.
float PairwiseSum(const float* a, int64_t n) {
  if (n < 8) {
    float res = 0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

// Softmax of one fp16/bf16 row the way onnx.reference computes it:
// tmp = x - max, y = exp(tmp), y /= sum(y), every step in float rounded to
// the element type. The sum is numpy's: float16 along the contiguous axis
// accumulates in float (pairwise) and rounds once; along a strided axis, and
// for ml_dtypes' bfloat16 always, each addition rounds.
void SoftmaxRowRounded(DType dtype, double* v, int64_t n, int64_t stride) {
  bool half = dtype == DType::kFloat16;
  auto round = [half](float f) {
    return half ? HalfToFloat(FloatToHalf(f)) : BFloat16ToFloat(FloatToBFloat16(f));
  };
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<float>(v[i * stride]));
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    y[static_cast<size_t>(i)] = round(std::exp(round(static_cast<float>(v[i * stride]) - mx)));
  }
  float sum = 0;
  if (half && stride == 1) {
    sum = round(PairwiseSum(y.data(), n));
  } else {
    for (float e : y) sum = round(sum + e);
  }
  for (int64_t i = 0; i < n; ++i) v[i * stride] = round(y[static_cast<size_t>(i)] / sum);
}

absl::Status SoftmaxKernel(KernelContext& ctx, SoftmaxKind kind) {
  const Tensor& x = ctx.input(0);
  if (!IsRealDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  auto layout = Layout(ctx.node(), ctx.opset(), x.dims());
  if (!layout.ok()) return ctx.Error(layout.status().message());
  std::vector<double> v = TensorToDoubles(x);
  // LogSoftmax keeps its one rounding: numpy's log(softmax) would give -inf
  // wherever a probability underflows the half type.
  bool rounded = kind == SoftmaxKind::kSoftmax && IsHalfType(x.dtype());
  for (int64_t o = 0; o < layout->outer; ++o) {
    for (int64_t i = 0; i < layout->inner; ++i) {
      double* row = v.data() + o * layout->n * layout->inner + i;
      if (rounded) {
        SoftmaxRowRounded(x.dtype(), row, layout->n, layout->inner);
      } else {
        RewriteRow(kind, row, layout->n, layout->inner);
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(v, x.dims(), x.dtype()));
  return absl::OkStatus();
}

absl::Status InferSoftmax(OpContext& ctx) {
  const Shape& s = ctx.input_shape(0);
  if (s.has_rank() && s.rank() > 0) {
    int64_t axis = ctx.node().GetInt("axis", ctx.opset() >= 13 ? -1 : 1);
    if (!NormalizeAxis(axis, s.rank()).ok()) {
      return ctx.Error("axis ", axis, " out of range for rank ", s.rank());
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), s);
  return absl::OkStatus();
}

Traits SoftmaxTraits(const OpContext& ctx, SoftmaxKind kind) {
  Traits t;
  std::string over = ctx.opset() >= 13
                         ? absl::StrCat("axis ", ctx.node().GetInt("axis", -1))
                         : absl::StrCat("axes ", ctx.node().GetInt("axis", 1), "..end");
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.effect = RepresentationEffect::kPreserves;
  switch (kind) {
    case SoftmaxKind::kSoftmax:
      t.semantic_name = "Softmax";
      t.meaning = absl::StrCat("y = exp(x) / Σ exp(x) over ", over);
      break;
    case SoftmaxKind::kLogSoftmax:
      t.semantic_name = "LogSoftmax";
      t.meaning = absl::StrCat("y = x - log Σ exp(x) over ", over);
      break;
    case SoftmaxKind::kHardmax:
      t.semantic_name = "Hardmax";
      t.meaning = absl::StrCat("y = one_hot(argmax(x)) over ", over);
      t.collapse = CollapseKind::kQuantizes;
      t.collapse_how = "every row maps to the one-hot vector of its first maximum";
      return t;
  }
  // Shift invariance: a projection that forgets one degree of freedom per row.
  t.collapse = CollapseKind::kProjects;
  t.collapse_how = "shift-invariant: x and x + c (c constant along the axis) give the same output";
  t.effect_detail = "shape kept; the per-row shift is lost";
  t.fuses_with = {"MatMul", "Div", "Add"};
  return t;
}

void RegisterSoftmaxLike(OpRegistry& r, const char* name, SoftmaxKind kind) {
  r.Register(OpDef{.domain = "",
                   .op_type = name,
                   .since_version = 1,
                   .infer = InferSoftmax,
                   .traits = [kind](const OpContext& ctx) { return SoftmaxTraits(ctx, kind); },
                   // max, subtract, exp, sum, divide (or log) per element.
                   .cost = [kind](const OpContext& ctx) {
                     return ElementwiseCost(ctx, kind == SoftmaxKind::kHardmax ? 1 : 5);
                   },
                   .kernel = [kind](KernelContext& ctx) { return SoftmaxKernel(ctx, kind); }});
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& r) {
  RegisterSoftmaxLike(r, "Softmax", SoftmaxKind::kSoftmax);
  RegisterSoftmaxLike(r, "LogSoftmax", SoftmaxKind::kLogSoftmax);
  RegisterSoftmaxLike(r, "Hardmax", SoftmaxKind::kHardmax);
}

}  // namespace aic

// The MatMul family: MatMul (numpy matmul: batched, broadcasting, 1-D
// promotion), Gemm, MatMulInteger, QLinearMatMul; Einsum lives in einsum.cc.
// One batched-matmul core over wide accumulators serves every variant: the
// quantized ones subtract zero points first and requantize after. A product
// with a constant weight is the seed's "Linear" layer; with two activations it
// is a bilinear "MatMul".
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/fused/standard_aliases.h"
#include "ops/math/matmul_internal.h"
#include "ops/math/matmul_util.h"
#include "ops/registry.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// numpy matmul shape rule: 1-D operands are promoted ([K] -> [1,K] for A,
// [K] -> [K,1] for B) and the promoted axis is dropped from the result.
absl::StatusOr<Shape> MatMulShape(const OpContext& ctx, const Shape& a, const Shape& b) {
  if (!a.has_rank() || !b.has_rank()) return Shape::UnknownRank();
  if (a.rank() < 1 || b.rank() < 1) return ctx.Error("MatMul operands must have rank >= 1");
  const Dim& ka = a.dims().back();
  const Dim& kb = b.rank() == 1 ? b.dims()[0] : b.dims()[b.rank() - 2];
  if (ka.is_value() && kb.is_value() && ka.value() != kb.value()) {
    return ctx.Error("inner dimensions differ: ", a.ToString(), " x ", b.ToString());
  }
  std::vector<Dim> batch_a(a.dims().begin(), a.dims().end() - std::min<int64_t>(a.rank(), 2));
  std::vector<Dim> batch_b(b.dims().begin(), b.dims().end() - std::min<int64_t>(b.rank(), 2));
  auto batch = BroadcastShapes({Shape(batch_a), Shape(batch_b)}, [&] { return ctx.FreshDim(); });
  if (!batch.ok()) return ctx.Error(batch.status().message());
  std::vector<Dim> out = batch->dims();
  if (a.rank() >= 2) out.push_back(a.dims()[a.rank() - 2]);
  if (b.rank() >= 2) out.push_back(b.dims().back());
  return Shape(std::move(out));
}

absl::Status InferMatMul(OpContext& ctx, DType out_dtype) {
  AIC_ASSIGN_OR_RETURN(Shape s, MatMulShape(ctx, ctx.input_shape(0), ctx.input_shape(1)));
  ctx.set_output(0, out_dtype, std::move(s));
  return absl::OkStatus();
}

// C[batch, M, N] = sum_k A[batch, M, K] * B[batch, K, N] with batch dims broadcast.
template <typename Acc>
absl::StatusOr<std::vector<Acc>> BatchedMatMul(const std::vector<Acc>& a, std::vector<int64_t> ad,
                                               const std::vector<Acc>& b, std::vector<int64_t> bd,
                                               std::vector<int64_t>* out_dims) {
  if (ad.empty() || bd.empty()) return absl::InvalidArgumentError("MatMul of a scalar");
  bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner dimensions differ: ", DimsToString(ad), " x ", DimsToString(bd)));
  }
  std::vector<int64_t> batch_a(ad.begin(), ad.end() - 2), batch_b(bd.begin(), bd.end() - 2);
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastDims({batch_a, batch_b}));
  BroadcastIterator it(batch, {batch_a, batch_b});
  std::vector<Acc> c(static_cast<size_t>(it.size() * m * n));
  for (int64_t bi = 0; bi < it.size(); ++bi, it.Next()) {
    const Acc* pa = a.data() + it.offset(0) * m * k;
    const Acc* pb = b.data() + it.offset(1) * k * n;
    Acc* pc = c.data() + bi * m * n;
    // i-q-j order walks B by rows; each c[i][j] still sums over q in order.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t q = 0; q < k; ++q) {
        Acc aiq = pa[i * k + q];
        for (int64_t j = 0; j < n; ++j) pc[i * n + j] += aiq * pb[q * n + j];
      }
    }
  }
  *out_dims = batch;
  if (!a_vec) out_dims->push_back(m);
  if (!b_vec) out_dims->push_back(n);
  return c;
}

absl::Status MatMulKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) return ctx.Error("operand dtypes differ");
  std::vector<int64_t> dims;
  if (IsRealDType(a.dtype())) {
    auto c = BatchedMatMul(TensorToDoubles(a), a.dims(), TensorToDoubles(b), b.dims(), &dims);
    if (!c.ok()) return ctx.Error(c.status().message());
    ctx.set_output(0, DoublesToTensor(*c, dims, a.dtype()));
    return absl::OkStatus();
  }
  if (!IsInteger(a.dtype())) return ctx.Unimplemented("dtype ", DTypeName(a.dtype()));
  auto c = BatchedMatMul(TensorToInt64(a), a.dims(), TensorToInt64(b), b.dims(), &dims);
  if (!c.ok()) return ctx.Error(c.status().message());
  ctx.set_output(0, Int64ToTensor(*c, dims, a.dtype()));
  return absl::OkStatus();
}

// The weight operand of a product: B when constant (x·W), else A when
// constant (W·x), else none (two activations).
int WeightInput(const OpContext& ctx, size_t a, size_t b) {
  if (ctx.input_constant(b) != nullptr) return static_cast<int>(b);
  if (ctx.input_constant(a) != nullptr) return static_cast<int>(a);
  return -1;
}

Traits BilinearTraits(const char* meaning) {
  Traits t;
  t.semantic_name = "MatMul";
  t.meaning = meaning;
  t.linearity = Linearity::kNonlinear;  // bilinear: linear in each operand, not jointly
  t.fuses_with = {"Add", "Softmax", "Mul", "Div"};
  return t;
}

// A product of inputs a_i·b_i: "Linear" with a constant weight, else bilinear.
Traits ProductTraits(const OpContext& ctx, size_t a_i, size_t b_i) {
  int w = WeightInput(ctx, a_i, b_i);
  if (w < 0) return BilinearTraits("y = A·B (bilinear in A and B)");
  const Tensor& wt = *ctx.input_constant(static_cast<size_t>(w));
  if (wt.rank() < 1) return BilinearTraits("y = A·B");
  // x·W: W is [.., K, N] maps K -> N. W·x: W is [.., M, K] maps K -> M.
  int64_t in = 0, out = 0;
  if (w == static_cast<int>(b_i)) {
    in = wt.rank() == 1 ? wt.dim(0) : wt.dim(wt.rank() - 2);
    out = wt.rank() == 1 ? 1 : wt.dim(wt.rank() - 1);
  } else {
    in = wt.dim(wt.rank() - 1);
    out = wt.rank() == 1 ? 1 : wt.dim(wt.rank() - 2);
  }
  return LinearLayerTraits("Linear", w == static_cast<int>(b_i) ? "y = x·W" : "y = W·x", in,
                           out, false);
}

Traits MatMulTraits(const OpContext& ctx) { return ProductTraits(ctx, 0, 1); }

// MACs of a (broadcast) matmul from static shapes; -1 when unknown.
int64_t MatMulMacs(const Shape& a, const Shape& b, const Shape& out) {
  if (!a.IsStatic() || !b.IsStatic() || !out.IsStatic() || a.rank() < 1) return -1;
  int64_t k = a.dims().back().value();
  return *out.NumElements() * k;
}

Cost MatMulCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx, {0, 1});
  // Only constant weights are parameters; if both were constant the node folds.
  if (WeightInput(ctx, 0, 1) < 0) c.params = 0;
  int64_t macs = MatMulMacs(ctx.input_shape(0), ctx.input_shape(1), ctx.output_type(0).shape);
  if (macs < 0) {
    c.known = false;
    return c;
  }
  c.macs = macs;
  c.flops = 2 * macs;
  return c;
}

// ---- Gemm: Y = alpha·A'·B' + beta·C, C unidirectionally broadcast to [M, N].

struct GemmAttrs {
  bool trans_a, trans_b;
  double alpha, beta;
};

GemmAttrs ReadGemm(const Node& n) {
  return {n.GetInt("transA", 0) != 0, n.GetInt("transB", 0) != 0, n.GetFloat("alpha", 1.0f),
          n.GetFloat("beta", 1.0f)};
}

absl::Status InferGemm(OpContext& ctx) {
  GemmAttrs g = ReadGemm(ctx.node());
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  DType dt = ctx.input_dtype(0);
  if (!a.has_rank() || !b.has_rank()) {
    ctx.set_output(0, dt, Shape(std::vector<Dim>{ctx.FreshDim(), ctx.FreshDim()}));
    if (a.has_rank() && a.rank() == 2) {
      ctx.set_output(0, dt, Shape(std::vector<Dim>{a[g.trans_a ? 1 : 0], ctx.FreshDim()}));
    }
    return absl::OkStatus();
  }
  if (a.rank() != 2 || b.rank() != 2) {
    return ctx.Error("Gemm operands must be 2-D, got ", a.ToString(), " and ", b.ToString());
  }
  const Dim& ka = a[g.trans_a ? 0 : 1];
  const Dim& kb = b[g.trans_b ? 1 : 0];
  if (ka.is_value() && kb.is_value() && ka.value() != kb.value()) {
    return ctx.Error("inner dimensions differ: ", a.ToString(), " x ", b.ToString());
  }
  Shape out(std::vector<Dim>{a[g.trans_a ? 1 : 0], b[g.trans_b ? 0 : 1]});
  if (ctx.has_input(2) && ctx.input_shape(2).has_rank()) {
    const Shape& c = ctx.input_shape(2);
    if (c.rank() > 2) return ctx.Error("Gemm C has rank ", c.rank());
    // Unidirectional: each dim of C is 1 or the output's.
    for (size_t k = 0; k < c.dims().size(); ++k) {
      const Dim& cd = c[k];
      const Dim& od = out[2 - c.dims().size() + k];
      if (cd.is_value() && cd.value() != 1 && od.is_value() && cd.value() != od.value()) {
        return ctx.Error("C ", c.ToString(), " does not broadcast to ", out.ToString());
      }
    }
  }
  ctx.set_output(0, dt, std::move(out));
  return absl::OkStatus();
}

absl::Status GemmKernel(KernelContext& ctx) {
  GemmAttrs g = ReadGemm(ctx.node());
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2) return ctx.Error("Gemm operands must be 2-D");
  if (!IsRealDType(a.dtype()) && !IsInteger(a.dtype())) {
    return ctx.Unimplemented("dtype ", DTypeName(a.dtype()));
  }
  int64_t m = a.dim(g.trans_a ? 1 : 0), k = a.dim(g.trans_a ? 0 : 1);
  int64_t n = b.dim(g.trans_b ? 0 : 1);
  if (b.dim(g.trans_b ? 1 : 0) != k) return ctx.Error("inner dimensions differ");
  std::vector<double> va = TensorToDoubles(a), vb = TensorToDoubles(b);
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        double x = va[g.trans_a ? q * m + i : i * k + q];
        double w = vb[g.trans_b ? j * k + q : q * n + j];
        s += x * w;
      }
      y[i * n + j] = g.alpha * s;
    }
  }
  if (ctx.has_input(2)) {
    const Tensor& c = ctx.input(2);
    std::vector<double> vc = TensorToDoubles(c);
    if (c.rank() > 2 || !BroadcastDims({{m, n}, c.dims()}).ok() ||
        *BroadcastDims({{m, n}, c.dims()}) != std::vector<int64_t>{m, n}) {
      return ctx.Error("C ", DimsToString(c.dims()), " does not broadcast to [", m, ", ", n, "]");
    }
    BroadcastIterator it({m, n}, {c.dims()});
    for (int64_t i = 0; i < m * n; ++i, it.Next()) y[i] += g.beta * vc[it.offset(0)];
  }
  ctx.set_output(0, DoublesToTensor(y, {m, n}, a.dtype()));
  return absl::OkStatus();
}

Traits GemmTraits(const OpContext& ctx) {
  GemmAttrs g = ReadGemm(ctx.node());
  int w = WeightInput(ctx, 0, 1);
  std::string scale = g.alpha == 1.0 ? "" : absl::StrCat(g.alpha, "·");
  std::string bias_scale = g.beta == 1.0 ? "" : absl::StrCat(g.beta, "·");
  bool has_bias = ctx.has_input(2) && g.beta != 0.0;
  if (w < 0) {
    return BilinearTraits(has_bias ? "y = α·A'·B' + β·C (bilinear in A and B)"
                                   : "y = α·A'·B' (bilinear in A and B)");
  }
  const Tensor& wt = *ctx.input_constant(static_cast<size_t>(w));
  if (wt.rank() != 2) return BilinearTraits("y = α·A'·B' + β·C");
  int64_t in = 0, out = 0;
  std::string meaning;
  if (w == 1) {  // x·W (W is [K, N], or [N, K] with transB)
    in = wt.dim(g.trans_b ? 1 : 0);
    out = wt.dim(g.trans_b ? 0 : 1);
    meaning = absl::StrCat("y = ", scale, "x·W", g.trans_b ? "ᵀ" : "");
  } else {  // W·x
    in = wt.dim(g.trans_a ? 0 : 1);
    out = wt.dim(g.trans_a ? 1 : 0);
    meaning = absl::StrCat("y = ", scale, "W", g.trans_a ? "ᵀ" : "", "·x");
  }
  if (has_bias) absl::StrAppend(&meaning, " + ", bias_scale, "b");
  return LinearLayerTraits("Linear", meaning, in, out, has_bias);
}

// FLOPs: 2·M·N·K for the product, plus M·N each for the alpha scaling (when
// alpha != 1), the beta scaling (when beta != 1) and the bias add (when C is given).
Cost GemmCost(const OpContext& ctx) {
  GemmAttrs g = ReadGemm(ctx.node());
  Cost c = BytesOnlyCost(ctx, {0, 1, 2});
  if (WeightInput(ctx, 0, 1) < 0) c.params = 0;
  const Shape& a = ctx.input_shape(0);
  const Shape& out = ctx.output_type(0).shape;
  if (!a.IsStatic() || a.rank() != 2 || !out.IsStatic() || out.rank() != 2) {
    c.known = false;
    return c;
  }
  int64_t k = a[g.trans_a ? 0 : 1].value();
  int64_t mn = *out.NumElements();
  c.macs = mn * k;
  c.flops = 2 * c.macs;
  if (g.alpha != 1.0) c.flops += mn;
  if (ctx.has_input(2)) c.flops += mn * (g.beta != 1.0 ? 2 : 1);
  return c;
}

// ---- Quantized products.

// Subtracts a zero point that is a scalar or per-slice along `axis_size`
// (stride `inner`): per-row for A ([M] over rows of K), per-column for B ([N]).
void SubtractZeroPoint(std::vector<int64_t>& v, const std::vector<int64_t>& zp, int64_t inner,
                       int64_t axis_size) {
  if (zp.empty()) return;
  for (size_t i = 0; i < v.size(); ++i) {
    size_t z = zp.size() == 1 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % axis_size);
    v[i] -= zp[std::min(z, zp.size() - 1)];
  }
}

// (A - a_zp)·(B - b_zp) in int64, for MatMulInteger and QLinearMatMul.
absl::StatusOr<std::vector<int64_t>> QuantizedProduct(KernelContext& ctx, size_t a_i, size_t azp_i,
                                                      size_t b_i, size_t bzp_i,
                                                      std::vector<int64_t>* dims) {
  const Tensor& a = ctx.input(a_i);
  const Tensor& b = ctx.input(b_i);
  if (!IsQuant8DType(a.dtype()) || !IsQuant8DType(b.dtype())) {
    return ctx.Unimplemented("quantized operands must be int8/uint8");
  }
  if (a.rank() < 1 || b.rank() < 1) return ctx.Error("operands must have rank >= 1");
  std::vector<int64_t> va = TensorToInt64(a), vb = TensorToInt64(b);
  std::vector<int64_t> azp, bzp;
  if (ctx.has_input(azp_i)) azp = TensorToInt64(ctx.input(azp_i));
  if (ctx.has_input(bzp_i)) bzp = TensorToInt64(ctx.input(bzp_i));
  int64_t m = a.rank() >= 2 ? a.dim(a.rank() - 2) : 1;
  int64_t n = b.rank() >= 2 ? b.dim(b.rank() - 1) : 1;
  SubtractZeroPoint(va, azp, a.dim(a.rank() - 1), m);
  SubtractZeroPoint(vb, bzp, 1, n);
  auto c = BatchedMatMul(va, a.dims(), vb, b.dims(), dims);
  if (!c.ok()) return ctx.Error(c.status().message());
  return c;
}

absl::Status MatMulIntegerKernel(KernelContext& ctx) {
  std::vector<int64_t> dims;
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> c, QuantizedProduct(ctx, 0, 2, 1, 3, &dims));
  ctx.set_output(0, Int64ToTensor(c, dims, DType::kInt32));
  return absl::OkStatus();
}

// inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
// [, bias]: QLinearMatMul, and ai.aic's QLinearMatMulBias with an int32 bias
// of N values added to the integer product before it is rescaled (as
// QLinearConv's B).
absl::Status QLinearMatMulKernel(KernelContext& ctx) {
  std::vector<int64_t> dims;
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> c, QuantizedProduct(ctx, 0, 2, 3, 5, &dims));
  if (ctx.has_input(8)) {
    const Tensor& bias = ctx.input(8);
    int64_t cols = dims.empty() ? 1 : dims.back();
    if (bias.dtype() != DType::kInt32 || bias.num_elements() != cols) {
      return ctx.Error(absl::StrCat("bias must be int32 with one value per column (", cols, ")"));
    }
    std::vector<int64_t> b = TensorToInt64(bias);
    for (size_t i = 0; i < c.size(); ++i) c[i] += b[i % static_cast<size_t>(cols)];
  }
  std::vector<double> as = TensorToDoubles(ctx.input(1)), bs = TensorToDoubles(ctx.input(4));
  std::vector<double> ys = TensorToDoubles(ctx.input(6));
  if (as.empty() || bs.empty() || ys.empty()) return ctx.Error("empty scale");
  DType out_dtype = ctx.input(7).dtype();
  int64_t yzp = TensorToInt64(ctx.input(7)).at(0);
  int64_t n = dims.empty() ? 1 : dims.back();
  int64_t m = dims.size() >= 2 ? dims[dims.size() - 2] : 1;
  std::vector<int64_t> y(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    int64_t col = static_cast<int64_t>(i) % n, row = (static_cast<int64_t>(i) / n) % m;
    // Scales are float32 in the spec: multiply in float as the reference does.
    float a_s = static_cast<float>(as[as.size() == 1 ? 0 : static_cast<size_t>(row)]);
    float b_s = static_cast<float>(bs[bs.size() == 1 ? 0 : static_cast<size_t>(col)]);
    double scale = static_cast<double>(a_s * b_s) / ys[0];
    y[i] = QuantizeValue(static_cast<double>(c[i]) * scale, yzp, out_dtype);
  }
  ctx.set_output(0, Int64ToTensor(y, dims, out_dtype));
  return absl::OkStatus();
}

Traits QuantizedMatMulTraits(const OpContext& ctx, size_t b_index) {
  Traits t = ProductTraits(ctx, 0, b_index);
  t.meaning += " on zero-point-shifted integers";
  return t;
}

}  // namespace

void RegisterMatMulOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "", .op_type = "MatMul",
                   .since_version = 1,
                   .infer = [](OpContext& ctx) { return InferMatMul(ctx, ctx.input_dtype(0)); },
                   .traits = MatMulTraits,
                   .cost = MatMulCost,
                   .kernel = MatMulKernel});
  r.Register(OpDef{.domain = "", .op_type = "Gemm",
                   .since_version = 1,
                   .infer = InferGemm,
                   .traits = GemmTraits,
                   .cost = GemmCost,
                   .kernel = GemmKernel});
  r.Register(OpDef{.domain = "", .op_type = "MatMulInteger",
                   .since_version = 10,
                   .infer = [](OpContext& ctx) { return InferMatMul(ctx, DType::kInt32); },
                   .traits = [](const OpContext& ctx) { return QuantizedMatMulTraits(ctx, 1); },
                   .cost = MatMulCost,
                   .kernel = MatMulIntegerKernel});
  r.Register(OpDef{.domain = "", .op_type = "QLinearMatMul",
                   .since_version = 10,
                   .infer =
                       [](OpContext& ctx) {
                         AIC_ASSIGN_OR_RETURN(
                             Shape s, MatMulShape(ctx, ctx.input_shape(0), ctx.input_shape(3)));
                         ctx.set_output(0, ctx.input_dtype(7), std::move(s));
                         return absl::OkStatus();
                       },
                   .traits = [](const OpContext& ctx) { return QuantizedMatMulTraits(ctx, 3); },
                   .cost =
                       [](const OpContext& ctx) {
                         Cost c = BytesOnlyCost(ctx, {3});
                         int64_t macs = MatMulMacs(ctx.input_shape(0), ctx.input_shape(3),
                                                   ctx.output_type(0).shape);
                         if (macs < 0) c.known = false;
                         c.macs = std::max<int64_t>(macs, 0);
                         c.flops = 2 * c.macs;
                         return c;
                       },
                   .kernel = QLinearMatMulKernel});
  // What a session makes of quantize_static's Q(Gemm(DQ(a), DQ(w), DQ(bias)))
  // (rewrite/rules/quantized_rules.cc): QLinearMatMul with QLinearConv's
  // int32 bias, which no standard op carries.
  OpDef with_bias = *r.Find("", "QLinearMatMul", 10);
  with_bias.domain = kAicDomain;
  with_bias.op_type = "QLinearMatMulBias";
  with_bias.since_version = 1;
  r.Register(with_bias);
  RegisterEinsumOp(r);
}

}  // namespace aic

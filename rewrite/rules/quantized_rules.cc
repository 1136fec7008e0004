// QDQ patterns as the QOperator ops they stand for, for targets that run
// those ops in int8 (OptimizeOptions::qoperator_ops; a session on the CPU
// backend). A statically quantized model (onnxruntime.quantization's
// quantize_static) computes each Conv in float between a DequantizeLinear of
// every operand and a QuantizeLinear of the result; the int8 op computes the
// same function on the integers directly. Files (`opt`) keep QDQ form: ONNX
// Runtime runs it as int8 already, and a QOperator model is harder to read.
//
//   xq   wq   bq            xq  wq  bq
//   |    |    |              \  |  /
//   DQ   DQ   DQ    ->     QLinearConv
//     \  |  /                   |
//      Conv                     yq
//       |
//       Q -> yq
#include <cmath>
#include <optional>

#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

bool IsEightBit(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

// The operands of a DequantizeLinear/QuantizeLinear e-node with constant f32
// scale and constant zero point (absent: none).
struct QuantParams {
  ClassId q = kNoClass;  // the quantized (DQ) or float (Q) input
  ClassId scale = kNoClass, zero = kNoClass;
  std::vector<double> scales;
  std::vector<double> zeros;  // empty when the zero point is absent
};

// Why each guard: the QOperator ops take one scale per tensor (weights: one
// per output channel too), constant ones (the kernel precomputes its
// requantization), and nothing of opset 21's blocked quantization.
std::optional<QuantParams> ConstQuantParams(const EGraph& g, const ENode& n) {
  if (n.op->GetInt("block_size", 0) != 0 || n.op->FindAttr("output_dtype") != nullptr) return std::nullopt;
  QuantParams p;
  p.q = Child(g, n, 0);
  p.scale = Child(g, n, 1);
  p.zero = Child(g, n, 2);
  const Tensor* s = p.scale == kNoClass ? nullptr : g.value(p.scale);
  if (s == nullptr || s->dtype() != DType::kFloat || s->num_elements() == 0) return std::nullopt;
  p.scales = ToDoubles(*s);
  if (p.zero != kNoClass) {
    const Tensor* z = g.value(p.zero);
    if (z == nullptr || z->num_elements() != s->num_elements()) return std::nullopt;
    p.zeros = ToDoubles(*z);
  }
  return p;
}

// QuantizeLinear(Conv(DequantizeLinear(xq, xs, xz), DequantizeLinear(wq, ws, wz),
//   DequantizeLinear(bq, xs*ws)), ys, yz) -> QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bq)
ClassId FuseQdqConv(RuleContext& ctx, ClassId /*cls*/, const ENode& q) {
  EGraph& g = ctx.g;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  // Why: QLinearConv's y_scale is one scalar, and its output type is
  // y_zero_point's (an absent one would be uint8 0: kept simple, declined).
  if (!y || y->scales.size() != 1 || y->zero == kNoClass) return ctx.Decline("y scale/zero point not constant scalars");
  if (!IsEightBit(g.type(y->zero).dtype)) return ctx.Decline("y is not 8-bit");
  for (const ENode* conv : g.FindOps(y->q, "Conv")) {
    ClassId xc = Child(g, *conv, 0), wc = Child(g, *conv, 1), bc = Child(g, *conv, 2);
    const ENode* xdq = g.FindOp(xc, "DequantizeLinear");
    const ENode* wdq = g.FindOp(wc, "DequantizeLinear");
    if (xdq == nullptr || wdq == nullptr) {
      ctx.Decline("Conv operands are not DequantizeLinear");
      continue;
    }
    std::optional<QuantParams> x = ConstQuantParams(g, *xdq);
    std::optional<QuantParams> w = ConstQuantParams(g, *wdq);
    if (!x || x->scales.size() != 1 || !w) {
      ctx.Decline("x scale not a constant scalar, or w scale not constant");
      continue;
    }
    // Why int8 weights with zero points 0 only: that is what int8 kernels
    // (oneDNN's, ONNX Runtime's) multiply fast, and what quantize_static
    // writes by default; other weights stay QDQ and compute in float.
    if (!IsEightBit(g.type(x->q).dtype) || g.type(w->q).dtype != DType::kInt8 || g.value(w->q) == nullptr) {
      ctx.Decline("x not 8-bit, or w not constant int8");
      continue;
    }
    bool symmetric = true;
    for (double z : w->zeros) symmetric = symmetric && z == 0;
    if (!symmetric) {
      ctx.Decline("w zero point not 0");
      continue;
    }
    const Tensor* wt = g.value(w->q);
    if (wt->rank() < 3) {
      ctx.Decline("w rank below 3");
      continue;
    }
    int64_t m = wt->dim(0);
    int64_t w_axis = wdq->op->GetInt("axis", 1);
    // Why: QLinearConv's w_scale is per tensor or per output channel (axis 0).
    if (w->scales.size() != 1 && (static_cast<int64_t>(w->scales.size()) != m || (w_axis != 0 && w_axis != -wt->rank()))) {
      ctx.Decline("w scale neither per tensor nor per output channel");
      continue;
    }
    ClassId bq = kNoClass;
    if (bc != kNoClass) {
      const ENode* bdq = g.FindOp(bc, "DequantizeLinear");
      std::optional<QuantParams> b = bdq == nullptr ? std::nullopt : ConstQuantParams(g, *bdq);
      if (!b || g.type(b->q).dtype != DType::kInt32 || g.value(b->q) == nullptr) {
        ctx.Decline("bias is not a constant int32 DequantizeLinear");
        continue;
      }
      // Why: QLinearConv adds B to the int32 accumulator, whose scale is
      // xs*ws[c]; quantize_static writes the bias at exactly that scale.
      bool matches = b->scales.size() == 1 || static_cast<int64_t>(b->scales.size()) == m;
      for (double z : b->zeros) matches = matches && z == 0;
      for (int64_t c = 0; matches && c < m; ++c) {
        double want = static_cast<double>(static_cast<float>(x->scales[0]) *
                                          static_cast<float>(w->scales[w->scales.size() == 1 ? 0 : c]));
        double have = b->scales[b->scales.size() == 1 ? 0 : c];
        matches = std::abs(have - want) <= 1e-6 * std::abs(want);
      }
      if (!matches) {
        ctx.Decline("bias scale is not x_scale * w_scale");
        continue;
      }
      bq = b->q;
    }
    // Absent zero points are zero; QLinearConv wants x's and w's given (of
    // the operand's type) when y's is.
    if (x->zero == kNoClass || w->zero == kNoClass) {
      ctx.Decline("x or w zero point absent");
      continue;
    }
    std::vector<ClassId> children = {x->q, x->scale, x->zero, w->q, w->scale, w->zero, y->scale, y->zero};
    if (bq != kNoClass) children.push_back(bq);
    return g.AddOp("QLinearConv", "", children, conv->op->attributes);
  }
  return kNoClass;
}

}  // namespace

void AddQuantizedRules(std::vector<Rule>& rules) {
  // Reassociating: the int8 op rounds once where QDQ rounds the float conv
  // and then quantizes; results agree within one quantization step.
  Rule r{"fuse_qdq_conv",
         "QuantizeLinear(Conv(DQ(xq), DQ(wq), DQ(bq))) -> QLinearConv(xq, .., wq, .., bq)",
         "QuantizeLinear", Exactness::kReassociating, 10, FuseQdqConv};
  r.qoperator_op = "QLinearConv";
  rules.push_back(r);
}

}  // namespace aic::rewrite

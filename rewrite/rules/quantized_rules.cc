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
//
// and Q(MatMul(DQ(aq), DQ(bq))) with a constant int8 bq as QLinearMatMul.
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ops/evaluate.h"
#include "ops/fused/standard_aliases.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

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

// The bias operand of a quantized product or convolution: DQ(bq) with bq a
// constant int32, zero points 0 and scales a_scale * w_scale[c] for each of
// the `m` output channels, as quantize_static writes it (QLinearConv and
// QLinearMatMulBias add bq to the int32 accumulator, whose scale that is).
// kNoClass (with *why set) when the operand is anything else.
ClassId IntegerBias(const EGraph& g, ClassId bc, const QuantParams& x, const QuantParams& w, int64_t m,
                    const char** why) {
  const ENode* bdq = g.FindOp(bc, "DequantizeLinear");
  std::optional<QuantParams> b = bdq == nullptr ? std::nullopt : ConstQuantParams(g, *bdq);
  if (!b || g.type(b->q).dtype != DType::kInt32 || g.value(b->q) == nullptr ||
      g.value(b->q)->num_elements() != m) {
    *why = "bias is not a constant int32 DequantizeLinear";
    return kNoClass;
  }
  bool matches = b->scales.size() == 1 || static_cast<int64_t>(b->scales.size()) == m;
  for (double z : b->zeros) matches = matches && z == 0;
  for (int64_t c = 0; matches && c < m; ++c) {
    double want = static_cast<double>(static_cast<float>(x.scales[0]) *
                                      static_cast<float>(w.scales[w.scales.size() == 1 ? 0 : c]));
    double have = b->scales[b->scales.size() == 1 ? 0 : c];
    matches = std::abs(have - want) <= 1e-6 * std::abs(want);
  }
  if (!matches) {
    *why = "bias scale is not x_scale * w_scale";
    return kNoClass;
  }
  return b->q;
}

// QuantizeLinear(Conv(DequantizeLinear(xq, xs, xz), DequantizeLinear(wq, ws, wz),
//   DequantizeLinear(bq, xs*ws)), ys, yz) -> QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bq)
ClassId FuseQdqConv(RuleContext& ctx, ClassId /*cls*/, const ENode& q) {
  EGraph& g = ctx.g;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  // Why: QLinearConv's y_scale is one scalar, and its output type is
  // y_zero_point's (an absent one would be uint8 0: kept simple, declined).
  if (!y || y->scales.size() != 1 || y->zero == kNoClass) return ctx.Decline("y scale/zero point not constant scalars");
  if (!IsEightBitInteger(g.type(y->zero).dtype)) return ctx.Decline("y is not 8-bit");
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
    if (!IsEightBitInteger(g.type(x->q).dtype) || g.type(w->q).dtype != DType::kInt8 || g.value(w->q) == nullptr) {
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
      const char* why = nullptr;
      bq = IntegerBias(g, bc, *x, *w, m, &why);
      if (bq == kNoClass) {
        ctx.Decline(why);
        continue;
      }
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

// QuantizeLinear(P(DequantizeLinear(aq, as, az), DequantizeLinear(bq, bs)[, DQ(cq)]), ys, yz)
//   -> QLinearMatMul(aq, as, az, bq, bs, bz, ys, yz)
//      (P = MatMul, or Gemm without a C)
//   -> ai.aic QLinearMatMulBias(aq, as, az, bq, bs, bz, ys, yz, cq)
//      (P = Gemm with C = DQ(cq), cq int32 at scale as*bs)
// with bq a constant int8 matrix [K, N] quantized symmetrically per tensor or
// per column: the weight products of quantize_static's transformers (ONNX
// Runtime's pre-processing turns MatMul + Add into Gemm); their
// activation-by-activation products, attention scores, stay QDQ.
ClassId FuseQdqMatMul(RuleContext& ctx, ClassId /*cls*/, const ENode& q) {
  EGraph& g = ctx.g;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  // Why: QLinearMatMul's y_scale is one scalar and its output type is
  // y_zero_point's.
  if (!y || y->scales.size() != 1 || y->zero == kNoClass) return ctx.Decline("y scale/zero point not constant scalars");
  if (!IsEightBitInteger(g.type(y->zero).dtype)) return ctx.Decline("y is not 8-bit");
  std::vector<const ENode*> products = g.FindOps(y->q, "MatMul");
  for (const ENode* gemm : g.FindOps(y->q, "Gemm")) products.push_back(gemm);
  for (const ENode* mm : products) {
    const bool is_gemm = mm->op->op_type == "Gemm";
    // Why: a Gemm is a plain product plus C only without transposes and scales.
    if (is_gemm && (mm->op->GetInt("transA", 0) != 0 || mm->op->GetInt("transB", 0) != 0 ||
                    mm->op->GetFloat("alpha", 1.0f) != 1.0f || mm->op->GetFloat("beta", 1.0f) != 1.0f)) {
      ctx.Decline("Gemm transposes or scales");
      continue;
    }
    const ENode* adq = g.FindOp(Child(g, *mm, 0), "DequantizeLinear");
    const ENode* bdq = g.FindOp(Child(g, *mm, 1), "DequantizeLinear");
    if (adq == nullptr || bdq == nullptr) {
      ctx.Decline("product operands are not DequantizeLinear");
      continue;
    }
    std::optional<QuantParams> a = ConstQuantParams(g, *adq);
    std::optional<QuantParams> b = ConstQuantParams(g, *bdq);
    // Why a scalar a scale: a per-row one would be per row of every matrix,
    // which no DequantizeLinear of an activation writes.
    if (!a || a->scales.size() != 1 || a->zero == kNoClass || !b || b->zero == kNoClass) {
      ctx.Decline("a scale/zero point not constant scalars, or b's not constant");
      continue;
    }
    const Tensor* bt = g.value(b->q);
    if (!IsEightBitInteger(g.type(a->q).dtype) || bt == nullptr || bt->dtype() != DType::kInt8 || bt->rank() != 2) {
      ctx.Decline("a not 8-bit, or b not a constant int8 matrix");
      continue;
    }
    bool symmetric = true;
    for (double z : b->zeros) symmetric = symmetric && z == 0;
    if (!symmetric) {
      ctx.Decline("b zero point not 0");
      continue;
    }
    // Why: QLinearMatMul's b_scale is per tensor or per column (axis 1).
    int64_t cols = bt->dim(1);
    int64_t b_axis = bdq->op->GetInt("axis", 1);
    if (b->scales.size() != 1 && (static_cast<int64_t>(b->scales.size()) != cols || (b_axis != 1 && b_axis != -1))) {
      ctx.Decline("b scale neither per tensor nor per column");
      continue;
    }
    std::vector<ClassId> children = {a->q, a->scale, a->zero, b->q, b->scale, b->zero, y->scale, y->zero};
    ClassId cc = is_gemm ? Child(g, *mm, 2) : kNoClass;
    if (cc == kNoClass) return g.AddOp("QLinearMatMul", "", children, {});
    if (!ctx.options.AllowsAic("QLinearMatMulBias")) {
      ctx.Decline("Gemm with C, and the target has no QLinearMatMulBias");
      continue;
    }
    const char* why = nullptr;
    ClassId cq = IntegerBias(g, cc, *a, *b, cols, &why);
    if (cq == kNoClass) {
      ctx.Decline(why);
      continue;
    }
    children.push_back(cq);
    return g.AddOp("QLinearMatMulBias", kAicDomain, children, {});
  }
  return kNoClass;
}

// QuantizeLinear(M(DequantizeLinear(xq, s, z), ..), s, z) -> M(xq, ..) for an op
// M that only moves or selects values (Reshape, Transpose, Slice, Gather,
// ...): quantize_static wraps each of them in DQ -> M -> Q with the
// quantization of its input, so the pair is the identity on xq
// (Q(DQ(q)) = q: (q - z)·s is within an ulp of an integer multiple of s,
// far from a rounding tie) and M commutes with the elementwise DQ. The
// integers move instead of four times as many float bytes, and two steps go.
ClassId DropQdqAroundDataMovement(RuleContext& ctx, ClassId cls, const ENode& q) {
  static constexpr const char* kMovers[] = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
                                            "Slice",   "Gather",    "Expand",  "Identity",  "DepthToSpace",
                                            "SpaceToDepth"};
  EGraph& g = ctx.g;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  // Why per tensor only: a per-axis scale follows its axis, which a
  // Transpose or Reshape moves.
  if (!y || y->scales.size() != 1) return ctx.Decline("y scale not a constant scalar");
  const DType qtype = g.type(cls).dtype;
  for (const char* mover : kMovers) {
    for (const ENode* m : g.FindOps(y->q, mover)) {
      const ENode* dq = g.FindOp(Child(g, *m, 0), "DequantizeLinear");
      if (dq == nullptr) continue;
      std::optional<QuantParams> x = ConstQuantParams(g, *dq);
      if (!x || x->scales.size() != 1 || g.type(x->q).dtype != qtype) {
        ctx.Decline("x not quantized per tensor to y's type");
        continue;
      }
      // Bitwise the same scale, and the same zero point (absent is 0).
      double xz = x->zeros.empty() ? 0 : x->zeros[0], yz = y->zeros.empty() ? 0 : y->zeros[0];
      if (static_cast<float>(x->scales[0]) != static_cast<float>(y->scales[0]) || xz != yz) {
        ctx.Decline("DQ and Q quantize differently");
        continue;
      }
      std::vector<ClassId> children = m->children;
      children[0] = x->q;
      return g.AddOpLike(*m->op, std::move(children), 1);
    }
  }
  return kNoClass;
}

// QuantizeLinear(Relu(x), s, z) -> QuantizeLinear(x, s, z) where every zero
// point is its integer type's lowest value and every scale positive: a
// negative x quantizes to round(x / s) + z <= z, which saturates to z, what
// Relu's 0 quantizes to (NaN stays NaN through Relu either way). Quantizers
// other than quantize_static keep the Relu between a Conv and its
// QuantizeLinear; without it the pair fuses into QLinearConv (fuse_qdq_conv),
// and in a file one op less runs in float.
ClassId DropReluBeforeQuantizeAtMin(RuleContext& ctx, ClassId cls, const ENode& q) {
  EGraph& g = ctx.g;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  if (!y) return ctx.Decline("scale or zero point not constant");
  double lowest = 0;  // an absent zero point is uint8's 0
  switch (g.type(cls).dtype) {
    case DType::kUint8:
    case DType::kUint16:
      lowest = 0;
      break;
    case DType::kInt8:
      lowest = -128;
      break;
    case DType::kInt16:
      lowest = -32768;
      break;
    default:
      return ctx.Decline("not an 8- or 16-bit integer quantization");
  }
  for (double z : y->zeros) {
    if (z != lowest) return ctx.Decline("a zero point above the type's lowest value");
  }
  for (double sc : y->scales) {
    if (!(sc > 0) || !std::isfinite(sc)) return ctx.Decline("a scale not positive and finite");
  }
  for (const ENode* relu : g.FindOps(y->q, "Relu")) {
    std::vector<ClassId> children = q.children;
    children[0] = Child(g, *relu, 0);
    return g.AddOpLike(*q.op, std::move(children), 1);
  }
  return kNoClass;
}

// The 256 values of an elementwise expression of one 8-bit tensor x, found by
// running the reference kernels of its e-nodes on the tensor of all 256
// values of x: what QLinearLookup tabulates. The expression's leaves are x
// (first met under a DequantizeLinear) and scalar constants; its ops compute
// each element from the same element of their inputs.
class TableWalk {
 public:
  explicit TableWalk(const EGraph& g) : g_(g) {}
  ClassId x() const { return x_; }
  std::optional<Tensor> Eval(ClassId c, int depth) {
    c = g_.Find(c);
    if (c == x_) return iota_;
    if (const Tensor* v = g_.value(c)) {
      if (v->num_elements() != 1) return std::nullopt;  // broadcast per channel: not one function
      return *v;
    }
    if (depth > 16 || --budget_ < 0) return std::nullopt;
    if (auto it = memo_.find(c); it != memo_.end()) return it->second;
    std::optional<Tensor> out;
    for (int32_t i : g_.data(c).nodes) {
      const ENode& n = g_.node(i);
      if (n.kind != ENodeKind::kOp || !Pointwise(*n.op)) continue;
      const ClassId x_before = x_;
      if (x_ == kNoClass && n.op->op_type == "DequantizeLinear" && !n.children.empty()) {
        ClassId q = g_.Find(n.children[0]);
        if (g_.value(q) == nullptr && IsEightBitInteger(g_.type(q).dtype)) SetX(q);
      }
      out = EvalNode(n, depth);
      if (out) break;
      if (x_ != x_before) {  // a failed try does not choose x, nor what it computed with it
        x_ = x_before;
        memo_.clear();
      }
    }
    memo_[c] = out;
    return out;
  }

 private:
  // Ops whose output element i is a function of element i of each input
  // (inputs other than x being scalars here), deterministic, in one dtype
  // family the reference kernels compute.
  static bool Pointwise(const Node& op) {
    static const auto* kOps = new absl::flat_hash_set<std::string>{
        "Relu",     "LeakyRelu", "HardSigmoid", "HardSwish", "Sigmoid",  "Tanh",     "Clip",  "Abs",
        "Neg",      "Exp",       "Log",         "Sqrt",      "Elu",      "Selu",     "Celu",  "Gelu",
        "Erf",      "Softplus",  "Softsign",    "Mish",      "Add",      "Sub",      "Mul",   "Div",
        "Max",      "Min",       "Pow",         "Floor",     "Ceil",     "Round",    "Identity",
        "QuantizeLinear", "DequantizeLinear", "Reciprocal", "ThresholdedRelu", "Shrink", "PRelu"};
    if (op.domain == kAicDomain) return op.op_type == "QLinearLookup";
    return op.domain.empty() && kOps->count(op.op_type) > 0 && op.GetInt("block_size", 0) == 0;
  }
  void SetX(ClassId q) {
    x_ = q;
    DType t = g_.type(q).dtype;
    iota_ = Tensor(t, {256});
    for (int v = 0; v < 256; ++v) {
      if (t == DType::kUint8) {
        iota_.mutable_data<uint8_t>()[v] = static_cast<uint8_t>(v);
      } else {
        iota_.mutable_data<int8_t>()[v] = static_cast<int8_t>(v - 128);
      }
    }
  }
  std::optional<Tensor> EvalNode(const ENode& n, int depth) {
    std::vector<Tensor> held;
    held.reserve(n.children.size());
    std::vector<TypeInfo> types;
    for (ClassId child : n.children) {
      if (child == kNoClass) {
        held.emplace_back();
        types.emplace_back();
        continue;
      }
      std::optional<Tensor> v = Eval(child, depth + 1);
      if (!v) return std::nullopt;
      types.push_back(TypeInfo::Tensor(v->dtype(), Shape::FromValues(v->dims())));
      held.push_back(std::move(*v));
    }
    std::vector<const Tensor*> values;
    for (size_t i = 0; i < held.size(); ++i) values.push_back(n.children[i] == kNoClass ? nullptr : &held[i]);
    Evaluation e = EvaluateNode(*n.op, g_.opset(), types, values);
    if (e.values.empty() || !e.values[0] || e.values[0]->num_elements() != 256) return std::nullopt;
    return std::move(*e.values[0]);
  }

  const EGraph& g_;
  ClassId x_ = kNoClass;
  Tensor iota_;
  int budget_ = 64;  // e-nodes evaluated per match
  absl::flat_hash_map<ClassId, std::optional<Tensor>> memo_;
};

// Whether class c already holds the ai.aic op `op_type` (a rule that made it
// need not match again).
bool HasAicOp(const EGraph& g, ClassId c, const char* op_type) {
  for (int32_t i : g.data(c).nodes) {
    const ENode& n = g.node(i);
    if (n.kind == ENodeKind::kOp && n.op->domain == kAicDomain && n.op->op_type == op_type) return true;
  }
  return false;
}

// QuantizeLinear(f(DequantizeLinear(xq, ..)), ys, yz) -> ai.aic QLinearLookup(xq, table)
// for f any pointwise expression of xq alone (HardSigmoid, HardSwish as
// quantize_static leaves it, x·HardSigmoid(x) through its own Q/DQ pair, a
// requantization): 256 bytes replace the float round trip.
ClassId FuseQdqLookup(RuleContext& ctx, ClassId cls, const ENode& q) {
  EGraph& g = ctx.g;
  if (!IsEightBitInteger(g.type(cls).dtype)) return ctx.Decline("y is not 8-bit");
  if (q.op->GetInt("block_size", 0) != 0) return ctx.Decline("blocked quantization");
  if (HasAicOp(g, cls, "QLinearLookup")) return kNoClass;
  TableWalk walk(g);
  std::optional<Tensor> table = walk.Eval(cls, 0);
  if (!table || walk.x() == kNoClass) return ctx.Decline("not a pointwise expression of one 8-bit tensor");
  // Why: a leaf of higher rank than x would broadcast x to a bigger shape.
  const Shape* xs = RankedShape(g, walk.x());
  const Shape* ys = RankedShape(g, cls);
  if (xs == nullptr || ys == nullptr || !SameShape(*xs, *ys)) return ctx.Decline("output shape differs from x's");
  if (table->dtype() != g.type(cls).dtype) return ctx.Decline("table type differs from y's");
  return g.AddOp("QLinearLookup", kAicDomain, {walk.x(), g.AddConst(table->WithDims({256}))}, {});
}

// QuantizeLinear([Relu](P(DequantizeLinear(aq, as, az), DequantizeLinear(bq, bs, bz))), ys, yz)
//   -> ai.aic QLinearAdd / QLinearMul(aq, as, az, bq, bs, bz, ys, yz, fuse_relu)
// for P = Add or Mul with per-tensor constant parameters: a residual add, an
// SE block's scaling, the product of a HardSwish. Exactly the float ops the
// pattern computes, in one pass over the integers.
template <bool kAdd>
ClassId FuseQdqBinary(RuleContext& ctx, ClassId cls, const ENode& q) {
  EGraph& g = ctx.g;
  if (HasAicOp(g, cls, kAdd ? "QLinearAdd" : "QLinearMul")) return kNoClass;
  std::optional<QuantParams> y = ConstQuantParams(g, q);
  if (!y || y->scales.size() != 1 || y->zero == kNoClass) return ctx.Decline("y scale/zero point not constant scalars");
  if (!IsEightBitInteger(g.type(y->zero).dtype)) return ctx.Decline("y is not 8-bit");
  std::vector<std::pair<ClassId, bool>> sums = {{y->q, false}};
  for (const ENode* relu : g.FindOps(y->q, "Relu")) sums.push_back({Child(g, *relu, 0), true});
  for (const auto& [sum, relu] : sums) {
    for (const ENode* p : g.FindOps(sum, kAdd ? "Add" : "Mul")) {
      const ENode* adq = g.FindOp(Child(g, *p, 0), "DequantizeLinear");
      const ENode* bdq = g.FindOp(Child(g, *p, 1), "DequantizeLinear");
      if (adq == nullptr || bdq == nullptr) continue;
      std::optional<QuantParams> a = ConstQuantParams(g, *adq);
      std::optional<QuantParams> b = ConstQuantParams(g, *bdq);
      if (!a || !b || a->scales.size() != 1 || b->scales.size() != 1 || a->zero == kNoClass || b->zero == kNoClass ||
          !IsEightBitInteger(g.type(a->q).dtype) || !IsEightBitInteger(g.type(b->q).dtype)) {
        ctx.Decline("operands not 8-bit DequantizeLinear with constant scalar parameters");
        continue;
      }
      std::vector<ClassId> children = {a->q, a->scale, a->zero, b->q, b->scale, b->zero, y->scale, y->zero};
      return g.AddOp(kAdd ? "QLinearAdd" : "QLinearMul", kAicDomain, children,
                     {Attribute::Int("fuse_relu", relu ? 1 : 0)});
    }
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
  Rule mm{"fuse_qdq_matmul",
          "QuantizeLinear(MatMul(DQ(aq), DQ(bq const int8))) -> QLinearMatMul(aq, .., bq, .., ys, yz)",
          "QuantizeLinear", Exactness::kReassociating, 10, FuseQdqMatMul};
  mm.qoperator_op = "QLinearMatMul";
  rules.push_back(mm);
  rules.push_back({"drop_relu_before_quantize_at_min",
                   "QuantizeLinear(Relu(x), s > 0, z = type's lowest) -> QuantizeLinear(x, s, z)", "QuantizeLinear",
                   Exactness::kExact, 1, DropReluBeforeQuantizeAtMin});
  rules.push_back({"drop_qdq_around_data_movement",
                   "QuantizeLinear(M(DQ(xq, s, z), ..), s, z) -> M(xq, ..) for Reshape, Transpose, Slice, Gather, ...",
                   "QuantizeLinear", Exactness::kExact, 1, DropQdqAroundDataMovement});
  // Both exact: they compute what the reference kernels of the pattern do.
  Rule lookup{"fuse_qdq_lookup",
              "QuantizeLinear(f(DQ(xq))) -> QLinearLookup(xq, table) for f pointwise in xq alone",
              "QuantizeLinear", Exactness::kExact, 1, FuseQdqLookup};
  lookup.aic_op = "QLinearLookup";
  lookup.aic_only = true;
  rules.push_back(lookup);
  Rule add{"fuse_qdq_add", "QuantizeLinear([Relu](Add(DQ(aq), DQ(bq)))) -> QLinearAdd(aq, .., bq, .., ys, yz)",
           "QuantizeLinear", Exactness::kExact, 1, FuseQdqBinary<true>};
  add.aic_op = "QLinearAdd";
  add.aic_only = true;
  rules.push_back(add);
  Rule mul{"fuse_qdq_mul", "QuantizeLinear([Relu](Mul(DQ(aq), DQ(bq)))) -> QLinearMul(aq, .., bq, .., ys, yz)",
           "QuantizeLinear", Exactness::kExact, 1, FuseQdqBinary<false>};
  mul.aic_op = "QLinearMul";
  mul.aic_only = true;
  rules.push_back(mul);
}

}  // namespace aic::rewrite

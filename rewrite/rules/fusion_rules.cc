// Fusions of a linear op with what follows it: BatchNormalization, a bias Add
// or a per-channel Mul folded into Conv's weights; MatMul + bias -> Gemm;
// Transposes folded into Gemm's flags; Pad folded into Conv's pads. New
// weights are computed in double, then rounded once.
#include <cmath>

#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

struct ConvParts {
  ClassId x, w, b;
  const Tensor* wt;
  const Tensor* bt;  // null when the conv has no bias
};

// The Conv e-node of class c with constant float weights, if any.
const ENode* ConstConv(const EGraph& g, ClassId c, ConvParts& parts) {
  for (const ENode* n : g.FindOps(c, "Conv")) {
    ClassId w = Child(g, *n, 1);
    ClassId b = Child(g, *n, 2);
    const Tensor* wt = g.value(w);
    if (wt == nullptr || (wt->dtype() != DType::kFloat && wt->dtype() != DType::kDouble)) continue;
    const Tensor* bt = b == kNoClass ? nullptr : g.value(b);
    if (b != kNoClass && bt == nullptr) continue;
    parts = {Child(g, *n, 0), w, b, wt, bt};
    return n;
  }
  return nullptr;
}

// W with output channel o scaled by s[o], computed in double and rounded once.
template <typename T>
Tensor ScaleRows(const Tensor& w, const std::vector<double>& s) {
  Tensor out(w.dtype(), w.dims());
  absl::Span<const T> in = w.span<T>();
  T* dst = out.mutable_data<T>();
  int64_t m = static_cast<int64_t>(s.size());
  int64_t per = m == 0 ? 0 : static_cast<int64_t>(in.size()) / m;
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t k = 0; k < per; ++k) {
      dst[o * per + k] = static_cast<T>(static_cast<double>(in[o * per + k]) * s[o]);
    }
  }
  return out;
}

// Conv(x, W*s, b*s + t): the conv with its output channels scaled and shifted.
ClassId ScaledConv(EGraph& g, const ENode& conv, const ConvParts& p, const std::vector<double>& s,
                   const std::vector<double>& t) {
  int64_t m = p.wt->dim(0);
  bool unit = true;
  for (double v : s) unit = unit && v == 1.0;
  // Why: a pure bias change (Conv + Add) keeps W as it is; copying and
  // rehashing megabytes of unchanged weights dominated the optimizer's time.
  ClassId nw = unit ? p.w
                    : g.AddConst(p.wt->dtype() == DType::kFloat ? ScaleRows<float>(*p.wt, s)
                                                                : ScaleRows<double>(*p.wt, s));
  std::vector<double> b(m, 0.0);
  if (p.bt != nullptr) b = ToDoubles(*p.bt);
  for (int64_t o = 0; o < m; ++o) b[o] = b[o] * s[o] + t[o];
  ClassId nb = g.AddConst(FromDoubles(b, p.wt->dtype(), {m}));
  return g.AddOpLike(*conv.op, {p.x, nw, nb}, 1);
}

// BatchNormalization(Conv(x, W, b)) -> Conv(x, W*s, (b-mean)*s + beta),  s = gamma/sqrt(var+eps)
ClassId FuseConvBn(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (n.num_outputs != 1) return ctx.Decline("training outputs requested");
  ConvParts p;
  const ENode* conv = ConstConv(g, Child(g, n, 0), p);
  if (conv == nullptr) return ctx.Decline("input is not a Conv with constant weights");
  std::optional<ChannelAffine> bn = BatchNormAffineOf(g, n, p.wt->dim(0));
  if (!bn) return ctx.Decline("statistics not constant, or not one per output channel");
  return ScaledConv(g, *conv, p, bn->scale, bn->shift);
}

// Matches Conv(x, W, b) <op> c (either operand order) with c a constant per
// output channel; returns the conv e-node with its parts and c per channel.
const ENode* MatchConvPerChannel(EGraph& g, ClassId cls, const ENode& n, ConvParts& p,
                                 std::vector<double>& per_channel) {
  const ENode* conv = nullptr;
  bool matched = EitherOrder(g, n, [&](ClassId conved, ClassId operand) {
    conv = ConstConv(g, conved, p);
    const Tensor* c = g.value(operand);
    const Shape* out = RankedShape(g, cls);
    const Shape* conv_out = RankedShape(g, conved);
    if (conv == nullptr || c == nullptr || out == nullptr || conv_out == nullptr) return false;
    // Why: the op must not broadcast the conv output to a bigger shape.
    if (!SameShape(*out, *conv_out)) return false;
    per_channel = PerChannelValues(*c, out->rank(), p.wt->dim(0));
    return !per_channel.empty();
  });
  return matched ? conv : nullptr;
}

// Conv(x, W, b) + c -> Conv(x, W, b + c)   (c per output channel)
ClassId FuseConvAddBias(RuleContext& ctx, ClassId cls, const ENode& n) {
  ConvParts p;
  std::vector<double> t;
  const ENode* conv = MatchConvPerChannel(ctx.g, cls, n, p, t);
  if (conv == nullptr) return ctx.Decline("no Conv + per-channel constant");
  return ScaledConv(ctx.g, *conv, p, std::vector<double>(p.wt->dim(0), 1.0), t);
}

// Conv(x, W, b) * c -> Conv(x, W*c, b*c)   (c per output channel)
ClassId FuseConvMulScale(RuleContext& ctx, ClassId cls, const ENode& n) {
  ConvParts p;
  std::vector<double> s;
  const ENode* conv = MatchConvPerChannel(ctx.g, cls, n, p, s);
  if (conv == nullptr) return ctx.Decline("no Conv * per-channel constant");
  return ScaledConv(ctx.g, *conv, p, s, std::vector<double>(p.wt->dim(0), 0.0));
}

// MatMul(a, B) + c -> Gemm(a, B, c)   (a rank 2, B constant rank 2, c broadcasts to [N] or [M, N])
ClassId FuseMatMulAddIntoGemm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId a = kNoClass, b = kNoClass, c = kNoClass;
  bool matched = EitherOrder(g, n, [&](ClassId product, ClassId bias) {
    const ENode* mm = g.FindOp(product, "MatMul");
    if (mm == nullptr) return false;
    a = Child(g, *mm, 0);
    b = Child(g, *mm, 1);
    c = bias;
    const Shape* as = RankedShape(g, a);
    const Tensor* bt = g.value(b);
    const Tensor* ct = g.value(c);
    const Shape* out = RankedShape(g, cls);
    const Shape* mm_out = RankedShape(g, product);
    if (as == nullptr || as->rank() != 2 || bt == nullptr || bt->rank() != 2 || ct == nullptr) return false;
    if (!IsFloat(bt->dtype()) || ct->dtype() != bt->dtype()) return false;
    // Why: Gemm's C broadcasts one way only; the sum must keep MatMul's shape.
    if (out == nullptr || mm_out == nullptr || !SameShape(*out, *mm_out)) return false;
    return ct->rank() <= 2;
  });
  if (!matched) return ctx.Decline("no rank-2 MatMul with constant weight and bias");
  return g.AddOp("Gemm", "", {a, b, c});
}

// Gemm(Transpose(a), B) -> Gemm(a, B, transA=!transA)   (same for B)
ClassId FoldTransposeIntoGemm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  for (int k = 0; k < 2; ++k) {
    const ENode* t = g.FindOp(Child(g, n, k), "Transpose");
    if (t == nullptr) continue;
    std::vector<int64_t> perm = t->op->GetInts("perm");
    if (!perm.empty() && perm != std::vector<int64_t>{1, 0}) continue;
    const Shape* s = RankedShape(g, Child(g, *t, 0));
    if (s == nullptr || s->rank() != 2) continue;
    const char* flag = k == 0 ? "transA" : "transB";
    std::vector<Attribute> attrs = n.op->attributes;
    bool found = false;
    for (Attribute& a : attrs) {
      if (a.name == flag) {
        a.i = a.i ? 0 : 1;
        found = true;
      }
    }
    if (!found) attrs.push_back(Attribute::Int(flag, 1));
    std::vector<ClassId> children = n.children;
    children[k] = Child(g, *t, 0);
    return g.AddOp("Gemm", "", children, attrs);
  }
  return ctx.Decline("no 2-D Transpose input");
}

// Conv(Pad(x, p), W) -> Conv(x, W, pads += p)   (constant mode, zero value, spatial pads only)
ClassId FusePadIntoConv(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const ENode* pad = g.FindOp(Child(g, n, 0), "Pad");
  if (pad == nullptr) return ctx.Decline("input is not a Pad");
  if (pad->op->GetString("mode", "constant") != "constant") return ctx.Decline("pad mode not constant");
  std::optional<std::vector<std::pair<int64_t, int64_t>>> per_axis = PadsOfENode(g, *pad);
  if (!per_axis) return ctx.Decline("pads not constant");
  if (PadConstantOf(*pad->op, g.opset(), [&](size_t i) { return ChildValue(g, *pad, i); }) != 0.0) {
    return ctx.Decline("pad value not 0");
  }
  // As the Pad's own list: begins for every axis, then ends.
  std::vector<int64_t> pads(2 * per_axis->size());
  for (size_t a = 0; a < per_axis->size(); ++a) {
    pads[a] = (*per_axis)[a].first;
    pads[a + per_axis->size()] = (*per_axis)[a].second;
  }
  if (n.op->GetString("auto_pad", "NOTSET") != "NOTSET") return ctx.Decline("auto_pad");
  bool avg_pool = n.op->op_type == "AveragePool";
  // Why: with ceil_mode a window that would start in the right padding is
  // dropped, so pads of the pool's own give fewer outputs than the same
  // zeros as input elements (found by tests/graph_fuzz).
  if (avg_pool && n.op->GetInt("ceil_mode", 0) != 0) return ctx.Decline("ceil_mode");
  if (avg_pool && n.op->GetInt("count_include_pad", 0) == 0) {
    // Why: the Pad's zeros are real elements the average counts; its own pads
    // would not be counted unless count_include_pad is set, which is only
    // exact when the pool had no pads of its own.
    for (int64_t p : n.op->GetInts("pads")) {
      if (p != 0) return ctx.Decline("pool pads counted differently");
    }
  }
  int64_t rank = static_cast<int64_t>(pads.size()) / 2;
  if (rank < 3) return ctx.Decline("not a spatial pad");
  // Why: Conv pads only spatial axes, and never negatively.
  if (pads[0] || pads[1] || pads[rank] || pads[rank + 1]) return ctx.Decline("pads N or C");
  for (int64_t p : pads) {
    if (p < 0) return ctx.Decline("negative pad");
  }
  int64_t spatial = rank - 2;
  std::vector<int64_t> cp = n.op->GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int64_t>(cp.size()) != 2 * spatial) return ctx.Decline("conv pads malformed");
  for (int64_t i = 0; i < spatial; ++i) {
    cp[i] += pads[2 + i];
    cp[spatial + i] += pads[rank + 2 + i];
  }
  std::vector<Attribute> attrs = n.op->attributes;
  SetAttribute(attrs, Attribute::Ints("pads", cp));
  if (avg_pool) {
    // Why: ONNX Runtime refuses a pool whose pads reach its kernel size
    // ("Pad should be smaller than kernel"; found by tests/graph_fuzz).
    std::vector<int64_t> kernel = n.op->GetInts("kernel_shape");
    for (int64_t i = 0; i < spatial && i < static_cast<int64_t>(kernel.size()); ++i) {
      if (cp[i] >= kernel[i] || cp[spatial + i] >= kernel[i]) return ctx.Decline("pads would reach the kernel size");
    }
    SetAttribute(attrs, Attribute::Int("count_include_pad", 1));
  }
  std::vector<ClassId> children = n.children;
  children[0] = Child(g, *pad, 0);
  return g.AddOp(n.op->op_type, "", children, attrs);
}

// BatchNormalization(Gemm(a, B, c)) -> Gemm(a, B*s, (c-mean)*s + beta)   (per output column)
ClassId FuseBnIntoGemm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (n.num_outputs != 1) return ctx.Decline("training outputs requested");
  const ENode* gemm = g.FindOp(Child(g, n, 0), "Gemm");
  if (gemm == nullptr) return ctx.Decline("input is not a Gemm");
  const Tensor* bt = g.value(Child(g, *gemm, 1));
  if (bt == nullptr || bt->rank() != 2 || (bt->dtype() != DType::kFloat && bt->dtype() != DType::kDouble)) {
    return ctx.Decline("Gemm weight not a constant float matrix");
  }
  bool trans_b = gemm->op->GetInt("transB", 0) != 0;
  int64_t cols = trans_b ? bt->dim(0) : bt->dim(1);
  int64_t inner = trans_b ? bt->dim(1) : bt->dim(0);
  std::vector<double> bias(cols, 0.0);
  double beta_attr = gemm->op->GetFloat("beta", 1.0f);
  if (gemm->children.size() > 2 && gemm->children[2] != kNoClass) {
    const Tensor* ct = g.value(Child(g, *gemm, 2));
    // Why: only a per-column bias stays a per-column bias after scaling.
    if (ct == nullptr) return ctx.Decline("Gemm bias not constant");
    if (ct->num_elements() == 1) {
      bias.assign(cols, ct->ElementAsDouble(0) * beta_attr);
    } else if (ct->num_elements() == cols && ct->dim(ct->rank() - 1) == cols) {
      for (int64_t j = 0; j < cols; ++j) bias[j] = ct->ElementAsDouble(j) * beta_attr;
    } else {
      return ctx.Decline("Gemm bias not per column");
    }
  }
  std::optional<ChannelAffine> bn = BatchNormAffineOf(g, n, cols);
  if (!bn) return ctx.Decline("statistics not constant, or not one per output column");
  std::vector<double> w = ToDoubles(*bt);
  for (int64_t j = 0; j < cols; ++j) {
    double s = bn->scale[j];
    for (int64_t k = 0; k < inner; ++k) w[trans_b ? j * inner + k : k * cols + j] *= s;
    bias[j] = bias[j] * s + bn->shift[j];
  }
  ClassId nw = g.AddConst(FromDoubles(w, bt->dtype(), bt->dims()));
  ClassId nb = g.AddConst(FromDoubles(bias, bt->dtype(), {cols}));
  std::vector<Attribute> attrs;
  for (const Attribute& a : gemm->op->attributes) {
    if (a.name != "beta") attrs.push_back(a);
  }
  return g.AddOp("Gemm", "", {Child(g, *gemm, 0), nw, nb}, attrs);
}

}  // namespace

void AddFusionRules(std::vector<Rule>& rules) {
  rules.push_back({"fuse_conv_bn",
                   "BatchNormalization(Conv(x, W, b)) -> Conv(x, W*s, (b-mean)*s+beta)",
                   "BatchNormalization", Exactness::kReassociating, 1, FuseConvBn});
  rules.push_back({"fuse_bn_into_gemm",
                   "BatchNormalization(Gemm(a, B, c)) -> Gemm(a, B*s, (c-mean)*s+beta)", "BatchNormalization",
                   Exactness::kReassociating, 7, FuseBnIntoGemm});
  rules.push_back({"fuse_conv_add_bias", "Conv(x, W, b) + c -> Conv(x, W, b+c)", "Add",
                   Exactness::kReassociating, 1, FuseConvAddBias});
  rules.push_back({"fuse_conv_mul_scale", "Conv(x, W, b) * c -> Conv(x, W*c, b*c)", "Mul",
                   Exactness::kReassociating, 1, FuseConvMulScale});
  rules.push_back({"fuse_matmul_add_into_gemm", "MatMul(a, B) + c -> Gemm(a, B, c)", "Add",
                   Exactness::kReassociating, 7, FuseMatMulAddIntoGemm});
  rules.push_back({"fold_transpose_into_gemm", "Gemm(Transpose(a), B) -> Gemm(a, B, transA=1)",
                   "Gemm", Exactness::kExact, 1, FoldTransposeIntoGemm});
  rules.push_back({"fuse_pad_into_conv", "Conv(Pad(x, p), W) -> Conv(x, W, pads+p)", "Conv",
                   Exactness::kExact, 1, FusePadIntoConv});
  rules.push_back({"fuse_pad_into_pool",
                   "AveragePool(Pad(x, p)) -> AveragePool(x, pads+p, count_include_pad=1)", "AveragePool",
                   Exactness::kExact, 7, FusePadIntoConv});
}

}  // namespace aic::rewrite

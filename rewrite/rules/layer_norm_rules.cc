// LayerNormalization (opset >= 17) recognised in its decomposed form, as
// exporters that predate the op write it:
//   d = x - ReduceMean(x, axes=[-1]);  y = d / Sqrt(ReduceMean(d^2, axes=[-1]) + eps)
// (or d * Reciprocal(Sqrt(...)), as tf2onnx writes it)
// then a following `* gamma` and `+ beta` folded into its scale and bias.
// RMSNormalization (opset >= 23) likewise: x / Sqrt(ReduceMean(x^2) + eps),
// or x * Reciprocal(...) as torch writes rsqrt, then `* gamma`.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/math/reduce_axes.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Whether n is ReduceMean over the last axis only, with keepdims.
bool IsLastAxisMean(const EGraph& g, const ENode& n, int64_t rank) {
  if (n.op->GetInt("keepdims", 1) != 1) return false;
  // Why: where the axes are an input (ReduceMean-18), an `axes` attribute
  // is not the op's (which reduces every axis without the input).
  std::vector<int64_t> axes =
      ReduceAxesIsInput("ReduceMean", g.opset()) ? std::vector<int64_t>{} : n.op->GetInts("axes");
  if (n.children.size() > 1 && n.children[1] != kNoClass) {
    auto v = IntValues(g, Child(g, n, 1));
    if (!v) return false;
    axes = *v;
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// Sub(x, ReduceMean(x)) -> sets x.
bool IsCentered(const EGraph& g, ClassId d, ClassId& x) {
  for (const ENode* sub : g.FindOps(d, "Sub")) {
    ClassId cand = Child(g, *sub, 0);
    const Shape* s = RankedShape(g, cand);
    if (s == nullptr || s->rank() < 1) continue;
    for (const ENode* mean : g.FindOps(Child(g, *sub, 1), "ReduceMean")) {
      if (Child(g, *mean, 0) == cand && IsLastAxisMean(g, *mean, s->rank())) {
        x = cand;
        return true;
      }
    }
  }
  return false;
}

// Whether class c is ReduceMean(d^2) over the last axis (d^2 as Pow(d, 2) or d * d).
bool IsMeanOfSquares(const EGraph& g, ClassId c, ClassId d, int64_t rank) {
  for (const ENode* var : g.FindOps(c, "ReduceMean")) {
    if (!IsLastAxisMean(g, *var, rank)) continue;
    ClassId sq = Child(g, *var, 0);
    bool squares_d = false;
    for (const ENode* pow : g.FindOps(sq, "Pow")) {
      squares_d = squares_d || (Child(g, *pow, 0) == d && AllElementsEqual(g, Child(g, *pow, 1), 2));
    }
    for (const ENode* mul : g.FindOps(sq, "Mul")) {
      squares_d = squares_d || (Child(g, *mul, 0) == d && Child(g, *mul, 1) == d);
    }
    if (squares_d) return true;
  }
  return false;
}

// The eps when class `root` is Sqrt(ReduceMean(v^2) + eps) over v's last
// axis, eps one number; nullptr otherwise. The denominator both norms share.
const Tensor* RootMeanSquareEps(const EGraph& g, ClassId root, ClassId v, int64_t rank) {
  const Tensor* eps = nullptr;
  auto mean_square_plus_eps = [&](ClassId ms, ClassId e) {
    eps = g.value(e);
    return eps != nullptr && eps->num_elements() == 1 && IsMeanOfSquares(g, ms, v, rank);
  };
  for (const ENode* sqrt : g.FindOps(root, "Sqrt")) {
    if (HasOpEitherOrder(g, Child(g, *sqrt, 0), "Add", mean_square_plus_eps)) return eps;
  }
  return nullptr;
}

// Why: an eps, a 1 or an exponent of higher rank broadcasts the result (or
// the mean's axis) past x's shape, which a normalization of x does not have.
bool KeepsShapeOf(const EGraph& g, ClassId cls, const Shape& xs) {
  const Shape* out = RankedShape(g, cls);
  return out != nullptr && SameShape(*out, xs) && g.type(cls).dtype == DType::kFloat;
}

// What a LayerNorm and an RMSNorm over the last axis check alike, in one
// order: x ranked and float32, the result x's shape, the normalized dim known,
// and class `root` Sqrt(ReduceMean(v^2) + eps) for v = `squared` (x - mean(x)
// or x). The width and eps, or nullopt after declining with the reason
// (`denominator` names the expected denominator).
struct LastAxisNorm {
  int64_t width;
  float epsilon;
};

std::optional<LastAxisNorm> MatchLastAxisNorm(RuleContext& ctx, ClassId cls, ClassId x, ClassId squared, ClassId root,
                                              const char* denominator) {
  EGraph& g = ctx.g;
  auto decline = [&ctx](std::string why) -> std::optional<LastAxisNorm> {
    ctx.Decline(std::move(why));
    return std::nullopt;
  };
  const Shape* xs = RankedShape(g, x);
  if (xs == nullptr || xs->rank() < 1) return decline("rank of x not known");
  if (g.type(x).dtype != DType::kFloat) return decline("not float32");
  if (!KeepsShapeOf(g, cls, *xs)) return decline("the result is not x's shape");
  const Dim& last = (*xs)[xs->rank() - 1];
  if (!last.is_value()) return decline("normalized dim not known");
  const Tensor* eps = RootMeanSquareEps(g, root, squared, xs->rank());
  if (eps == nullptr) return decline(absl::StrCat("denominator is not ", denominator));
  return LastAxisNorm{last.value(), static_cast<float>(eps->ElementAsDouble(0))};
}

// LayerNormalization(x, 1, 0, axis=-1, epsilon=eps) when d is x - mean(x) and
// class `root` is Sqrt(ReduceMean(d^2) + eps); kNoClass (with a reason) otherwise.
ClassId LayerNormOf(RuleContext& ctx, ClassId cls, ClassId d, ClassId root) {
  EGraph& g = ctx.g;
  ClassId x;
  if (!IsCentered(g, d, x)) return ctx.Decline("numerator is not x - mean(x)");
  std::optional<LastAxisNorm> norm = MatchLastAxisNorm(ctx, cls, x, d, root, "sqrt(mean(d^2) + eps)");
  if (!norm) return kNoClass;
  int64_t width = norm->width;
  ClassId ones = g.AddConst(Tensor::FromVector<float>(std::vector<float>(width, 1.f), {width}));
  ClassId zeros = g.AddConst(Tensor::FromVector<float>(std::vector<float>(width, 0.f), {width}));
  return AddNewerStandardOp(ctx, "LayerNormalization", {x, ones, zeros},
                            {Attribute::Int("axis", -1), Attribute::Float("epsilon", norm->epsilon)});
}

// d / Sqrt(ReduceMean(d^2) + eps) -> LayerNormalization(x, 1, 0, axis=-1, epsilon=eps)
ClassId FuseLayerNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  return LayerNormOf(ctx, cls, Child(ctx.g, n, 0), Child(ctx.g, n, 1));
}

// d * Reciprocal(Sqrt(ReduceMean(d^2) + eps)) -> LayerNormalization(x, 1, 0, ...)   (tf2onnx's spelling)
ClassId FuseLayerNormByReciprocal(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId result = kNoClass;
  EitherOrder(g, n, [&](ClassId d, ClassId inverse) {
    for (const ENode* recip : g.FindOps(inverse, "Reciprocal")) {
      result = LayerNormOf(ctx, cls, d, Child(g, *recip, 0));
      if (result != kNoClass) return true;
    }
    return false;
  });
  return result != kNoClass ? result : ctx.Decline("not d * Reciprocal(sqrt(mean(d^2) + eps))");
}

// Whether constant k, applied to a norm's output `normed` giving class
// `cls`, folds into its per-element scale s. Why: k must be one number (any
// rank, a scalar included) or one per normalized element ([D] or [1, .., D]);
// anything else broadcasts the result to another shape. A rank-0 k has no
// last dim to compare.
bool FoldsIntoScale(const EGraph& g, ClassId cls, ClassId normed, const Tensor& k, const Tensor& s) {
  bool scalar_k = k.num_elements() == 1;
  if (!scalar_k && (k.rank() == 0 || k.num_elements() != s.num_elements() ||
                    k.dim(k.rank() - 1) != s.num_elements())) {
    return false;
  }
  const Shape* out = RankedShape(g, cls);
  const Shape* lo = RankedShape(g, normed);
  return out != nullptr && lo != nullptr && SameShape(*out, *lo);
}

// LayerNormalization(x, s, b) * g -> LayerNormalization(x, s*g, b*g)   (g of the normalized width)
// LayerNormalization(x, s, b) + c -> LayerNormalization(x, s, b+c)
ClassId FoldAffineIntoLayerNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  bool is_mul = n.op->op_type == "Mul";
  ClassId folded = kNoClass;
  bool matched = EitherOrder(g, n, [&](ClassId normed, ClassId operand) {
    for (const ENode* ln : g.FindOps(normed, "LayerNormalization")) {
      if (ln->num_outputs != 1 || ln->op->GetInt("axis", -1) != -1) continue;
      const Tensor* k = g.value(operand);
      const Tensor* s = g.value(Child(g, *ln, 1));
      const Tensor* b = ln->children.size() > 2 && ln->children[2] != kNoClass ? g.value(Child(g, *ln, 2)) : nullptr;
      if (!k || !s || !b || k->dtype() != DType::kFloat || s->dtype() != DType::kFloat) continue;
      if (!FoldsIntoScale(g, cls, normed, *k, *s)) continue;
      // Why: scale and bias must be one value each per normalized element to be updated in place.
      if (b->num_elements() != s->num_elements()) continue;
      std::vector<double> sv = ToDoubles(*s), bv = ToDoubles(*b);
      FoldAffine(sv, bv, ToDoubles(*k), is_mul);
      int64_t width = s->num_elements();
      ClassId ns = g.AddConst(FromDoubles(sv, DType::kFloat, {width}));
      ClassId nb = g.AddConst(FromDoubles(bv, DType::kFloat, {width}));
      folded = g.AddOpLike(*ln->op, {Child(g, *ln, 0), ns, nb}, 1);
      return true;
    }
    return false;
  });
  if (!matched) return ctx.Decline("no LayerNormalization with constant scale, bias and operand");
  return folded;
}

// RMSNormalization(x, 1, axis=-1, epsilon=eps) when class `root` is
// Sqrt(ReduceMean(x^2) + eps) over the last axis; kNoClass (with a reason) otherwise.
ClassId RmsNormOf(RuleContext& ctx, ClassId cls, ClassId x, ClassId root) {
  std::optional<LastAxisNorm> norm = MatchLastAxisNorm(ctx, cls, x, x, root, "sqrt(mean(x^2) + eps)");
  if (!norm) return kNoClass;
  int64_t width = norm->width;
  ClassId ones = ctx.g.AddConst(Tensor::FromVector<float>(std::vector<float>(width, 1.f), {width}));
  return AddNewerStandardOp(ctx, "RMSNormalization", {x, ones},
                            {Attribute::Int("axis", -1), Attribute::Float("epsilon", norm->epsilon)});
}

// x / Sqrt(ReduceMean(x^2) + eps) -> RMSNormalization(x, 1, axis=-1, epsilon=eps)
// x * Reciprocal(Sqrt(ReduceMean(x^2) + eps)) -> the same (torch's rsqrt; 1 / Sqrt too)
ClassId FuseRmsNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (n.op->op_type == "Div") return RmsNormOf(ctx, cls, Child(g, n, 0), Child(g, n, 1));
  ClassId result = kNoClass;
  EitherOrder(g, n, [&](ClassId x, ClassId inverse) {
    for (const ENode* recip : g.FindOps(inverse, "Reciprocal")) {
      result = RmsNormOf(ctx, cls, x, Child(g, *recip, 0));
      if (result != kNoClass) return true;
    }
    // 1 / sqrt(...), as the TorchScript exporter writes rsqrt.
    for (const ENode* div : g.FindOps(inverse, "Div")) {
      if (!AllElementsEqual(g, Child(g, *div, 0), 1)) continue;
      result = RmsNormOf(ctx, cls, x, Child(g, *div, 1));
      if (result != kNoClass) return true;
    }
    return false;
  });
  return result != kNoClass ? result : ctx.Decline("not x * Reciprocal(sqrt(mean(x^2) + eps))");
}

// RMSNormalization(x, s) * g -> RMSNormalization(x, s*g)   (g one number or one per normalized element)
ClassId FoldScaleIntoRmsNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId folded = kNoClass;
  bool matched = EitherOrder(g, n, [&](ClassId normed, ClassId operand) {
    for (const ENode* rms : g.FindOps(normed, "RMSNormalization")) {
      if (rms->num_outputs != 1 || rms->op->GetInt("axis", -1) != -1) continue;
      const Tensor* k = g.value(operand);
      const Tensor* s = g.value(Child(g, *rms, 1));
      if (!k || !s || k->dtype() != DType::kFloat || s->dtype() != DType::kFloat) continue;
      if (!FoldsIntoScale(g, cls, normed, *k, *s)) continue;
      bool scalar_k = k->num_elements() == 1;
      std::vector<double> kv = ToDoubles(*k), sv = ToDoubles(*s);
      for (size_t i = 0; i < sv.size(); ++i) sv[i] *= kv[scalar_k ? 0 : i];
      ClassId ns = g.AddConst(FromDoubles(sv, DType::kFloat, {s->num_elements()}));
      folded = g.AddOpLike(*rms->op, {Child(g, *rms, 0), ns}, 1);
      return true;
    }
    return false;
  });
  if (!matched) return ctx.Decline("no RMSNormalization with constant scale and operand");
  return folded;
}

}  // namespace

void AddLayerNormRules(std::vector<Rule>& rules) {
  rules.push_back({"fuse_layer_norm",
                   "(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) -> LayerNormalization(x, 1, 0)", "Div",
                   Exactness::kReassociating, 17, FuseLayerNorm, "LayerNormalization"});
  rules.push_back({"fuse_layer_norm_by_reciprocal",
                   "(x - mean(x)) * Reciprocal(sqrt(mean((x - mean(x))^2) + eps)) -> LayerNormalization(x, 1, 0)",
                   "Mul", Exactness::kReassociating, 17, FuseLayerNormByReciprocal, "LayerNormalization"});
  for (const char* root : {"Div", "Mul"}) {
    rules.push_back({"fuse_rms_norm", "x / sqrt(mean(x^2) + eps) -> RMSNormalization(x, 1)", root,
                     Exactness::kReassociating, 23, FuseRmsNorm, "RMSNormalization"});
  }
  rules.push_back({"fold_scale_into_rms_norm", "RMSNormalization(x, s) * g -> RMSNormalization(x, s*g)", "Mul",
                   Exactness::kReassociating, 23, FoldScaleIntoRmsNorm, "RMSNormalization"});
  for (const char* root : {"Mul", "Add"}) {
    rules.push_back({"fold_affine_into_layer_norm",
                     "LayerNormalization(x, s, b) * g + c -> LayerNormalization(x, s*g, b*g + c)", root,
                     Exactness::kReassociating, 17, FoldAffineIntoLayerNorm, "LayerNormalization"});
  }
}

}  // namespace aic::rewrite

// Activation clean-ups and fusions: Relu of Relu, Clip of Relu, and (for
// --target aic only) Linear + ReLU -> FusedLinearReLU in our own domain.
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Relu(Relu(x)) -> Relu(x)
ClassId RemoveDoubleRelu(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId inner = Child(ctx.g, n, 0);
  if (ctx.g.FindOp(inner, "Relu") == nullptr) return ctx.Decline("input is not a Relu");
  return inner;
}

// Clip(Relu(x), lo >= 0, hi) -> Clip(x, lo, hi)
ClassId FuseReluIntoClip(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const ENode* relu = g.FindOp(Child(g, n, 0), "Relu");
  if (relu == nullptr) return ctx.Decline("input is not a Relu");
  ClipBounds b = ClipBoundsOf(g, n);
  if (!b.lo_known) return ctx.Decline("min not a constant");
  // Why: with min >= 0 the Relu's zeroing is already done by the Clip.
  if (!b.lo || !(*b.lo >= 0)) return ctx.Decline("min below 0");
  std::vector<ClassId> children = n.children;
  children[0] = Child(g, *relu, 0);
  return g.AddOpLike(*n.op, children, 1);
}

// Relu(Gemm(a, B, c)) -> ai.aic.FusedLinearReLU(a, B, c)
ClassId FuseLinearRelu(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const ENode* gemm = g.FindOp(Child(g, n, 0), "Gemm");
  if (gemm == nullptr) return ctx.Decline("input is not a Gemm");
  return g.AddOp("FusedLinearReLU", kAicDomain, gemm->children, gemm->op->attributes);
}

}  // namespace

void AddActivationRules(std::vector<Rule>& rules) {
  rules.push_back({"remove_double_relu", "Relu(Relu(x)) -> Relu(x)", "Relu", Exactness::kExact, 1,
                   RemoveDoubleRelu});
  rules.push_back({"fuse_relu_into_clip", "Clip(Relu(x), lo>=0, hi) -> Clip(x, lo, hi)", "Clip",
                   Exactness::kExact, 1, FuseReluIntoClip});
  Rule fused{"fuse_linear_relu", "Relu(Gemm(a, B, c)) -> FusedLinearReLU(a, B, c)  (ai.aic)", "Relu",
             Exactness::kExact, 1, FuseLinearRelu};
  fused.aic_op = "FusedLinearReLU";
  fused.aic_only = true;
  rules.push_back(fused);
}

}  // namespace aic::rewrite

// Decomposed activations recognised and replaced by the standard op the
// model's opset has: x*clip(x+3, 0, 6)/6 is HardSwish (opset >= 14) or, below
// 14, x*HardSigmoid(x) with alpha 1/6 (one node less per activation either way
// is two).
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Whether class c is Clip(x + 3, 0, 6); sets x.
bool IsClipXPlus3(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* clip : g.FindOps(c, "Clip")) {
    double lo, hi;
    if (clip->children.size() == 1) {
      lo = clip->op->GetFloat("min", -1e30f);
      hi = clip->op->GetFloat("max", 1e30f);
    } else {
      const Tensor* lt = g.value(Child(g, *clip, 1));
      const Tensor* ht = g.value(Child(g, *clip, 2));
      if (!lt || !ht || lt->num_elements() != 1 || ht->num_elements() != 1) continue;
      lo = lt->ElementAsDouble(0);
      hi = ht->ElementAsDouble(0);
    }
    if (lo != 0 || hi != 6) continue;
    for (const ENode* add : g.FindOps(Child(g, *clip, 0), "Add")) {
      for (int side = 0; side < 2; ++side) {
        const Tensor* three = g.value(Child(g, *add, 1 - side));
        if (three && three->num_elements() == 1 && three->ElementAsDouble(0) == 3) {
          x = Child(g, *add, side);
          return true;
        }
      }
    }
  }
  return false;
}

// Whether class c is x * Clip(x + 3, 0, 6); sets x.
bool IsXTimesClip(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* mul : g.FindOps(c, "Mul")) {
    for (int side = 0; side < 2; ++side) {
      ClassId inner;
      if (IsClipXPlus3(g, Child(g, *mul, 1 - side), inner) && inner == Child(g, *mul, side)) {
        x = inner;
        return true;
      }
    }
  }
  return false;
}

// Matches x*clip(x+3,0,6)/6 (or * (1/6)) rooted at a Div or Mul; sets x.
bool MatchHardSwish(const EGraph& g, ClassId cls, const ENode& n, ClassId& x) {
  const Shape* out = RankedShape(g, cls);
  if (n.op->op_type == "Div") {
    const Tensor* six = g.value(Child(g, n, 1));
    if (!six || six->num_elements() != 1 || six->ElementAsDouble(0) != 6) return false;
    if (!IsXTimesClip(g, Child(g, n, 0), x)) return false;
  } else {
    bool ok = false;
    for (int side = 0; side < 2 && !ok; ++side) {
      const Tensor* k = g.value(Child(g, n, 1 - side));
      if (!k || k->num_elements() != 1 || std::abs(k->ElementAsDouble(0) - 1.0 / 6) > 1e-7) continue;
      ok = IsXTimesClip(g, Child(g, n, side), x);
    }
    if (!ok) return false;
  }
  // Why: the constants must not broadcast x to a bigger shape.
  const Shape* xs = RankedShape(g, x);
  return out && xs && SameShape(*out, *xs) && g.type(x).dtype == g.type(cls).dtype &&
         IsFloat(g.type(x).dtype);
}

// x * clip(x+3, 0, 6) / 6 -> HardSwish(x)
ClassId FuseHardSwish(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x;
  if (!MatchHardSwish(ctx.g, cls, n, x)) return ctx.Decline("not x*clip(x+3,0,6)/6");
  return ctx.g.AddOp("HardSwish", "", {x});
}

// x * clip(x+3, 0, 6) / 6 -> x * HardSigmoid(x, alpha=1/6, beta=0.5)   (below opset 14)
ClassId FuseHardSigmoidMul(RuleContext& ctx, ClassId cls, const ENode& n) {
  // Why: from opset 14 on, HardSwish is one node instead of two.
  if (ctx.g.opset() >= 14) return ctx.Decline("HardSwish is available");
  ClassId x;
  if (!MatchHardSwish(ctx.g, cls, n, x)) return ctx.Decline("not x*clip(x+3,0,6)/6");
  ClassId hs = ctx.g.AddOp("HardSigmoid", "", {x},
                           {Attribute::Float("alpha", 1.0f / 6), Attribute::Float("beta", 0.5f)});
  return ctx.g.AddOp("Mul", "", {x, hs});
}

}  // namespace

void AddPatternRules(std::vector<Rule>& rules) {
  for (const char* root : {"Div", "Mul"}) {
    rules.push_back({"fuse_hard_swish", "x * clip(x+3, 0, 6) / 6 -> HardSwish(x)", root,
                     Exactness::kReassociating, 14, FuseHardSwish});
    rules.push_back({"fuse_hard_sigmoid_mul",
                     "x * clip(x+3, 0, 6) / 6 -> x * HardSigmoid(x, 1/6, 0.5)  (opset < 14)", root,
                     Exactness::kReassociating, 6, FuseHardSigmoidMul});
  }
}

}  // namespace aic::rewrite

// Decomposed activations recognised and replaced by the standard op the
// model's opset has: x*clip(x+3, 0, 6)/6 is HardSwish (opset >= 14) or, below
// 14, x*HardSigmoid(x) with alpha 1/6 (one node less per activation either way
// is two); x*0.5*(1+erf(x/√2)), as exporters write GELU, is Gelu (opset >= 20).
// Below those opsets, a target that runs ai.aic's aliases of HardSwish and
// Gelu (a session compiling for a backend) gets those instead, and the
// x*HardSigmoid(x) that `opt --target onnx` writes below opset 14 becomes
// HardSwish again.
#include <cmath>

#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Whether class c is Clip(x + 3, 0, 6); sets x.
bool IsClipXPlus3(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* clip : g.FindOps(c, "Clip")) {
    ClipBounds b = ClipBoundsOf(g, *clip);
    if (b.lo != 0.0 || b.hi != 6.0) continue;
    if (HasOpEitherOrder(g, Child(g, *clip, 0), "Add", [&](ClassId a, ClassId b) {
          const Tensor* three = g.value(b);
          if (!three || three->num_elements() != 1 || three->ElementAsDouble(0) != 3) return false;
          x = a;
          return true;
        })) {
      return true;
    }
  }
  return false;
}

// Whether class c is x * Clip(x + 3, 0, 6); sets x.
bool IsXTimesClip(const EGraph& g, ClassId c, ClassId& x) {
  return HasOpEitherOrder(g, c, "Mul", [&](ClassId a, ClassId b) {
    ClassId inner;
    if (!IsClipXPlus3(g, b, inner) || inner != a) return false;
    x = inner;
    return true;
  });
}

// Matches x*clip(x+3,0,6)/6 (or * (1/6)) rooted at a Div or Mul; sets x.
bool MatchHardSwish(const EGraph& g, ClassId cls, const ENode& n, ClassId& x) {
  const Shape* out = RankedShape(g, cls);
  if (n.op->op_type == "Div") {
    const Tensor* six = g.value(Child(g, n, 1));
    if (!six || six->num_elements() != 1 || six->ElementAsDouble(0) != 6) return false;
    if (!IsXTimesClip(g, Child(g, n, 0), x)) return false;
  } else {
    bool ok = EitherOrder(g, n, [&](ClassId a, ClassId b) {
      const Tensor* k = g.value(b);
      if (!k || k->num_elements() != 1 || std::abs(k->ElementAsDouble(0) - 1.0 / 6) > 1e-7) return false;
      return IsXTimesClip(g, a, x);
    });
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
  return AddNewerStandardOp(ctx, "HardSwish", {x});
}

// x * clip(x+3, 0, 6) / 6 -> x * HardSigmoid(x, alpha=1/6, beta=0.5)   (below opset 14)
ClassId FuseHardSigmoidMul(RuleContext& ctx, ClassId cls, const ENode& n) {
  // Why: from opset 14 on (or for a target that runs ai.aic's HardSwish),
  // HardSwish is one node instead of two.
  if (ctx.g.opset() >= 14 || ctx.options.AllowsAic("HardSwish")) return ctx.Decline("HardSwish is available");
  ClassId x;
  if (!MatchHardSwish(ctx.g, cls, n, x)) return ctx.Decline("not x*clip(x+3,0,6)/6");
  ClassId hs = ctx.g.AddOp("HardSigmoid", "", {x},
                           {Attribute::Float("alpha", 1.0f / 6), Attribute::Float("beta", 0.5f)});
  return ctx.g.AddOp("Mul", "", {x, hs});
}

// x * HardSigmoid(x, alpha=1/6, beta=0.5) -> HardSwish(x)   (HardSwish's own definition)
ClassId FuseHardSigmoidIntoHardSwish(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId x = kNoClass;
  bool matched = EitherOrder(g, n, [&](ClassId a, ClassId b) {
    for (const ENode* hs : g.FindOps(b, "HardSigmoid")) {
      if (Child(g, *hs, 0) != a) continue;
      // Why: only these parameters make x * HardSigmoid(x) the HardSwish of the standard.
      if (std::abs(hs->op->GetFloat("alpha", 0.2f) - 1.0 / 6) > 1e-7 || hs->op->GetFloat("beta", 0.5f) != 0.5f) {
        continue;
      }
      const Shape* out = RankedShape(g, cls);
      const Shape* xs = RankedShape(g, a);
      if (!out || !xs || !SameShape(*out, *xs) || !IsFloat(g.type(a).dtype)) continue;
      x = a;
      return true;
    }
    return false;
  });
  if (!matched) return ctx.Decline("not x * HardSigmoid(x, 1/6, 0.5)");
  return AddNewerStandardOp(ctx, "HardSwish", {x});
}

// A scalar constant within a relative 1e-6 of v (exporters round √2 and
// 1/√2 to float differently).
bool IsScalarNear(const EGraph& g, ClassId c, double v) {
  const Tensor* t = c == kNoClass ? nullptr : g.value(c);
  if (t == nullptr || t->num_elements() != 1 || !IsFloat(t->dtype())) return false;
  return std::abs(t->ElementAsDouble(0) - v) <= 1e-6 * std::abs(v);
}

// Whether class c is Erf(x / √2) or Erf(x * 1/√2) (either operand order); sets x.
bool IsErfOfXOverSqrt2(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* erf : g.FindOps(c, "Erf")) {
    ClassId arg = Child(g, *erf, 0);
    for (const ENode* div : g.FindOps(arg, "Div")) {
      if (IsScalarNear(g, Child(g, *div, 1), std::sqrt(2.0))) {
        x = Child(g, *div, 0);
        return true;
      }
    }
    if (HasOpEitherOrder(g, arg, "Mul", [&](ClassId a, ClassId b) {
          if (!IsScalarNear(g, b, std::sqrt(0.5))) return false;
          x = a;
          return true;
        })) {
      return true;
    }
  }
  return false;
}

// Whether class c is 1 + Erf(x / √2) (or Erf(x * 1/√2), either operand order); sets x.
bool IsOnePlusErf(const EGraph& g, ClassId c, ClassId& x) {
  return HasOpEitherOrder(g, c, "Add",
                          [&](ClassId a, ClassId b) { return IsScalarNear(g, b, 1.0) && IsErfOfXOverSqrt2(g, a, x); });
}

// The product x * 0.5 * (1 + erf(x/√2)) in any of its three groupings, at a
// Mul e-node; sets x.
bool MatchGelu(const EGraph& g, const ENode& n, ClassId& x) {
  return EitherOrder(g, n, [&](ClassId p, ClassId q) {
    ClassId cand;
    // (x * A) * 0.5
    if (IsScalarNear(g, q, 0.5) &&
        HasOpEitherOrder(g, p, "Mul", [&](ClassId a, ClassId b) { return IsOnePlusErf(g, b, cand) && cand == a; })) {
      x = cand;
      return true;
    }
    // (x * 0.5) * A
    if (IsOnePlusErf(g, q, cand) &&
        HasOpEitherOrder(g, p, "Mul", [&](ClassId a, ClassId b) { return a == cand && IsScalarNear(g, b, 0.5); })) {
      x = cand;
      return true;
    }
    // x * (0.5 * A)
    if (HasOpEitherOrder(g, q, "Mul", [&](ClassId a, ClassId b) {
          return IsScalarNear(g, a, 0.5) && IsOnePlusErf(g, b, cand) && cand == p;
        })) {
      x = cand;
      return true;
    }
    return false;
  });
}

// x * 0.5 * (1 + erf(x / √2)) -> Gelu(x)
ClassId FuseGelu(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId x;
  if (!MatchGelu(g, n, x)) return ctx.Decline("not x*0.5*(1+erf(x/sqrt(2)))");
  // Why: the scalar constants must not broadcast x to a bigger shape or change its type.
  const Shape* out = RankedShape(g, cls);
  const Shape* xs = RankedShape(g, x);
  if (!out || !xs || !SameShape(*out, *xs)) return ctx.Decline("the constants broadcast x");
  if (g.type(x).dtype != g.type(cls).dtype || !IsFloat(g.type(x).dtype)) return ctx.Decline("not a float tensor");
  return AddNewerStandardOp(ctx, "Gelu", {x});
}

}  // namespace

void AddPatternRules(std::vector<Rule>& rules) {
  for (const char* root : {"Div", "Mul"}) {
    rules.push_back({"fuse_hard_swish", "x * clip(x+3, 0, 6) / 6 -> HardSwish(x)", root,
                     Exactness::kReassociating, 14, FuseHardSwish, "HardSwish"});
    rules.push_back({"fuse_hard_sigmoid_mul",
                     "x * clip(x+3, 0, 6) / 6 -> x * HardSigmoid(x, 1/6, 0.5)  (opset < 14)", root,
                     Exactness::kReassociating, 6, FuseHardSigmoidMul});
  }
  rules.push_back({"fuse_hard_sigmoid_into_hard_swish", "x * HardSigmoid(x, 1/6, 0.5) -> HardSwish(x)", "Mul",
                   Exactness::kReassociating, 14, FuseHardSigmoidIntoHardSwish, "HardSwish"});
  rules.push_back({"fuse_gelu", "x * 0.5 * (1 + erf(x / sqrt(2))) -> Gelu(x)", "Mul",
                   Exactness::kReassociating, 20, FuseGelu, "Gelu"});
}

}  // namespace aic::rewrite

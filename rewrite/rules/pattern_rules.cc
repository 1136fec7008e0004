// Decomposed activations recognised and replaced by the standard op the
// model's opset has: x*clip(x+3, 0, 6)/6 is HardSwish (opset >= 14) or, below
// 14, x*HardSigmoid(x) with alpha 1/6 (one node less per activation either way
// is two); x*0.5*(1+erf(x/√2)), as exporters write GELU, is Gelu (opset >= 20),
// and x*0.5*(1+tanh(√(2/π)(x+0.044715x³))) (GPT-2's "gelu_new", torch's
// approximate="tanh" below opset 20) is Gelu(approximate="tanh"), and
// x*Sigmoid(x) (SiLU) is Swish (opset >= 24).
// Below those opsets, a target that runs ai.aic's aliases of HardSwish,
// Gelu and Swish (a session compiling for a backend) gets those instead, and the
// x*HardSigmoid(x) that `opt --target onnx` writes below opset 14 becomes
// HardSwish again.
#include <cmath>
#include <numbers>

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
// Whether the Mul at n is x * u(x) for a node u of `op_type` that `accept`
// takes, with x not broadcast by the product and a float; sets x.
template <typename Accept>
bool MatchXTimesUnaryOfX(const EGraph& g, ClassId cls, const ENode& n, const char* op_type, Accept accept,
                         ClassId& x) {
  return EitherOrder(g, n, [&](ClassId a, ClassId b) {
    for (const ENode* u : g.FindOps(b, op_type)) {
      if (Child(g, *u, 0) != a || !accept(*u)) continue;
      // Why: a broadcasting x would make the product bigger than the fused op's output.
      const Shape* out = RankedShape(g, cls);
      const Shape* xs = RankedShape(g, a);
      if (!out || !xs || !SameShape(*out, *xs) || !IsFloat(g.type(a).dtype)) continue;
      x = a;
      return true;
    }
    return false;
  });
}

ClassId FuseHardSigmoidIntoHardSwish(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = kNoClass;
  // Why: only these parameters make x * HardSigmoid(x) the HardSwish of the standard.
  auto standard = [](const ENode& hs) {
    return std::abs(hs.op->GetFloat("alpha", 0.2f) - 1.0 / 6) <= 1e-7 && hs.op->GetFloat("beta", 0.5f) == 0.5f;
  };
  if (!MatchXTimesUnaryOfX(ctx.g, cls, n, "HardSigmoid", standard, x)) {
    return ctx.Decline("not x * HardSigmoid(x, 1/6, 0.5)");
  }
  return AddNewerStandardOp(ctx, "HardSwish", {x});
}

// x * Sigmoid(x) -> Swish(x) (SiLU: EfficientNet, YOLO, Llama's SwiGLU gate).
ClassId FuseSwish(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = kNoClass;
  if (!MatchXTimesUnaryOfX(ctx.g, cls, n, "Sigmoid", [](const ENode&) { return true; }, x)) {
    return ctx.Decline("not x * Sigmoid(x)");
  }
  return AddNewerStandardOp(ctx, "Swish", {x});
}

// Swish(a) * b -> SwiGLU(a, b) (Llama's gated MLP: silu(gate) · up), where
// a, b and the product have one shape: SwiGLU does not broadcast. Opset 28
// only, with no ai.aic alias: below it the CPU backend already runs
// Swish · b as post-ops of the gate's MatMul, which a separate op would undo.
ClassId FuseSwiGlu(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const Shape* out = RankedShape(g, cls);
  ClassId fused = kNoClass;
  EitherOrder(g, n, [&](ClassId gate, ClassId value) {
    for (const ENode* swish : g.FindOps(gate, "Swish")) {
      ClassId a = Child(g, *swish, 0);
      const Shape* as = RankedShape(g, a);
      const Shape* bs = RankedShape(g, value);
      if (!out || !as || !bs || !SameShape(*as, *out) || !SameShape(*bs, *out)) continue;
      DType t = g.type(a).dtype;
      if (!IsFloat(t) || g.type(value).dtype != t) continue;
      fused = g.AddOp("SwiGLU", "", {a, value}, {Attribute::Float("alpha", swish->op->GetFloat("alpha", 1.0f))});
      return true;
    }
    return false;
  });
  return fused != kNoClass ? fused : ctx.Decline("not Swish(a) * b over one shape");
}

// A scalar constant within a relative 1e-6 of v (exporters round √2 and
// 1/√2 to float differently), or, held in float16 or bfloat16, within half a
// unit in the last place of that type at v: v as close as the type can hold
// it. A model converted to fp16 holds √2 as 1.4140625 (1e-4 off); its GELU
// then stayed five elementwise steps, 12 of ConvNeXt-tiny fp16's 131 ms.
bool IsScalarNear(const EGraph& g, ClassId c, double v) {
  const Tensor* t = c == kNoClass ? nullptr : g.value(c);
  if (t == nullptr || t->num_elements() != 1 || !IsFloat(t->dtype())) return false;
  const double diff = std::abs(t->ElementAsDouble(0) - v);
  if (diff <= 1e-6 * std::abs(v)) return true;
  const int mantissa_bits = t->dtype() == DType::kFloat16 ? 10 : t->dtype() == DType::kBFloat16 ? 7 : 0;
  if (mantissa_bits == 0 || v == 0) return false;
  int exponent = 0;
  std::frexp(v, &exponent);  // |v| in [2^(exponent-1), 2^exponent)
  return diff <= 0.5 * std::ldexp(1.0, exponent - 1 - mantissa_bits);
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

// Whether class c is x³: Pow(x, 3), or x * (x * x) in any operand order; sets x.
bool IsCube(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* pow : g.FindOps(c, "Pow")) {
    if (IsScalarNear(g, Child(g, *pow, 1), 3.0)) {
      x = Child(g, *pow, 0);
      return true;
    }
  }
  return HasOpEitherOrder(g, c, "Mul", [&](ClassId a, ClassId square) {
    if (!HasOpEitherOrder(g, square, "Mul", [&](ClassId p, ClassId q) { return p == a && q == a; })) return false;
    x = a;
    return true;
  });
}

// Whether class c is Tanh(√(2/π) · (x + 0.044715 · x³)), the tanh form of
// GELU (operands in any order); sets x.
bool IsTanhOfGeluArg(const EGraph& g, ClassId c, ClassId& x) {
  for (const ENode* tanh : g.FindOps(c, "Tanh")) {
    bool found = HasOpEitherOrder(g, Child(g, *tanh, 0), "Mul", [&](ClassId inner, ClassId k) {
      if (!IsScalarNear(g, k, std::sqrt(2.0 / std::numbers::pi))) return false;
      return HasOpEitherOrder(g, inner, "Add", [&](ClassId a, ClassId b) {
        return HasOpEitherOrder(g, b, "Mul", [&](ClassId cube, ClassId coefficient) {
          ClassId base;
          if (!IsScalarNear(g, coefficient, 0.044715) || !IsCube(g, cube, base) || base != a) return false;
          x = a;
          return true;
        });
      });
    });
    if (found) return true;
  }
  return false;
}

// Recognises the inner function of a GELU form at class c; sets x.
using GeluInner = bool (*)(const EGraph& g, ClassId c, ClassId& x);

// Whether class c is 1 + inner(x) (either operand order); sets x.
bool IsOnePlus(const EGraph& g, ClassId c, GeluInner inner, ClassId& x) {
  return HasOpEitherOrder(g, c, "Add",
                          [&](ClassId a, ClassId b) { return IsScalarNear(g, b, 1.0) && inner(g, a, x); });
}

// The product x * 0.5 * (1 + inner(x)) in any of its three groupings, at a
// Mul e-node; sets x. `inner` is erf(x/√2) or the tanh approximation.
bool MatchGelu(const EGraph& g, const ENode& n, GeluInner inner, ClassId& x) {
  auto one_plus = [&](ClassId c, ClassId& found) { return IsOnePlus(g, c, inner, found); };
  return EitherOrder(g, n, [&](ClassId p, ClassId q) {
    ClassId cand;
    // (x * A) * 0.5
    if (IsScalarNear(g, q, 0.5) &&
        HasOpEitherOrder(g, p, "Mul", [&](ClassId a, ClassId b) { return one_plus(b, cand) && cand == a; })) {
      x = cand;
      return true;
    }
    // (x * 0.5) * A
    if (one_plus(q, cand) &&
        HasOpEitherOrder(g, p, "Mul", [&](ClassId a, ClassId b) { return a == cand && IsScalarNear(g, b, 0.5); })) {
      x = cand;
      return true;
    }
    // x * (0.5 * A)
    if (HasOpEitherOrder(g, q, "Mul", [&](ClassId a, ClassId b) {
          return IsScalarNear(g, a, 0.5) && one_plus(b, cand) && cand == p;
        })) {
      x = cand;
      return true;
    }
    return false;
  });
}

// Gelu(x) or Gelu(x, approximate="tanh") when the Mul at n computes it with `inner`.
ClassId FuseGeluForm(RuleContext& ctx, ClassId cls, const ENode& n, GeluInner inner, bool tanh) {
  EGraph& g = ctx.g;
  ClassId x;
  if (!MatchGelu(g, n, inner, x)) {
    return ctx.Decline(tanh ? "not x*0.5*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))" : "not x*0.5*(1+erf(x/sqrt(2)))");
  }
  // Why: the scalar constants must not broadcast x to a bigger shape or change its type.
  const Shape* out = RankedShape(g, cls);
  const Shape* xs = RankedShape(g, x);
  if (!out || !xs || !SameShape(*out, *xs)) return ctx.Decline("the constants broadcast x");
  if (g.type(x).dtype != g.type(cls).dtype || !IsFloat(g.type(x).dtype)) return ctx.Decline("not a float tensor");
  std::vector<Attribute> attrs;
  if (tanh) attrs.push_back(Attribute::String("approximate", "tanh"));
  return AddNewerStandardOp(ctx, "Gelu", {x}, std::move(attrs));
}

// x * 0.5 * (1 + erf(x / √2)) -> Gelu(x)
ClassId FuseGelu(RuleContext& ctx, ClassId cls, const ENode& n) {
  return FuseGeluForm(ctx, cls, n, IsErfOfXOverSqrt2, /*tanh=*/false);
}

// x * 0.5 * (1 + tanh(√(2/π) (x + 0.044715 x³))) -> Gelu(x, approximate="tanh")
ClassId FuseGeluTanh(RuleContext& ctx, ClassId cls, const ENode& n) {
  return FuseGeluForm(ctx, cls, n, IsTanhOfGeluArg, /*tanh=*/true);
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
  rules.push_back({"fuse_swish", "x * Sigmoid(x) -> Swish(x)", "Mul", Exactness::kReassociating, 24, FuseSwish,
                   "Swish"});
  rules.push_back({"fuse_swiglu", "Swish(a) * b -> SwiGLU(a, b)", "Mul", Exactness::kReassociating, 28, FuseSwiGlu});
  rules.push_back({"fuse_gelu", "x * 0.5 * (1 + erf(x / sqrt(2))) -> Gelu(x)", "Mul",
                   Exactness::kReassociating, 20, FuseGelu, "Gelu"});
  rules.push_back({"fuse_gelu_tanh",
                   "x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) -> Gelu(x, approximate=tanh)", "Mul",
                   Exactness::kReassociating, 20, FuseGeluTanh, "Gelu"});
}

}  // namespace aic::rewrite

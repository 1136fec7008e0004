// Attention (opset 23) recovered from scaled dot-product attention as
// exporters write it, per head on 4-D tensors (HF BERT, ViT, GPT-2's
// scores, Whisper, torch's SDPA export):
//   Y = MatMul(Softmax(MatMul(Q, Kt) * s + M, axis=-1), V)
// with Kt = Transpose(K, [0, 1, 3, 2]) (or any [B, H, D, Skv] value, whose
// transpose the rule adds), the scale s a constant one-element Mul or Div of
// the scores, or of Q and Kt each (torch writes √s on both), and M an optional
// additive mask. Emitted as Attention(Q, K, V[, M], scale=s), output 0 only,
// M expanded over the queries where it broadcasts them (MaskOverQueries).
//
// What the rule proves before it fires, and why:
// - Q, Kt, V rank 4, one float dtype; batch and head dims equal in both
//   products: Attention does not broadcast them the way MatMul does.
// - The mask's last dim is the key count exactly: Attention pads a shorter
//   mask with "masked" (-inf) instead of numpy-broadcasting it. Its other dims
//   are 1 or the scores' (so the Add did not broadcast the scores either).
// - The scale is finite and positive: Attention multiplies Q and K by √scale.
// - The softmax is per query (last axis). A NaN guard Where(IsNaN(P), 0, P)
//   between softmax and product (torch's SDPA export) is absorbed for float
//   and bfloat16 (NanGuardedSoftmax says why not for float16).
// Grouped-query attention (absorb_kv_repeat): where K and V are both
// repeat_kv's copies of G key/value heads, Reshape(Expand(Unsqueeze(X, [2]),
// [B, G, r, S, D]), [B, G·r, S, D]), Attention reads X itself (4-D inputs
// with fewer key/value heads than query heads; query head h uses head h / r,
// the order the copies were made in), so neither repeat is computed. A rule
// of its own, rooted at the Attention: the copies' classes often learn their
// Reshape form (compose_transposes) only after the attention has fused.
// Differences that remain where they cannot be proven away: without the
// guard, a query whose keys are all masked (-inf) gives NaN in the pattern
// and zeros in Attention (the spec's errata; a known mask with such a row is
// declined); with it, a NaN input (Q or K) gives that query zeros in the
// pattern and NaN in Attention.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

bool IsAttentionDType(DType t) { return t == DType::kFloat || t == DType::kFloat16 || t == DType::kBFloat16; }

// The class's known one-element value of `dtype` as a finite nonzero number.
std::optional<double> ScalarFactor(const EGraph& g, ClassId c, DType dtype) {
  const Tensor* t = g.value(c);
  if (t == nullptr || t->num_elements() != 1 || t->dtype() != dtype) return std::nullopt;
  double v = t->ElementAsDouble(0);
  if (!std::isfinite(v) || v == 0) return std::nullopt;
  return v;
}

// A class as `x * factor`.
struct Scaled {
  ClassId x;
  double factor;
};

// Class c as x * k, k * x or x / k for a constant one-element k that keeps
// x's shape and dtype (a k of higher rank would broadcast x); nullopt otherwise.
std::optional<Scaled> PeelScalar(const EGraph& g, ClassId c) {
  const Shape* cs = RankedShape(g, c);
  if (cs == nullptr) return std::nullopt;
  DType dt = g.type(c).dtype;
  auto keeps_shape = [&](ClassId x) {
    const Shape* xs = RankedShape(g, x);
    return xs != nullptr && SameShape(*xs, *cs) && g.type(x).dtype == dt;
  };
  for (const ENode* mul : g.FindOps(c, "Mul")) {
    std::optional<Scaled> found;
    EitherOrder(g, *mul, [&](ClassId x, ClassId k) {
      std::optional<double> v = ScalarFactor(g, k, dt);
      if (!v || !keeps_shape(x)) return false;
      found = Scaled{x, *v};
      return true;
    });
    if (found) return found;
  }
  for (const ENode* div : g.FindOps(c, "Div")) {
    ClassId x = Child(g, *div, 0);
    std::optional<double> v = ScalarFactor(g, Child(g, *div, 1), dt);
    if (v && keeps_shape(x)) return Scaled{x, 1.0 / *v};
  }
  return std::nullopt;
}

// c, then what it is a scalar multiple of, and so on (a few steps): each
// entry equals c. Why the visited set: after remove_mul_one a class can hold
// Mul(itself, 1), and classes can reach each other both ways.
std::vector<Scaled> ScaleChain(const EGraph& g, ClassId c) {
  std::vector<Scaled> chain = {{c, 1.0}};
  absl::flat_hash_set<ClassId> seen = {c};
  for (int step = 0; step < 4; ++step) {
    std::optional<Scaled> next = PeelScalar(g, chain.back().x);
    if (!next || !seen.insert(next->x).second) break;
    chain.push_back({next->x, chain.back().factor * next->factor});
  }
  return chain;
}

bool IsLastTwoSwap(const ENode& t) {
  return t.op->GetInts("perm") == std::vector<int64_t>{0, 1, 3, 2};
}

// Whether a softmax e-node normalizes over the last axis of its rank-4 input.
// Before opset 13 Softmax flattens from `axis` on (default 1), which is per
// query only when that is the last axis.
bool SoftmaxOverLastAxis(const EGraph& g, const ENode& softmax, int64_t rank) {
  int64_t axis = softmax.op->GetInt("axis", g.opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

// Whether a known mask has a row (over the keys) that is -inf throughout:
// the pattern gives NaN there, Attention zeros.
bool HasFullyMaskedRow(const Tensor& m, int64_t keys) {
  if (keys <= 0) return false;
  for (int64_t row = 0; row * keys < m.num_elements(); ++row) {
    bool all = true;
    for (int64_t j = 0; j < keys && all; ++j) {
      double v = m.ElementAsDouble(row * keys + j);
      all = std::isinf(v) && v < 0;
    }
    if (all) return true;
  }
  return false;
}

// The reason the mask cannot be Attention's attn_mask for scores of shape
// `scores`, or "" when it can.
std::string MaskProblem(const EGraph& g, ClassId mask, const Shape& scores, DType dtype) {
  const Shape* ms = RankedShape(g, mask);
  if (ms == nullptr) return "the mask's rank is not known";
  if (g.type(mask).dtype != dtype) return "the mask's dtype is not Q's";
  if (ms->rank() < 1 || ms->rank() > 4) return absl::StrCat("the mask has rank ", ms->rank(), ", not 1..4");
  int64_t off = 4 - ms->rank();
  if (!(*ms)[ms->rank() - 1].SameAs(scores[3])) {
    return "the mask's last dim is not the key count (Attention pads a shorter mask with -inf, "
           "it does not broadcast it)";
  }
  for (int64_t i = 0; i + 1 < ms->rank(); ++i) {
    const Dim& d = (*ms)[i];
    if (!(d.is_value() && d.value() == 1) && !d.SameAs(scores[off + i])) {
      return absl::StrCat("the mask's dim ", i, " is neither 1 nor the scores'");
    }
  }
  const Tensor* known = g.value(mask);
  if (known != nullptr && scores[3].is_value() && HasFullyMaskedRow(*known, scores[3].value())) {
    return "the mask has a row that masks every key (NaN in the pattern, zeros in Attention)";
  }
  return "";
}

// The mask with its query dim made explicit: `mask` itself when its dim -2
// is the query count, else Expand(mask, [1, 1, Sq, 1]). Why: the spec
// broadcasts every mask dim but the last, yet ONNX Runtime's Attention (1.2x)
// wants rank >= 2 and dim -2 equal to the query count, and an exporter's
// padding mask is [B, 1, 1, Skv]; the small Expand is shared by every layer
// that reads the same mask. kNoClass (declined) when the count is a symbol
// and the opset has no Slice with inputs to read it.
ClassId MaskOverQueries(RuleContext& ctx, ClassId mask, ClassId q, const Dim& sq) {
  EGraph& g = ctx.g;
  const Shape& ms = *RankedShape(g, mask);
  if (ms.rank() >= 2 && ms[ms.rank() - 2].SameAs(sq)) return mask;
  ClassId target = kNoClass;
  if (sq.is_value()) {
    target = g.AddConst(Int64Tensor({1, 1, sq.value(), 1}, {4}));
  } else {
    ClassId rows = kNoClass;
    if (g.opset() >= 15) {
      rows = g.AddOp("Shape", "", {q}, {Attribute::Int("start", 2), Attribute::Int("end", 3)});
    } else if (g.opset() >= 10) {
      rows = g.AddOp("Slice", "", {g.AddOp("Shape", "", {q}), g.AddConst(Int64Tensor({2}, {1})),
                                   g.AddConst(Int64Tensor({3}, {1}))});
    } else {
      ctx.Decline("the mask broadcasts over a symbolic query count, and opset < 10 has no Slice to read it");
      return kNoClass;
    }
    target = g.AddOp("Concat", "", {g.AddConst(Int64Tensor({1, 1}, {2})), rows, g.AddConst(Int64Tensor({1}, {1}))},
                     {Attribute::Int("axis", 0)});
  }
  return g.AddOp("Expand", "", {mask, target});
}

// X where c = Reshape(Expand(Unsqueeze(X, [2]), [B, G, r, S, D]), [B, G·r, S, D])
// (transformers' repeat_kv) with X = [B, G, S, D]; *repeats = r. kNoClass
// when c is anything else.
ClassId UnrepeatedKv(const EGraph& g, ClassId c, int64_t* repeats) {
  const Shape* cs = RankedShape(g, c);
  if (cs == nullptr || cs->rank() != 4) return kNoClass;
  for (const ENode* reshape : g.FindOps(c, "Reshape")) {
    ClassId e = Child(g, *reshape, 0);
    const Shape* es = RankedShape(g, e);
    if (es == nullptr || es->rank() != 5) continue;
    for (const ENode* expand : g.FindOps(e, "Expand")) {
      for (const ENode* unsq : g.FindOps(Child(g, *expand, 0), "Unsqueeze")) {
        ClassId x = Child(g, *unsq, 0);
        const Shape* xs = RankedShape(g, x);
        std::optional<std::vector<int64_t>> axes =
            unsq->children.size() > 1 ? IntValues(g, Child(g, *unsq, 1)) : unsq->op->GetInts("axes");
        if (xs == nullptr || xs->rank() != 4 || !axes || (*axes != std::vector<int64_t>{2} &&
                                                          *axes != std::vector<int64_t>{-3})) {
          continue;
        }
        const Shape& X = *xs;
        const Shape& E = *es;
        const Shape& C = *cs;
        // Why each: the copies are of X's heads only, r of each in a row,
        // and the Reshape merges exactly the group and copy axes.
        bool repeat = E[0].SameAs(X[0]) && E[1].SameAs(X[1]) && E[2].is_value() && E[3].SameAs(X[2]) &&
                      E[4].SameAs(X[3]) && X[1].is_value() && C[0].SameAs(X[0]) && C[1].is_value() &&
                      C[1].value() == X[1].value() * E[2].value() && C[2].SameAs(X[2]) && C[3].SameAs(X[3]);
        if (!repeat || E[2].value() < 1) continue;
        *repeats = E[2].value();
        return x;
      }
    }
  }
  return kNoClass;
}

// Attention(Q, K, V[, mask], scale) when class `qk` is MatMul(Q', Kt') with
// Q' and Kt' scalar multiples of Q and Kt, `factor` the scale applied to the
// product, `mask` the added mask (kNoClass: none), `v` the values and
// `scores` the softmax's input; kNoClass with a reason otherwise.
ClassId AttentionOf(RuleContext& ctx, ClassId cls, ClassId qk, double factor, ClassId mask, ClassId scores,
                    ClassId v) {
  EGraph& g = ctx.g;
  const ENode* product = g.FindOp(qk, "MatMul");
  if (product == nullptr) return ctx.Decline("the scores are not MatMul(Q, Kt) (up to a constant scale)");
  Scaled q = ScaleChain(g, Child(g, *product, 0)).back();
  Scaled kt = ScaleChain(g, Child(g, *product, 1)).back();
  const Shape* qs = RankedShape(g, q.x);
  const Shape* ks = RankedShape(g, kt.x);
  const Shape* vs = RankedShape(g, v);
  const Shape* ss = RankedShape(g, scores);
  const Shape* ys = RankedShape(g, cls);
  if (qs == nullptr || ks == nullptr || vs == nullptr || ss == nullptr || ys == nullptr) {
    return ctx.Decline("a rank is not known");
  }
  if (qs->rank() != 4 || ks->rank() != 4 || vs->rank() != 4 || ss->rank() != 4 || ys->rank() != 4) {
    return ctx.Decline("Q, Kt and V are not all rank 4");
  }
  DType dt = g.type(q.x).dtype;
  if (!IsAttentionDType(dt)) return ctx.Decline(absl::StrCat("dtype ", DTypeName(dt), " is not a float type"));
  if (g.type(kt.x).dtype != dt || g.type(v).dtype != dt) return ctx.Decline("Q, Kt and V differ in dtype");
  const Shape& Q = *qs;
  const Shape& Kt = *ks;
  const Shape& V = *vs;
  // Why SameAs and not "broadcastable": a batch or head dim of 1 against n is
  // MatMul broadcasting, which Attention's 4-D inputs do not do.
  for (int64_t i : {0, 1}) {
    if (!Q[i].SameAs(Kt[i]) || !Q[i].SameAs(V[i])) {
      return ctx.Decline("batch or head dims of Q, Kt and V are not proven equal (a MatMul would broadcast)");
    }
  }
  if (!Q[3].SameAs(Kt[2])) return ctx.Decline("Q's head size is not proven Kt's");
  if (!Kt[3].SameAs(V[2])) return ctx.Decline("Kt's key count is not proven V's");
  // The scores keep [B, H, Sq, Skv] through the scale and mask.
  Shape want({Q[0], Q[1], Q[2], Kt[3]});
  if (!SameShape(*ss, want)) return ctx.Decline("the scale or mask broadcasts the scores");
  if (!SameShape(*ys, Shape({Q[0], Q[1], Q[2], V[3]}))) return ctx.Decline("the output is not [B, H, Sq, Dv]");
  if (mask != kNoClass) {
    std::string problem = MaskProblem(g, mask, want, dt);
    if (!problem.empty()) return ctx.Decline(problem);
  }
  double scale = factor * q.factor * kt.factor;
  float scale_f = static_cast<float>(scale);
  // Why positive: Attention scales Q and K by √scale each.
  if (!std::isfinite(scale_f) || !(scale_f > 0)) {
    return ctx.Decline(absl::StrCat("scale ", scale, " is not a finite positive float"));
  }
  ClassId full_mask = kNoClass;
  if (mask != kNoClass) {
    full_mask = MaskOverQueries(ctx, mask, q.x, Q[2]);
    if (full_mask == kNoClass) return kNoClass;
  }
  ClassId k = kNoClass;
  for (const ENode* t : g.FindOps(kt.x, "Transpose")) {
    const Shape* inner = RankedShape(g, Child(g, *t, 0));
    if (IsLastTwoSwap(*t) && inner != nullptr && inner->rank() == 4) {
      k = Child(g, *t, 0);
      break;
    }
  }
  if (k == kNoClass) k = g.AddOp("Transpose", "", {kt.x}, {Attribute::Ints("perm", {0, 1, 3, 2})});
  std::vector<ClassId> children = {q.x, k, v};
  if (full_mask != kNoClass) children.push_back(full_mask);
  return AddNewerStandardOp(ctx, "Attention", children, {Attribute::Float("scale", scale_f)});
}

// The scores `s` (the softmax's input) as (MatMul(Q, Kt) * factor) [+ mask]:
// the Attention, or kNoClass with a reason.
ClassId AttentionOfScores(RuleContext& ctx, ClassId cls, ClassId s, ClassId v) {
  EGraph& g = ctx.g;
  // Without a mask.
  for (const Scaled& c : ScaleChain(g, s)) {
    if (g.FindOp(c.x, "MatMul") != nullptr) return AttentionOf(ctx, cls, c.x, c.factor, kNoClass, s, v);
  }
  // Scaled scores plus a mask, in either order; the scale must come first
  // (a scale after the mask would scale the mask too).
  ClassId result = kNoClass;
  bool tried = false;
  for (const ENode* add : g.FindOps(s, "Add")) {
    EitherOrder(g, *add, [&](ClassId scaled, ClassId mask) {
      for (const Scaled& c : ScaleChain(g, scaled)) {
        if (g.FindOp(c.x, "MatMul") == nullptr) continue;
        tried = true;
        result = AttentionOf(ctx, cls, c.x, c.factor, mask, s, v);
        return result != kNoClass;
      }
      return false;
    });
    if (result != kNoClass) return result;
  }
  if (tried) return kNoClass;  // AttentionOf said why
  return ctx.Decline("the softmax's input is not MatMul(Q, Kt) * scale [+ mask]");
}

// P when class `c` is the NaN guard Where(IsNaN(P), 0, P) that torch's SDPA
// export writes after the softmax; kNoClass otherwise. Its purpose is the
// query whose keys are all masked (softmax of all -inf is NaN): Attention
// gives such a row zeros by itself, so the guard folds in. It also zeroes
// NaNs a finite mask cannot make: scores that overflow to inf, which
// float16's range makes likely (|q·k| > 65504), so a float16 guard stays.
ClassId NanGuardedSoftmax(const EGraph& g, ClassId c) {
  for (const ENode* where : g.FindOps(c, "Where")) {
    ClassId p = Child(g, *where, 2);
    if (!AllElementsEqual(g, Child(g, *where, 1), 0)) continue;
    const Tensor* zero = g.value(Child(g, *where, 1));
    if (zero == nullptr || zero->num_elements() != 1) continue;
    DType t = g.type(p).dtype;
    if (t != DType::kFloat && t != DType::kBFloat16) continue;
    for (const ENode* isnan : g.FindOps(Child(g, *where, 0), "IsNaN")) {
      if (Child(g, *isnan, 0) == p && g.FindOp(p, "Softmax") != nullptr) return p;
    }
  }
  return kNoClass;
}

// MatMul(Softmax(MatMul(Q, Kt) * s [+ M]), V) -> Attention(Q, K, V[, M], scale=s)
// (also through a NaN guard on the softmax, NanGuardedSoftmax)
ClassId FuseAttention(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId p = Child(g, n, 0);
  ClassId v = Child(g, n, 1);
  std::vector<const ENode*> softmaxes = g.FindOps(p, "Softmax");
  if (softmaxes.empty()) {
    ClassId guarded = NanGuardedSoftmax(g, p);
    if (guarded != kNoClass) softmaxes = g.FindOps(guarded, "Softmax");
  }
  if (softmaxes.empty()) {
    if (g.FindOp(p, "Where") != nullptr) {
      return ctx.Decline("a Where between softmax and product that is not a float/bfloat16 NaN guard");
    }
    return ctx.Decline("not MatMul(Softmax(..), V)");
  }
  for (const ENode* softmax : softmaxes) {
    ClassId s = Child(g, *softmax, 0);
    const Shape* ss = RankedShape(g, s);
    if (ss == nullptr || ss->rank() != 4) {
      ctx.Decline("the softmax's input is not rank 4");
      continue;
    }
    if (!SoftmaxOverLastAxis(g, *softmax, ss->rank())) {
      ctx.Decline("the softmax is not over the last axis");
      continue;
    }
    ClassId result = AttentionOfScores(ctx, cls, s, v);
    if (result != kNoClass) return result;
  }
  return kNoClass;
}

// Attention(Q, repeat_kv(K), repeat_kv(V)[, mask]) -> Attention(Q, K, V[, mask]).
ClassId AbsorbKvRepeat(RuleContext& ctx, ClassId /*cls*/, const ENode& att) {
  EGraph& g = ctx.g;
  // Why: past key/value and their present outputs have the repeated heads'
  // shapes; 3-D inputs name their head counts in attributes.
  if (att.children.size() < 3 || att.children.size() > 4 || att.num_outputs != 1 ||
      att.op->FindAttr("kv_num_heads") != nullptr || att.op->FindAttr("q_num_heads") != nullptr) {
    return ctx.Decline("not a 4-D Attention without past key/value");
  }
  int64_t k_repeats = 0, v_repeats = 0;
  ClassId k = UnrepeatedKv(g, Child(g, att, 1), &k_repeats);
  ClassId v = UnrepeatedKv(g, Child(g, att, 2), &v_repeats);
  if (k == kNoClass || v == kNoClass) return ctx.Decline("K and V are not both repeat_kv copies");
  if (k_repeats != v_repeats) return ctx.Decline("K and V repeat their heads a different number of times");
  std::vector<ClassId> children = att.children;
  children[1] = k;
  children[2] = v;
  return g.AddOpLike(*att.op, std::move(children), 1);
}

}  // namespace

void AddAttentionRules(std::vector<Rule>& rules) {
  rules.push_back({"fuse_attention",
                   "MatMul(Softmax(MatMul(Q, Transpose(K)) * s + M), V) -> Attention(Q, K, V, M, scale=s)", "MatMul",
                   Exactness::kReassociating, 23, FuseAttention, "Attention"});
  rules.push_back({"absorb_kv_repeat",
                   "Attention(Q, Reshape(Expand(Unsqueeze(K, [2]))), Reshape(Expand(Unsqueeze(V, [2])))) -> "
                   "Attention(Q, K, V) (grouped-query heads)",
                   "Attention", Exactness::kExact, 23, AbsorbKvRepeat, "Attention"});
}

}  // namespace aic::rewrite

// Ops that do nothing on the values they get: Identity, Dropout at inference,
// Cast to the same type, Reshape/Expand/Slice/Transpose that keep the tensor as
// it is, single-input Concat, single-output Split, zero Pad, a Where whose
// constant condition picks one side, and neutral elements (x+0, x-0, x*1, x/1,
// x^1). Each rewrites to its input; CastLike with a known target type becomes
// the Cast it is.
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

bool SameTypeAs(const EGraph& g, ClassId a, ClassId b) {
  const Shape* sa = RankedShape(g, a);
  const Shape* sb = RankedShape(g, b);
  return sa && sb && SameShape(*sa, *sb) && g.type(a).dtype == g.type(b).dtype;
}

// Identity(x) -> x
ClassId RemoveIdentity(RuleContext& ctx, ClassId cls, const ENode& n) {
  return Child(ctx.g, n, 0);
}

// Dropout(x) -> x   (inference: training_mode is false or absent)
ClassId RemoveDropout(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  if (n.children.size() > 2 && n.children[2] != kNoClass) {
    // Why: with training_mode true, Dropout drops.
    if (!AllElementsEqual(ctx.g, Child(ctx.g, n, 2), 0)) return ctx.Decline("training_mode not known false");
  }
  if (n.num_outputs == 1) return x;
  ctx.extra_unions.emplace_back(ctx.g.Proj(cls, 0), x);
  return kNoClass;
}

// Cast(x, to=T) -> x   when x is already T
ClassId RemoveNoopCast(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  const TypeInfo& t = ctx.g.type(x);
  if (!t.is_tensor() || t.dtype != static_cast<DType>(n.op->GetInt("to", 0))) {
    return ctx.Decline("changes the dtype");
  }
  return x;
}

// CastLike(x, y) -> Cast(x, to=dtype(y))   when y's dtype is known: CastLike
// reads only y's type, so a y computed at run time need not keep the cast
// from folding (a constant x then folds) or the values it feeds from fusing.
ClassId CastLikeToCast(RuleContext& ctx, ClassId cls, const ENode& n) {
  const TypeInfo& like = ctx.g.type(Child(ctx.g, n, 1));
  if (!like.is_tensor() || like.dtype == DType::kUndefined) return ctx.Decline("target dtype not known");
  std::vector<Attribute> attrs = n.op->attributes;  // saturate, round_mode: Cast's too
  attrs.push_back(Attribute::Int("to", static_cast<int64_t>(like.dtype)));
  return ctx.g.AddOp("Cast", "", {Child(ctx.g, n, 0)}, std::move(attrs));
}

// Where(c, a, b) -> a (c all true) or b (c all false)   when c is a known
// constant and the chosen branch already has the result's shape (no broadcast)
ClassId SelectByConstantCondition(RuleContext& ctx, ClassId cls, const ENode& n) {
  const Tensor* c = ctx.g.value(Child(ctx.g, n, 0));
  if (c == nullptr || c->dtype() != DType::kBool || c->num_elements() == 0) return ctx.Decline("condition not constant");
  const auto* bits = static_cast<const uint8_t*>(c->raw_data());
  bool first = bits[0] != 0;
  for (int64_t i = 1; i < c->num_elements(); ++i) {
    if ((bits[i] != 0) != first) return ctx.Decline("condition not uniform");
  }
  ClassId chosen = Child(ctx.g, n, first ? 1 : 2);
  if (!SameTypeAs(ctx.g, cls, chosen)) return ctx.Decline("the chosen branch broadcasts (or its shape is not known)");
  return chosen;
}

// Reshape|Expand|Squeeze|Unsqueeze|Flatten(x, ..) -> x   when the shape stays the same
ClassId RemoveSameShape(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  if (!SameTypeAs(ctx.g, cls, x)) return ctx.Decline("output shape differs (or is not known)");
  return x;
}

// Slice(x, ..) -> x   when it keeps every element in order
ClassId RemoveNoopSlice(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  if (!SameTypeAs(ctx.g, cls, x)) return ctx.Decline("output shape differs (or is not known)");
  // Why: a step of -1 keeps the shape but reverses.
  if (n.children.size() > 4 && n.children[4] != kNoClass && !AllElementsEqual(ctx.g, Child(ctx.g, n, 4), 1)) {
    return ctx.Decline("steps other than 1");
  }
  return x;
}

// Transpose(x, perm=[0, 1, .., n-1]) -> x
ClassId RemoveNoopTranspose(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  const Shape* s = RankedShape(ctx.g, x);
  std::vector<int64_t> perm = n.op->GetInts("perm");
  if (perm.empty()) {
    if (s == nullptr || s->rank() > 1) return ctx.Decline("reverses the axes");
    return x;
  }
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return ctx.Decline("not the identity permutation");
  }
  return x;
}

// Concat(x) -> x ; Split(x) with one output -> x
ClassId RemoveSingleInput(RuleContext& ctx, ClassId cls, const ENode& n) {
  if (n.children.size() != 1 || n.num_outputs != 1) return ctx.Decline("more than one piece");
  ClassId x = Child(ctx.g, n, 0);
  if (!SameTypeAs(ctx.g, cls, x)) return ctx.Decline("shape not known equal");
  return x;
}

// Pad(x, pads=0) -> x
ClassId RemoveZeroPad(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = Child(ctx.g, n, 0);
  std::optional<std::vector<std::pair<int64_t, int64_t>>> pads = PadsOfENode(ctx.g, n);
  if (!pads) return ctx.Decline("pads not constant");
  // Why: +1 and -1 on one axis keep the shape but shift the data.
  for (const auto& [before, after] : *pads) {
    if (before != 0 || after != 0) return ctx.Decline("pads are not all zero");
  }
  // Zero pads copy x exactly, so x's shape is the result's even where the
  // inferred dims are only fresh symbols (pads that were computed at import).
  return x;
}

// x + 0 -> x ; 0 + x -> x ; x - 0 -> x ; x * 1 -> x ; 1 * x -> x ; x / 1 -> x ; x ^ 1 -> x
ClassId RemoveNeutralElement(RuleContext& ctx, ClassId cls, const ENode& n) {
  const std::string& op = n.op->op_type;
  double neutral = (op == "Add" || op == "Sub") ? 0.0 : 1.0;
  bool commutative = op == "Add" || op == "Mul";
  ClassId x = kNoClass;
  // x <op> c with c neutral.
  auto keeps_x = [&](ClassId a, ClassId c) {
    // Why: the neutral operand must not broadcast x to a bigger shape or change its type.
    if (!AllElementsEqual(ctx.g, c, neutral) || !SameTypeAs(ctx.g, cls, a)) return false;
    x = a;
    return true;
  };
  bool matched = commutative ? EitherOrder(ctx.g, n, keeps_x) : keeps_x(Child(ctx.g, n, 0), Child(ctx.g, n, 1));
  if (!matched) return ctx.Decline("no neutral constant operand of a non-broadcasting shape");
  return x;
}

}  // namespace

void AddNoopRules(std::vector<Rule>& rules) {
  rules.push_back({"remove_identity", "Identity(x) -> x", "Identity", Exactness::kExact, 1, RemoveIdentity});
  rules.push_back({"remove_dropout", "Dropout(x) -> x (inference)", "Dropout", Exactness::kExact, 1, RemoveDropout});
  rules.push_back({"remove_noop_cast", "Cast(x: T, to=T) -> x", "Cast", Exactness::kExact, 1, RemoveNoopCast});
  rules.push_back({"cast_like_to_cast", "CastLike(x, y: T) -> Cast(x, to=T)", "CastLike", Exactness::kExact, 1,
                   CastLikeToCast});
  rules.push_back({"select_by_constant_condition", "Where(true, a, b) -> a ; Where(false, a, b) -> b", "Where",
                   Exactness::kExact, 1, SelectByConstantCondition});
  rules.push_back({"remove_noop_reshape", "Reshape(x, s) -> x  when shape(x) == s", "Reshape", Exactness::kExact, 5, RemoveSameShape});
  rules.push_back({"remove_noop_expand", "Expand(x, s) -> x  when the result has x's shape", "Expand", Exactness::kExact, 8, RemoveSameShape});
  rules.push_back({"remove_noop_squeeze", "Squeeze(x) -> x  when nothing is squeezed", "Squeeze", Exactness::kExact, 1, RemoveSameShape});
  rules.push_back({"remove_noop_unsqueeze", "Unsqueeze(x) -> x  when nothing is added", "Unsqueeze", Exactness::kExact, 1, RemoveSameShape});
  rules.push_back({"remove_noop_flatten", "Flatten(x) -> x  when x is already 2-D that way", "Flatten", Exactness::kExact, 1, RemoveSameShape});
  rules.push_back({"remove_noop_slice", "Slice(x, ..) -> x  when it keeps everything", "Slice", Exactness::kExact, 1, RemoveNoopSlice});
  rules.push_back({"remove_noop_transpose", "Transpose(x, perm=identity) -> x", "Transpose", Exactness::kExact, 1, RemoveNoopTranspose});
  rules.push_back({"remove_single_concat", "Concat(x) -> x", "Concat", Exactness::kExact, 1, RemoveSingleInput});
  rules.push_back({"remove_single_split", "Split(x) with one output -> x", "Split", Exactness::kExact, 1, RemoveSingleInput});
  rules.push_back({"remove_zero_pad", "Pad(x, pads=0) -> x", "Pad", Exactness::kExact, 1, RemoveZeroPad});
  rules.push_back({"remove_add_zero", "x + 0 -> x ; 0 + x -> x", "Add", Exactness::kExact, 1, RemoveNeutralElement});
  rules.push_back({"remove_sub_zero", "x - 0 -> x", "Sub", Exactness::kExact, 1, RemoveNeutralElement});
  rules.push_back({"remove_mul_one", "x * 1 -> x ; 1 * x -> x", "Mul", Exactness::kExact, 1, RemoveNeutralElement});
  rules.push_back({"remove_div_one", "x / 1 -> x", "Div", Exactness::kExact, 1, RemoveNeutralElement});
  rules.push_back({"remove_pow_one", "x ^ 1 -> x", "Pow", Exactness::kExact, 1, RemoveNeutralElement});
}

}  // namespace aic::rewrite

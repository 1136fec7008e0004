// GroupNormalization recognised in the form torch exports it at opsets
// before 18 (timm's PoolFormer, wav2vec2's feature extractor, UNets):
//   Reshape(InstanceNormalization(Reshape(x, [N, G, -1]), s, b), shape(x))
// with s and b one value per group, then the module's per-channel `* gamma`
// and `+ beta` folded into the normalization's scale and bias. Emitted in
// its opset-21 form (scale and bias per channel): the standard op from
// opset 21 on, its ai.aic alias below for targets that run it.
#include <string>
#include <vector>

#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// The known value of dim i of a ranked shape, or -1.
int64_t DimValue(const Shape& s, int64_t i) { return s[i].is_value() ? s[i].value() : -1; }

// Reshape(InstanceNormalization(Reshape(x, [N, G, L]), s, b), back to x's
// shape) -> GroupNormalization(x, s', b', num_groups=G), s' and b' the
// group's value for each of its channels.
ClassId FuseGroupNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  for (const ENode* in : g.FindOps(Child(g, n, 0), "InstanceNormalization")) {
    if (in->num_outputs != 1 || in->children.size() < 3) continue;
    const ClassId grouped = Child(g, *in, 0);
    const Tensor* s = ChildValue(g, *in, 1);
    const Tensor* b = ChildValue(g, *in, 2);
    if (s == nullptr || b == nullptr || s->dtype() != DType::kFloat || b->dtype() != DType::kFloat) {
      return ctx.Decline("instance norm's scale or bias not a known float32 constant");
    }
    for (const ENode* r : g.FindOps(grouped, "Reshape")) {
      const ClassId x = Child(g, *r, 0);
      const Shape* xs = RankedShape(g, x);
      const Shape* gs = RankedShape(g, grouped);
      const Shape* out = RankedShape(g, cls);
      if (xs == nullptr || gs == nullptr || out == nullptr || xs->rank() < 3 || gs->rank() != 3) continue;
      if (g.type(x).dtype != DType::kFloat) return ctx.Decline("not float32");
      // Why: the result must be x's shape, and the grouped view x's batch
      // by G rows; with the element count kept, each row is then C/G
      // neighbouring channels of one sample, the groups GroupNormalization
      // takes.
      if (!SameShape(*out, *xs)) return ctx.Decline("the result is not x's shape");
      const int64_t channels = DimValue(*xs, 1), groups = DimValue(*gs, 1);
      if (channels <= 0 || groups <= 0 || channels % groups != 0) return ctx.Decline("channels or groups not known");
      if (!(*xs)[0].SameAs((*gs)[0])) return ctx.Decline("the grouped view is not per sample");
      if (s->num_elements() != groups || b->num_elements() != groups) {
        return ctx.Decline("scale and bias are not one value per group");
      }
      const int64_t per_group = channels / groups;
      std::vector<double> sv = ToDoubles(*s), bv = ToDoubles(*b), sc(channels), bc(channels);
      for (int64_t c = 0; c < channels; ++c) {
        sc[c] = sv[c / per_group];
        bc[c] = bv[c / per_group];
      }
      ClassId scale = g.AddConst(FromDoubles(sc, DType::kFloat, {channels}));
      ClassId bias = g.AddConst(FromDoubles(bc, DType::kFloat, {channels}));
      return AddNewerStandardOp(ctx, "GroupNormalization", {x, scale, bias},
                                {Attribute::Int("num_groups", groups),
                                 Attribute::Float("epsilon", in->op->GetFloat("epsilon", 1e-5f))});
    }
  }
  return ctx.Decline("not Reshape(InstanceNormalization(Reshape(x)))");
}

// GroupNormalization(x, s, b) * k -> GroupNormalization(x, s*k, b*k)
// GroupNormalization(x, s, b) + c -> GroupNormalization(x, s, b+c)   (k, c per channel)
ClassId FoldAffineIntoGroupNorm(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const bool is_mul = n.op->op_type == "Mul";
  ClassId folded = kNoClass;
  bool matched = EitherOrder(g, n, [&](ClassId normed, ClassId operand) {
    for (const ENode* gn : g.FindOps(normed, "GroupNormalization")) {
      if (gn->num_outputs != 1 || gn->children.size() < 3) continue;
      const Tensor* k = g.value(operand);
      const Tensor* s = ChildValue(g, *gn, 1);
      const Tensor* b = ChildValue(g, *gn, 2);
      const Shape* xs = RankedShape(g, normed);
      const Shape* out = RankedShape(g, cls);
      if (!k || !s || !b || !xs || !out || k->dtype() != DType::kFloat || s->dtype() != DType::kFloat ||
          b->dtype() != DType::kFloat || xs->rank() < 2 || !SameShape(*out, *xs)) {
        continue;
      }
      const int64_t channels = DimValue(*xs, 1);
      // Why: per-channel scale and bias only (GroupNormalization-18's per-group
      // form updated per channel would no longer be one value per group).
      if (channels <= 0 || s->num_elements() != channels || b->num_elements() != channels) continue;
      const std::vector<double> kc = PerChannelValues(*k, xs->rank(), channels);
      if (kc.empty()) continue;
      std::vector<double> sv = ToDoubles(*s), bv = ToDoubles(*b);
      FoldAffine(sv, bv, kc, is_mul);
      ClassId ns = g.AddConst(FromDoubles(sv, DType::kFloat, {channels}));
      ClassId nb = g.AddConst(FromDoubles(bv, DType::kFloat, {channels}));
      folded = g.AddOpLike(*gn->op, {Child(g, *gn, 0), ns, nb}, 1);
      return true;
    }
    return false;
  });
  if (!matched) return ctx.Decline("no GroupNormalization with per-channel constants");
  return folded;
}

}  // namespace

void AddGroupNormRules(std::vector<Rule>& rules) {
  rules.push_back({"fuse_group_norm",
                   "Reshape(InstanceNormalization(Reshape(x, [N, G, -1]), s, b), shape(x)) -> "
                   "GroupNormalization(x, s per channel, b per channel, num_groups=G)",
                   "Reshape", Exactness::kReassociating, 21, FuseGroupNorm, "GroupNormalization"});
  for (const char* root : {"Mul", "Add"}) {
    rules.push_back({"fold_affine_into_group_norm",
                     "GroupNormalization(x, s, b) * k + c -> GroupNormalization(x, s*k, b*k + c)   (k, c per channel)",
                     root, Exactness::kReassociating, 21, FoldAffineIntoGroupNorm, "GroupNormalization"});
  }
}

}  // namespace aic::rewrite

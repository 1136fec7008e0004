#include "tests/graph_fuzz/planted_bugs.h"

#include "rewrite/rules/rule_util.h"

namespace aic::graph_fuzz {

namespace {

using rewrite::ChildValue;
using rewrite::ClassId;
using rewrite::ENode;
using rewrite::kNoClass;
using rewrite::RuleContext;

// remove_mul_one without "the constant is 1": any splat constant is taken
// for the neutral element.
ClassId MulBySplat(RuleContext& ctx, ClassId cls, const ENode& n) {
  const Tensor* c = ChildValue(ctx.g, n, 1);
  if (c == nullptr || c->num_elements() != 1 || !rewrite::IsFloat(c->dtype())) return kNoClass;
  ClassId x = rewrite::Child(ctx.g, n, 0);
  const Shape* sx = rewrite::RankedShape(ctx.g, x);
  const Shape* sy = rewrite::RankedShape(ctx.g, cls);
  if (sx == nullptr || sy == nullptr || !rewrite::SameShape(*sx, *sy)) return kNoClass;
  return x;
}

// remove_noop_slice without its "steps are 1" check: a full-range slice with
// step -1 keeps the shape but reverses the axis.
ClassId SliceIgnoringSteps(RuleContext& ctx, ClassId cls, const ENode& n) {
  ClassId x = rewrite::Child(ctx.g, n, 0);
  const Shape* sx = rewrite::RankedShape(ctx.g, x);
  const Shape* sy = rewrite::RankedShape(ctx.g, cls);
  if (sx == nullptr || sy == nullptr || !rewrite::SameShape(*sx, *sy)) return kNoClass;
  if (ctx.g.type(x).dtype != ctx.g.type(cls).dtype) return kNoClass;
  return x;
}

const std::vector<rewrite::Rule>& PlantedBugs() {
  static const std::vector<rewrite::Rule> kBugs = {
      {"planted_mul_by_splat", "x * c -> x  for any splat c (the c == 1 check left out)", "Mul",
       rewrite::Exactness::kExact, 1, MulBySplat},
      {"planted_slice_ignoring_steps", "Slice(x, ..) -> x  when the shape is kept (steps not checked)", "Slice",
       rewrite::Exactness::kExact, 1, SliceIgnoringSteps},
  };
  return kBugs;
}

}  // namespace

const rewrite::Rule* FindPlantedBug(const std::string& name) {
  for (const rewrite::Rule& r : PlantedBugs()) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

std::vector<std::string> PlantedBugNames() {
  std::vector<std::string> names;
  for (const rewrite::Rule& r : PlantedBugs()) names.push_back(r.name);
  return names;
}

}  // namespace aic::graph_fuzz

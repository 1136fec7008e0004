// Consecutive linear maps merged into one when the cost model says it pays:
// x·A·B with A [m, h] and B [h, n] costs h(m+n) multiply-adds per row, x·(AB)
// costs mn, so merging pays when h > mn/(m+n). Never across a nonlinearity
// (the pattern only matches MatMul of MatMul) or a second consumer of x·A.
// The merged weight is computed in double and rounded once.
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// MatMul(MatMul(x, A), B) -> MatMul(x, A·B)   when h > mn/(m+n)
ClassId MergeLinearOps(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId inner_cls = Child(g, n, 0);
  const ENode* inner = g.FindOp(inner_cls, "MatMul");
  if (inner == nullptr) return ctx.Decline("input is not a MatMul");
  const Tensor* a = g.value(Child(g, *inner, 1));
  const Tensor* b = g.value(Child(g, n, 1));
  if (!a || !b || a->rank() != 2 || b->rank() != 2) return ctx.Decline("weights not constant 2-D");
  if (a->dtype() != b->dtype() || (a->dtype() != DType::kFloat && a->dtype() != DType::kDouble)) {
    return ctx.Decline("weights not float");
  }
  // Why: a second consumer keeps x·A alive, so merging adds work.
  if (g.UseCount(inner_cls) > 1) return ctx.Decline("x·A has another consumer");
  int64_t m = a->dim(0), h = a->dim(1), nn = b->dim(1);
  if (b->dim(0) != h) return ctx.Decline("inner dims differ");
  if (!(h * (m + nn) > m * nn)) return ctx.Decline("merging does not pay (h <= mn/(m+n))");
  std::vector<double> av = ToDoubles(*a), bv = ToDoubles(*b), out(static_cast<size_t>(m * nn), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t k = 0; k < h; ++k) {
      double x = av[i * h + k];
      for (int64_t j = 0; j < nn; ++j) out[i * nn + j] += x * bv[k * nn + j];
    }
  }
  ClassId w = g.AddConst(FromDoubles(out, a->dtype(), {m, nn}));
  return g.AddOp("MatMul", "", {Child(g, *inner, 0), w});
}

}  // namespace

void AddLinearRules(std::vector<Rule>& rules) {
  Rule merge{"merge_linear_ops", "MatMul(MatMul(x, A), B) -> MatMul(x, A·B)  when h > mn/(m+n)", "MatMul",
             Exactness::kReassociating, 1, MergeLinearOps};
  merge.level = 3;
  rules.push_back(merge);
}

}  // namespace aic::rewrite

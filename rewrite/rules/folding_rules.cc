// Constant folding: an e-class whose value the analysis knows (every input
// constant, computed by the reference kernels) gets a Const leaf; extraction
// then prefers the leaf. Guarded by the file-size budget (--fold-limit) and,
// for files, by keeping DequantizeLinear of quantized weights as it is.
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Values this small are shape arithmetic: always worth folding.
constexpr int64_t kAlwaysFoldElements = 64;

bool WithinBudget(RuleContext& ctx, const ENode& n, const Tensor& v) {
  if (n.op->op_type == "Constant") return true;  // moves an attribute to an initializer
  if (v.num_elements() <= kAlwaysFoldElements) return true;
  int64_t in_bytes = 0;
  for (ClassId c : n.children) {
    if (c == kNoClass) continue;
    if (const Tensor* t = ctx.g.value(c)) in_bytes += static_cast<int64_t>(t->byte_size());
  }
  return static_cast<int64_t>(v.byte_size()) <= in_bytes + ctx.options.fold_limit;
}

// n is a DequantizeLinear, or reads one (a Transpose or Reshape of a
// dequantized weight would fold the weight to float just the same).
bool ReadsDequantized(const EGraph& g, const ENode& n) {
  if (n.op->op_type == "DequantizeLinear" && n.op->domain.empty()) return true;
  for (ClassId c : n.children) {
    if (c != kNoClass && g.FindOp(c, "DequantizeLinear") != nullptr) return true;
  }
  return false;
}

// op(c1, .., cn) with all ci constant -> Const(op(c1, .., cn))
ClassId FoldConstants(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (g.data(cls).is_tuple) {
    for (size_t i = 0; i < g.data(cls).values.size(); ++i) {
      const auto& v = g.data(cls).values[i];
      if (!v || !WithinBudget(ctx, n, *v)) continue;
      ClassId p = g.Proj(cls, static_cast<int64_t>(i));
      if (g.HasConstLeaf(p)) continue;
      Tensor copy = *v;
      ctx.extra_unions.emplace_back(p, g.AddConst(std::move(copy)));
    }
    return kNoClass;
  }
  const Tensor* v = g.value(cls);
  if (v == nullptr) return ctx.Decline("value not known statically");
  if (!ctx.options.fold_dequantize && ReadsDequantized(g, n)) {
    return ctx.Decline("keeps quantized weights quantized (--fold-dequantize folds them)");
  }
  if (g.HasConstLeaf(cls)) return kNoClass;
  if (!WithinBudget(ctx, n, *v)) return ctx.Decline("folding would grow the file past --fold-limit");
  Tensor copy = *v;
  return g.AddConst(std::move(copy), g.data(cls).name);
}

}  // namespace

void AddFoldingRules(std::vector<Rule>& rules) {
  rules.push_back({"fold_constants", "op(c1, .., cn) -> Const", "*", Exactness::kExact, 1,
                   FoldConstants});
}

}  // namespace aic::rewrite

// Consecutive linear maps merged into one when the cost model says it pays:
// x·A·B with A [m, h] and B [h, n] costs h(m+n) multiply-adds per row, x·(AB)
// costs mn, so merging pays when h > mn/(m+n). Never across a nonlinearity
// (the pattern only matches MatMul of MatMul) or a second consumer of x·A.
// The merged weight is computed in double and rounded once. Average pooling
// moves before a pointwise conv it follows (both linear per position and per
// channel), so the conv runs on the pooled positions.
// An Einsum of two operands that is one batched matrix product
// ("bhqd,bhkd->bhqk", "bij,bjk->bik") becomes Transposes around a MatMul,
// which every backend runs on its GEMM (and the CPU backend reads the
// transposed operands in place); further output letters of one operand only
// (Funnel's "binh,tnh->bnit": b and i both a's) become batch dims that the
// other operand, unsqueezed there, broadcasts over; several contracted
// letters of known sizes become one by Reshapes. An Einsum of one operand is
// a ReduceSum and a Transpose.
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

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

// The perm taking `from`'s letters to the order of `to` (same letters).
std::vector<int64_t> PermTo(const std::string& from, const std::string& to) {
  std::vector<int64_t> perm;
  for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

ClassId TransposedTo(EGraph& g, ClassId x, const std::string& from, const std::string& to) {
  std::vector<int64_t> perm = PermTo(from, to);
  return IsIdentity(perm) ? x : g.AddOp("Transpose", "", {x}, {Attribute::Ints("perm", perm)});
}

// Consecutive axes [from, from + count).
std::vector<int64_t> AxesFrom(size_t from, size_t count) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < count; ++i) axes.push_back(static_cast<int64_t>(from + i));
  return axes;
}

// Reshape(x, [0 × keep, tail..]): x's first `keep` dims copied, the rest as
// `tail` (at most one -1).
ClassId ReshapeKeeping(EGraph& g, ClassId x, size_t keep, std::vector<int64_t> tail) {
  std::vector<int64_t> target(keep, 0);
  target.insert(target.end(), tail.begin(), tail.end());
  return g.AddOp("Reshape", "", {x, g.AddConst(Int64Tensor(target, {static_cast<int64_t>(target.size())}))});
}

// An Einsum equation without spaces, split at the comma(s) and the arrow;
// false where it has no explicit output or a term is not distinct letters
// (ellipses, repeated letters for diagonals: more than a product).
bool SplitEquation(const std::string& equation, std::vector<std::string>& terms, std::string& out) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos) return false;
  out = eq.substr(arrow + 2);
  terms = absl::StrSplit(eq.substr(0, arrow), ',');
  terms.push_back(out);
  for (const std::string& t : terms) {
    for (size_t i = 0; i < t.size(); ++i) {
      // Why: labels are letters of either case, upper and lower distinct.
      if (!std::isalpha(static_cast<unsigned char>(t[i])) || t.find(t[i], i + 1) != std::string::npos) return false;
    }
  }
  terms.pop_back();
  return true;
}

// Einsum(a, b) -> Transpose(MatMul(Transpose(a), Transpose(b)))  for
// equations "A,B->O" of distinct letters where, besides batch letters (in a,
// b and the output), at least one letter is contracted (a and b), and at
// least one is a's row (a and the output) and one b's column (b and the
// output). The last row and column letters are the product's matrix; further
// ones are batch dims of their operand, the other operand unsqueezed there
// (size 1: MatMul broadcasts it). Several contracted letters (XLNet's
// "ibnd,hnd->ibh", the heads and their width) become one by a Reshape of
// both operands, where their sizes are known.
// Einsum(a) -> Transpose(ReduceSum(a))  for one operand of distinct letters
// (XLNet's "ijbn->bnij").
ClassId EinsumToMatMul(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  std::vector<std::string> terms;
  std::string out;
  if (!SplitEquation(n.op->GetString("equation", ""), terms, out)) {
    return ctx.Decline("no explicit output, or not distinct letters");
  }
  if (terms.size() != n.children.size()) return ctx.Decline("terms and operands differ in number");
  if (terms.size() == 1) {
    const std::string& a = terms[0];
    std::vector<int64_t> summed;
    std::string kept;
    for (size_t i = 0; i < a.size(); ++i) {
      if (out.find(a[i]) == std::string::npos) summed.push_back(static_cast<int64_t>(i));
      else kept += a[i];
    }
    for (char c : out) {
      if (a.find(c) == std::string::npos) return ctx.Decline("an output letter not in the operand");
    }
    const Shape* as = RankedShape(g, Child(g, n, 0));
    if (!as || as->rank() != static_cast<int64_t>(a.size())) return ctx.Decline("operand rank unknown");
    ClassId x = Child(g, n, 0);
    if (!summed.empty()) {
      // Why: ReduceSum takes its axes as an input from opset 13, an attribute before.
      if (g.opset() >= 13) {
        ClassId axes = g.AddConst(Int64Tensor(summed, {static_cast<int64_t>(summed.size())}));
        x = g.AddOp("ReduceSum", "", {x, axes}, {Attribute::Int("keepdims", 0)});
      } else {
        x = g.AddOp("ReduceSum", "", {x}, {Attribute::Ints("axes", summed), Attribute::Int("keepdims", 0)});
      }
    }
    return TransposedTo(g, x, kept, out);
  }
  if (terms.size() != 2) return ctx.Decline("not one or two operands");
  const std::string& a = terms[0];
  const std::string& b = terms[1];
  std::string batch, row, col, contracted;
  for (char c : out) {
    bool in_a = a.find(c) != std::string::npos, in_b = b.find(c) != std::string::npos;
    if (in_a && in_b) batch += c;
    else if (in_a) row += c;
    else if (in_b) col += c;
    else return ctx.Decline("an output letter in neither operand");
  }
  for (char c : a) {
    if (out.find(c) == std::string::npos) {
      if (b.find(c) == std::string::npos) return ctx.Decline("a letter summed within one operand");
      contracted += c;
    }
  }
  for (char c : b) {
    if (out.find(c) == std::string::npos && a.find(c) == std::string::npos) {
      return ctx.Decline("a letter summed within one operand");
    }
  }
  if (row.empty() || col.empty() || contracted.empty()) {
    return ctx.Decline("no contracted letter, or no row or column letter");
  }
  // Why: MatMul broadcasts batch dims of 1; Einsum's letters must match: the
  // same known value or the same symbol in both operands.
  const Shape* as = RankedShape(g, Child(g, n, 0));
  const Shape* bs = RankedShape(g, Child(g, n, 1));
  if (!as || !bs || as->rank() != static_cast<int64_t>(a.size()) || bs->rank() != static_cast<int64_t>(b.size())) {
    return ctx.Decline("operand ranks unknown");
  }
  for (char c : batch) {
    const Dim& da = (*as)[static_cast<int64_t>(a.find(c))];
    const Dim& db = (*bs)[static_cast<int64_t>(b.find(c))];
    if (!da.SameAs(db)) return ctx.Decline("batch dims not the same");
  }
  int64_t contracted_size = 1;
  if (contracted.size() > 1) {
    for (char c : contracted) {
      const Dim& da = (*as)[static_cast<int64_t>(a.find(c))];
      const Dim& db = (*bs)[static_cast<int64_t>(b.find(c))];
      if (!da.is_value() || !db.is_value() || da.value() != db.value()) {
        return ctx.Decline("several contracted letters of unknown sizes");
      }
      contracted_size *= da.value();
    }
  }
  if (!IsFloat(g.type(Child(g, n, 0)).dtype)) return ctx.Decline("not a float tensor");
  const std::string extra_rows = row.substr(0, row.size() - 1), extra_cols = col.substr(0, col.size() - 1);
  const std::string r = row.substr(row.size() - 1), c = col.substr(col.size() - 1);
  // lhs: batch + extra rows + (1 per extra column) + r + k; rhs: batch +
  // (1 per extra row) + extra columns + k + c.
  ClassId lhs = TransposedTo(g, Child(g, n, 0), a, batch + extra_rows + r + contracted);
  ClassId rhs = TransposedTo(g, Child(g, n, 1), b, batch + extra_cols + contracted + c);
  if (contracted.size() > 1) {
    lhs = ReshapeKeeping(g, lhs, batch.size() + extra_rows.size() + 1, {contracted_size});
    rhs = ReshapeKeeping(g, rhs, batch.size() + extra_cols.size(), {contracted_size, -1});
  }
  if (!extra_cols.empty()) lhs = AddUnsqueeze(g, lhs, AxesFrom(batch.size() + extra_rows.size(), extra_cols.size()));
  if (!extra_rows.empty()) rhs = AddUnsqueeze(g, rhs, AxesFrom(batch.size(), extra_rows.size()));
  ClassId product = g.AddOp("MatMul", "", {lhs, rhs});
  return TransposedTo(g, product, batch + extra_rows + extra_cols + r + c, out);
}

// AveragePool(Conv(x, W, b)) -> Conv(AveragePool(x), W, b)   (W 1×1, the pool unpadded)
// GlobalAveragePool(Conv(x, W, b)) -> Conv(GlobalAveragePool(x), W, b)
// A pointwise conv maps each position's channels by one matrix and adds b;
// averaging positions per channel commutes with it (b averages to itself).
// Pooling first runs the conv on 1/(sh·sw) of the positions: DenseNet's
// transitions (1×1 conv, then 2×2 average pool of stride 2) do a quarter of
// their multiply-adds. The cost model keeps the cheaper order.
ClassId PoolBeforePointwiseConv(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId conv_cls = Child(g, n, 0);
  const ENode* conv = g.FindOp(conv_cls, "Conv");
  if (conv == nullptr) return ctx.Decline("input is not a Conv");
  // Why: a second consumer keeps the full-size conv, so pooling first adds work.
  if (g.UseCount(conv_cls) > 1) return ctx.Decline("the conv has another consumer");
  const TypeInfo& wt = g.type(Child(g, *conv, 1));
  if (!wt.shape.has_rank() || !wt.shape.IsStatic() || wt.shape.rank() < 3) return ctx.Decline("weight shape unknown");
  const std::vector<int64_t> wd = wt.shape.Values();
  const size_t spatial = wd.size() - 2;
  for (size_t i = 2; i < wd.size(); ++i) {
    if (wd[i] != 1) return ctx.Decline("not a 1x1 conv");
  }
  const std::string conv_pad = conv->op->GetString("auto_pad", "NOTSET");
  if (conv_pad != "NOTSET" && conv_pad != "VALID") return ctx.Decline("conv auto_pad");
  for (const char* attr : {"strides", "dilations"}) {
    for (int64_t v : conv->op->GetInts(attr, std::vector<int64_t>(spatial, 1))) {
      if (v != 1) return ctx.Decline(std::string("conv ") + attr + " not 1");
    }
  }
  for (int64_t p : conv->op->GetInts("pads")) {
    if (p != 0) return ctx.Decline("conv padded");
  }
  if (n.op->op_type == "AveragePool") {
    // Why: with pads, or a window running past the end (ceil_mode), a
    // border window averages fewer inputs or counts zeros, which a constant
    // b would not pass through unchanged under count_include_pad.
    const std::string pool_pad = n.op->GetString("auto_pad", "NOTSET");
    if (pool_pad != "NOTSET" && pool_pad != "VALID") return ctx.Decline("pool auto_pad");
    if (n.op->GetInt("ceil_mode", 0) != 0) return ctx.Decline("ceil_mode");
    for (int64_t p : n.op->GetInts("pads")) {
      if (p != 0) return ctx.Decline("pool padded");
    }
    for (int64_t d : n.op->GetInts("dilations")) {
      if (d != 1) return ctx.Decline("pool dilated");
    }
  }
  if (!IsFloat(g.type(Child(g, *conv, 0)).dtype)) return ctx.Decline("not a float tensor");
  ClassId pooled = g.AddOp(n.op->op_type, "", {Child(g, *conv, 0)}, n.op->attributes);
  std::vector<ClassId> children = conv->children;
  children[0] = pooled;
  return g.AddOp("Conv", "", children, conv->op->attributes);
}

}  // namespace

void AddLinearRules(std::vector<Rule>& rules) {
  rules.push_back({"einsum_to_matmul", "Einsum(a, b) as one batched product -> Transpose(MatMul(Transpose(a), Transpose(b))); Einsum(a) -> Transpose(ReduceSum(a))",
                   "Einsum", Exactness::kReassociating, 12, EinsumToMatMul});
  Rule merge{"merge_linear_ops", "MatMul(MatMul(x, A), B) -> MatMul(x, A·B)  when h > mn/(m+n)", "MatMul",
             Exactness::kReassociating, 1, MergeLinearOps};
  merge.level = 3;
  rules.push_back(merge);
  rules.push_back({"pool_before_pointwise_conv", "AveragePool(Conv(x, W 1x1, b)) -> Conv(AveragePool(x), W, b)",
                   "AveragePool", Exactness::kReassociating, 1, PoolBeforePointwiseConv});
  rules.push_back({"global_pool_before_pointwise_conv",
                   "GlobalAveragePool(Conv(x, W 1x1, b)) -> Conv(GlobalAveragePool(x), W, b)", "GlobalAveragePool",
                   Exactness::kReassociating, 1, PoolBeforePointwiseConv});
}

}  // namespace aic::rewrite

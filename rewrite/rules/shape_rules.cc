// Shape arithmetic and layout ops: Shape -> Gather/Slice -> Concat chains fold
// for every dim that is known even when others (the batch) are symbolic;
// Reshape shapes computed from the input's own dims become constants using `0`
// copies (exact) and one `-1`; chained Reshapes and Transposes compose.
#include <algorithm>

#include "absl/strings/match.h"
#include "ops/tensor/slice_params.h"
#include "rewrite/egraph/cost_model.h"
#include "absl/container/flat_hash_map.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// One element of a shape-valued tensor: a known integer, or dim `dim` of `of`.
struct SymInt {
  bool known = false;
  int64_t value = 0;
  ClassId of = kNoClass;
  int64_t dim = -1;
  std::string symbol;  // the dim's symbol when it has a stable name
};

constexpr int kMaxDepth = 12;

// A part of a shape we do not follow (batch * 64, a Where, ...) whose length
// is known: that many unknown elements, so that the parts around it still
// count (a Reshape target with one such element takes a -1).
std::optional<std::vector<SymInt>> OpaqueInts(const EGraph& g, ClassId c) {
  const Shape* s = RankedShape(g, c);
  if (s == nullptr || s->rank() > 1) return std::nullopt;
  int64_t count = 1;
  if (s->rank() == 1) {
    if (!(*s)[0].is_value() || (*s)[0].value() > 64) return std::nullopt;
    count = (*s)[0].value();
  }
  return std::vector<SymInt>(static_cast<size_t>(count));
}

// One question's walk over the e-graph: what each class visited gave. Why:
// a class can hold several forms and each form's operands several more, so
// trying them all afresh at every level is exponential in the depth (a
// fuzzed graph of nested Where/Concat shapes kept opt busy for minutes).
// Each class is worked out once per walk; a class that failed only because
// the walk was deep when it got there stays failed (conservative).
using SymbolicWalk = absl::flat_hash_map<ClassId, std::optional<std::vector<SymInt>>>;

std::optional<std::vector<SymInt>> SymbolicInts(const EGraph& g, ClassId c, int depth, SymbolicWalk& walk);

std::optional<std::vector<SymInt>> FromNode(const EGraph& g, const ENode& n, int depth, SymbolicWalk& walk) {
  const std::string& op = n.op->op_type;
  auto child = [&](size_t i) { return Child(g, n, i); };
  if (op == "Shape") {
    const Shape* s = RankedShape(g, child(0));
    if (s == nullptr) return std::nullopt;
    int64_t r = s->rank();
    int64_t start = n.op->GetInt("start", 0);
    int64_t end = n.op->GetInt("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
    std::vector<SymInt> out;
    for (int64_t j = start; j < end; ++j) {
      SymInt e;
      const Dim& d = (*s)[j];
      if (d.is_value()) {
        e.known = true;
        e.value = d.value();
      } else {
        e.of = child(0);
        e.dim = j;
        if (d.is_symbol() && !absl::StartsWith(d.symbol(), "unk__")) e.symbol = d.symbol();
      }
      out.push_back(e);
    }
    return out;
  }
  if (op == "Cast") {
    DType to = static_cast<DType>(n.op->GetInt("to", 0));
    if (to != DType::kInt64 && to != DType::kInt32) return std::nullopt;
    return SymbolicInts(g, child(0), depth + 1, walk);
  }
  if (op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
    return SymbolicInts(g, child(0), depth + 1, walk);
  }
  if (op == "Concat") {
    std::vector<SymInt> out;
    for (size_t i = 0; i < n.children.size(); ++i) {
      auto part = SymbolicInts(g, child(i), depth + 1, walk);
      if (!part) part = OpaqueInts(g, child(i));
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (op == "Gather") {
    if (n.op->GetInt("axis", 0) != 0) return std::nullopt;
    auto data = SymbolicInts(g, child(0), depth + 1, walk);
    auto idx = IntValues(g, child(1));
    if (!data || !idx) return std::nullopt;
    std::vector<SymInt> out;
    int64_t size = static_cast<int64_t>(data->size());
    for (int64_t i : *idx) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.push_back((*data)[i]);
    }
    return out;
  }
  if (op == "Where") {
    // Where(c, a, b) with c known: element by element from a or b (torch's
    // Expand spells its target Where(shape == -1, 1, shape)).
    const Tensor* cond = g.value(child(0));
    auto a = SymbolicInts(g, child(1), depth + 1, walk);
    auto b = SymbolicInts(g, child(2), depth + 1, walk);
    if (cond == nullptr || cond->dtype() != DType::kBool || cond->rank() > 1 || !a || !b) return std::nullopt;
    size_t size = std::max({static_cast<size_t>(cond->num_elements()), a->size(), b->size()});
    auto fits = [&](size_t k) { return k == size || k == 1; };
    if (!fits(static_cast<size_t>(cond->num_elements())) || !fits(a->size()) || !fits(b->size())) return std::nullopt;
    std::vector<SymInt> out;
    for (size_t i = 0; i < size; ++i) {
      bool pick_a = cond->ElementAsDouble(cond->num_elements() == 1 ? 0 : static_cast<int64_t>(i)) != 0;
      const std::vector<SymInt>& from = pick_a ? *a : *b;
      out.push_back(from[from.size() == 1 ? 0 : i]);
    }
    return out;
  }
  if (op == "Slice") {
    auto data = SymbolicInts(g, child(0), depth + 1, walk);
    if (!data) return std::nullopt;
    int64_t size = static_cast<int64_t>(data->size());
    auto params = SliceParamsOf(*n.op, g.opset(), 1, [&](size_t i) -> std::optional<std::vector<int64_t>> {
      return i < n.children.size() && n.children[i] != kNoClass ? IntValues(g, child(i)) : std::nullopt;
    });
    if (!params.ok() || !params->has_value() || (*params)->starts.size() != 1 || (*params)->steps[0] != 1) {
      return std::nullopt;
    }
    AxisRange r = ClampSlice((*params)->starts[0], (*params)->ends[0], 1, size);
    int64_t b = r.start, e = r.start + r.count;
    std::vector<SymInt> out;
    for (int64_t i = b; i < e; ++i) out.push_back((*data)[i]);
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<SymInt>> SymbolicInts(const EGraph& g, ClassId c, int depth, SymbolicWalk& walk) {
  if (c == kNoClass || depth > kMaxDepth) return std::nullopt;
  c = g.Find(c);
  if (auto seen = walk.find(c); seen != walk.end()) return seen->second;
  std::optional<std::vector<SymInt>> result;
  if (auto v = IntValues(g, c)) {
    std::vector<SymInt> out;
    for (int64_t x : *v) out.push_back(SymInt{true, x, kNoClass, -1, ""});
    result = std::move(out);
  } else {
    for (int32_t i : g.data(c).nodes) {
      const ENode& n = g.node(i);
      if (n.kind != ENodeKind::kOp) continue;
      if ((result = FromNode(g, n, depth, walk))) break;
    }
  }
  walk[c] = result;
  return result;
}

// The walks the rules start.
std::optional<std::vector<SymInt>> SymbolicInts(const EGraph& g, ClassId c) {
  SymbolicWalk walk;
  return SymbolicInts(g, c, 0, walk);
}
std::optional<std::vector<SymInt>> FromNode(const EGraph& g, const ENode& n) {
  SymbolicWalk walk;
  return FromNode(g, n, 0, walk);
}

// Shape/Gather/Slice/Concat/Cast over shapes -> Const   when every element is known
ClassId FoldShapeArithmetic(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (g.value(cls) != nullptr) return kNoClass;  // fold_constants' job
  const TypeInfo& t = g.type(cls);
  if (!t.is_tensor() || (t.dtype != DType::kInt64 && t.dtype != DType::kInt32) ||
      !t.shape.has_rank() || t.shape.rank() > 1) {
    return ctx.Decline("not a 0-D/1-D integer tensor");
  }
  auto elems = FromNode(g, n);
  if (!elems) return ctx.Decline("not shape arithmetic we follow");
  std::vector<int64_t> values;
  for (const SymInt& e : *elems) {
    if (!e.known) return ctx.Decline("a dim is not known");
    values.push_back(e.value);
  }
  if (t.shape.rank() == 0 && values.size() != 1) return ctx.Decline("scalar of several elements");
  std::vector<int64_t> dims;
  if (t.shape.rank() == 1) dims.push_back(static_cast<int64_t>(values.size()));
  Tensor out = Int64Tensor(values, dims);
  if (t.dtype == DType::kInt32) {
    std::vector<int32_t> v32(values.begin(), values.end());
    out = Tensor::FromVector<int32_t>(v32, dims);
  }
  return g.AddConst(std::move(out));
}

// Equal(s, c) over shape elements -> Const   when every element is decided: both
// known, the same dim of the same value, or a dim (never negative) against a
// negative constant (torch's `shape == -1` before an Expand).
ClassId FoldShapeComparison(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (g.value(cls) != nullptr) return kNoClass;  // fold_constants' job
  const Shape* out_shape = RankedShape(g, cls);
  if (out_shape == nullptr || out_shape->rank() > 1) return ctx.Decline("not a 0-D/1-D comparison");
  auto a = SymbolicInts(g, Child(g, n, 0));
  auto b = SymbolicInts(g, Child(g, n, 1));
  if (!a || !b) return ctx.Decline("not shape elements we follow");
  size_t size = std::max(a->size(), b->size());
  if ((a->size() != size && a->size() != 1) || (b->size() != size && b->size() != 1)) {
    return ctx.Decline("lengths do not broadcast");
  }
  auto is_dim = [](const SymInt& e) { return !e.known && (e.of != kNoClass || !e.symbol.empty()); };
  auto same_dim = [](const SymInt& x, const SymInt& y) {
    return (x.of != kNoClass && x.of == y.of && x.dim == y.dim) || (!x.symbol.empty() && x.symbol == y.symbol);
  };
  std::vector<uint8_t> result;
  for (size_t i = 0; i < size; ++i) {
    const SymInt& x = (*a)[a->size() == 1 ? 0 : i];
    const SymInt& y = (*b)[b->size() == 1 ? 0 : i];
    if (x.known && y.known) {
      result.push_back(x.value == y.value);
    } else if ((is_dim(x) && y.known && y.value < 0) || (is_dim(y) && x.known && x.value < 0)) {
      result.push_back(0);
    } else if (is_dim(x) && is_dim(y) && same_dim(x, y)) {
      result.push_back(1);
    } else {
      return ctx.Decline("an element is not decided");
    }
  }
  std::vector<int64_t> dims;
  if (out_shape->rank() == 1) dims.push_back(static_cast<int64_t>(size));
  else if (size != 1) return ctx.Decline("scalar of several elements");
  Tensor t(DType::kBool, dims);
  for (size_t i = 0; i < size; ++i) t.mutable_data<uint8_t>()[i] = result[i];
  return g.AddConst(std::move(t));
}

// Reshape(x, Concat(Shape(x)[i].., c..)) -> Reshape(x, [0.., c.., -1])   (0 copies dim i of x)
ClassId UseReshapeCopies(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId x = Child(g, n, 0);
  ClassId s = Child(g, n, 1);
  if (s == kNoClass || g.value(s) != nullptr) return kNoClass;
  // Why: with allowzero=1 a 0 means an empty dim, not a copy.
  if (n.op->GetInt("allowzero", 0) != 0) return ctx.Decline("allowzero");
  const Shape* xs = RankedShape(g, x);
  if (xs == nullptr) return ctx.Decline("rank of the input unknown");
  auto elems = SymbolicInts(g, s);
  if (!elems) return ctx.Decline("shape not followed");
  // What inference proved of the result: a dim it knows settles an element
  // the target spells as -1 or as a dim of another position
  // (view(-1, seq, 32) of a [1, 8, seq, 32] is [8, seq, 32]).
  const Shape* out = RankedShape(g, cls);
  if (out != nullptr && out->rank() != static_cast<int64_t>(elems->size())) out = nullptr;
  auto known_out = [&](size_t i) -> std::optional<int64_t> {
    if (out == nullptr || !(*out)[i].is_value() || (*out)[i].value() <= 0) return std::nullopt;
    return (*out)[i].value();
  };
  std::vector<int64_t> target;
  int unresolved = 0;
  for (size_t i = 0; i < elems->size(); ++i) {
    const SymInt& e = (*elems)[i];
    if (e.known) {
      if (e.value == -1) {
        if (auto v = known_out(i)) {
          target.push_back(*v);
          continue;
        }
        ++unresolved;
      }
      target.push_back(e.value);
      continue;
    }
    if (auto v = known_out(i)) {
      target.push_back(*v);
      continue;
    }
    // A symbol of the e-graph names one dim (file names, inference's and our
    // fresh ones; never another tool's unk__, see AdoptImportedTypes), so the
    // result's dim i named as x's dim i is a copy.
    bool same_symbol_as_input = out != nullptr && static_cast<int64_t>(i) < xs->rank() &&
                                (*out)[i].is_symbol() && (*xs)[i].is_symbol() &&
                                (*out)[i].symbol() == (*xs)[i].symbol();
    bool copy = static_cast<int64_t>(i) < xs->rank() &&
                ((e.of == x && e.dim == static_cast<int64_t>(i)) || same_symbol_as_input ||
                 (!e.symbol.empty() && (*xs)[i].is_symbol() && (*xs)[i].symbol() == e.symbol));
    if (copy) {
      target.push_back(0);
    } else {
      ++unresolved;
      target.push_back(-1);
    }
  }
  // Why: one -1 is determined by the element count; two are not.
  if (unresolved > 1) return ctx.Decline("more than one dim unknown");
  ClassId shape = g.AddConst(Int64Tensor(target, {static_cast<int64_t>(target.size())}));
  return g.AddOpLike(*n.op, {x, shape}, 1);
}

// Reshape(Reshape(x, s1), s2) -> Reshape(x, s2)   (also Flatten/Squeeze/Unsqueeze; x when shapes match)
ClassId ComposeReshapes(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId y = Child(g, n, 0);
  const ENode* inner = nullptr;
  for (int32_t i : g.data(y).nodes) {
    const ENode& m = g.node(i);
    if (m.kind == ENodeKind::kOp && IsReshapeLike(*m.op)) {
      inner = &m;
      break;
    }
  }
  if (inner == nullptr) return ctx.Decline("input is not reshaped");
  ClassId x = Child(g, *inner, 0);
  const Shape* out = RankedShape(g, cls);
  const Shape* xs = RankedShape(g, x);
  if (out && xs && SameShape(*out, *xs)) return x;
  if (n.op->op_type == "Reshape" && n.op->GetInt("allowzero", 0) == 0) {
    // Why: a 0 in s2 copies a dim of the intermediate, which x may not have.
    if (auto s2 = IntValues(g, Child(g, n, 1))) {
      bool has_zero = false;
      for (int64_t v : *s2) has_zero = has_zero || v == 0;
      if (!has_zero) return g.AddOpLike(*n.op, {x, Child(g, n, 1)}, 1);
    }
  }
  if (out && out->IsStatic() && g.opset() >= 5) {
    std::vector<int64_t> dims = out->Values();
    ClassId shape = g.AddConst(Int64Tensor(dims, {static_cast<int64_t>(dims.size())}));
    return g.AddOp("Reshape", "", {x, shape});
  }
  return ctx.Decline("target shape not constant without 0 copies");
}

std::vector<int64_t> PermOf(const EGraph& g, const ENode& n) {
  std::vector<int64_t> perm = n.op->GetInts("perm");
  if (perm.empty()) {
    const Shape* s = RankedShape(g, Child(g, n, 0));
    if (s == nullptr) return {};
    for (int64_t i = s->rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  return perm;
}

// Transpose(Transpose(x, p1), p2) -> Transpose(x, p1∘p2)
ClassId ComposeTransposes(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const ENode* inner = g.FindOp(Child(g, n, 0), "Transpose");
  if (inner == nullptr) return ctx.Decline("input is not a Transpose");
  std::vector<int64_t> p1 = PermOf(g, *inner);
  std::vector<int64_t> p2 = PermOf(g, n);
  if (p1.empty() || p1.size() != p2.size()) return ctx.Decline("permutations unknown");
  std::vector<int64_t> p(p2.size());
  for (size_t i = 0; i < p2.size(); ++i) p[i] = p1[p2[i]];
  return g.AddOp("Transpose", "", {Child(g, *inner, 0)}, {Attribute::Ints("perm", p)});
}

// Transpose(x, perm) -> Reshape(x, s)   when perm only moves axes of size 1
// (Swin's window partition once the map is one window: [B, 1, 7, 1, 7, C]).
// The elements keep their order, so the Transpose is a reshape; Reshape is a
// view and composes with the reshapes around it.
ClassId TransposeAsReshape(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId x = Child(g, n, 0);
  const Shape* xs = RankedShape(g, x);
  std::vector<int64_t> perm = PermOf(g, n);
  if (xs == nullptr || perm.size() != static_cast<size_t>(xs->rank())) return ctx.Decline("rank unknown");
  // The axes that are not known to be 1 must keep their relative order.
  int64_t last = -1;
  for (int64_t p : perm) {
    const Dim& d = (*xs)[p];
    if (d.is_value() && d.value() == 1) continue;
    if (p < last) return ctx.Decline("moves an axis that is not of size 1");
    last = p;
  }
  std::vector<int64_t> target;
  int unknown = 0;
  for (size_t i = 0; i < perm.size(); ++i) {
    const Dim& d = (*xs)[perm[i]];
    if (d.is_value()) {
      target.push_back(d.value());
    } else if (perm[i] == static_cast<int64_t>(i)) {
      target.push_back(0);  // copies x's dim i, which is this one
    } else {
      ++unknown;
      target.push_back(-1);
    }
  }
  // Why: a known 0 would read as a copy, and only one -1 is determined.
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && (*xs)[perm[i]].is_value()) return ctx.Decline("an empty axis");
  }
  if (unknown > 1) return ctx.Decline("more than one moved dim unknown");
  ClassId shape = g.AddConst(Int64Tensor(target, {static_cast<int64_t>(target.size())}));
  return g.AddOp("Reshape", "", {x, shape});
}

// Transpose(Reshape(x), p) -> Reshape(Transpose(x, p'), s)   when the
// Reshape only drops or adds axes of size 1. torch's bmm attention writes
// k.transpose(1, 2).reshape(b*h, t, d).transpose(1, 2).reshape(b, h, d, t):
// moved ahead of the unit reshapes, the Transposes compose into one and the
// reshapes into one (or none).
ClassId TransposeThroughUnitReshape(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  ClassId y = Child(g, n, 0);
  const ENode* reshape = nullptr;
  for (int32_t i : g.data(y).nodes) {
    const ENode& m = g.node(i);
    if (m.kind == ENodeKind::kOp && IsReshapeLike(*m.op)) {
      reshape = &m;
      break;
    }
  }
  if (reshape == nullptr) return ctx.Decline("input is not reshaped");
  ClassId x = Child(g, *reshape, 0);
  const Shape* xs = RankedShape(g, x);
  const Shape* ys = RankedShape(g, y);
  const Shape* zs = RankedShape(g, cls);
  std::vector<int64_t> perm = PermOf(g, n);
  if (xs == nullptr || ys == nullptr || zs == nullptr || perm.size() != static_cast<size_t>(ys->rank())) {
    return ctx.Decline("shapes unknown");
  }
  auto is_one = [](const Dim& d) { return d.is_value() && d.value() == 1; };
  // The axes not known to be 1, of x and of y: the same dims in the same order.
  std::vector<int64_t> x_axes, y_axes;
  for (int64_t i = 0; i < xs->rank(); ++i) {
    if (!is_one((*xs)[i])) x_axes.push_back(i);
  }
  for (int64_t i = 0; i < ys->rank(); ++i) {
    if (!is_one((*ys)[i])) y_axes.push_back(i);
  }
  if (x_axes.size() != y_axes.size()) return ctx.Decline("the reshape does more than drop or add axes of size 1");
  std::vector<int64_t> x_of_y(static_cast<size_t>(ys->rank()), -1);
  for (size_t k = 0; k < x_axes.size(); ++k) {
    if (!(*xs)[x_axes[k]].SameAs((*ys)[y_axes[k]])) {
      return ctx.Decline("the reshape does more than drop or add axes of size 1");
    }
    x_of_y[y_axes[k]] = x_axes[k];
  }
  // x's unit axes first, then its other axes in the order the Transpose puts them.
  std::vector<int64_t> moved;
  for (int64_t i = 0; i < xs->rank(); ++i) {
    if (is_one((*xs)[i])) moved.push_back(i);
  }
  for (int64_t a : perm) {
    if (x_of_y[a] >= 0) moved.push_back(x_of_y[a]);
  }
  // The result's shape as a constant: its known dims, and one -1 at most.
  std::vector<int64_t> target;
  int unknown = 0;
  for (int64_t i = 0; i < zs->rank(); ++i) {
    const Dim& d = (*zs)[i];
    if (d.is_value() && d.value() == 0) return ctx.Decline("an empty axis");
    target.push_back(d.is_value() ? d.value() : -1);
    unknown += d.is_value() ? 0 : 1;
  }
  if (unknown > 1) return ctx.Decline("more than one dim of the result unknown");
  ClassId t = g.AddOp("Transpose", "", {x}, {Attribute::Ints("perm", moved)});
  ClassId shape = g.AddConst(Int64Tensor(target, {static_cast<int64_t>(target.size())}));
  return g.AddOp("Reshape", "", {t, shape});
}

// Slice(Slice(x, p1), p2) -> Slice(x, p)   axes disjoint, or shared with
// positive steps over a known dim (the STFT's real/imaginary halves).
ClassId ComposeSlices(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (g.opset() < 10) return ctx.Decline("Slice takes its parameters as inputs from opset 10");
  const ENode* inner = g.FindOp(Child(g, n, 0), "Slice");
  if (inner == nullptr) return ctx.Decline("input is not a Slice");
  ClassId x = Child(g, *inner, 0);
  const Shape* xs = RankedShape(g, x);
  if (xs == nullptr) return ctx.Decline("rank unknown");
  auto params = [&](const ENode& s) -> std::optional<SliceParams> {
    auto p = SliceParamsOf(*s.op, g.opset(), xs->rank(), [&](size_t i) -> std::optional<std::vector<int64_t>> {
      return i < s.children.size() && s.children[i] != kNoClass ? IntValues(g, Child(g, s, i)) : std::nullopt;
    });
    if (!p.ok() || !p->has_value()) return std::nullopt;
    return **p;
  };
  std::optional<SliceParams> p1 = params(*inner);
  std::optional<SliceParams> p2 = params(n);
  if (!p1 || !p2) return ctx.Decline("parameters not constant");
  SliceParams out = *p1;
  for (size_t j = 0; j < p2->axes.size(); ++j) {
    int64_t axis = p2->axes[j];
    auto it = std::find(out.axes.begin(), out.axes.end(), axis);
    if (it == out.axes.end()) {
      out.starts.push_back(p2->starts[j]);
      out.ends.push_back(p2->ends[j]);
      out.axes.push_back(axis);
      out.steps.push_back(p2->steps[j]);
      continue;
    }
    size_t k = static_cast<size_t>(it - out.axes.begin());
    const Dim& d = (*xs)[axis];
    if (!d.is_value()) return ctx.Decline("a twice-sliced axis has an unknown dim");
    // Why: negative steps end past the front, which an end index cannot say simply.
    if (out.steps[k] <= 0 || p2->steps[j] <= 0) return ctx.Decline("a negative step on a twice-sliced axis");
    AxisRange r1 = ClampSlice(out.starts[k], out.ends[k], out.steps[k], d.value());
    AxisRange r2 = ClampSlice(p2->starts[j], p2->ends[j], p2->steps[j], r1.count);
    int64_t start = r1.start + r2.start * r1.step;
    int64_t step = r1.step * r2.step;
    out.starts[k] = start;
    out.ends[k] = r2.count == 0 ? start : start + (r2.count - 1) * step + 1;
    out.steps[k] = step;
  }
  auto ints = [&](const std::vector<int64_t>& v) {
    return g.AddConst(Int64Tensor(v, {static_cast<int64_t>(v.size())}));
  };
  return g.AddOp("Slice", "", {x, ints(out.starts), ints(out.ends), ints(out.axes), ints(out.steps)});
}

// Unsqueeze's axes: the attribute before opset 13, input 1 from 13.
std::optional<std::vector<int64_t>> UnsqueezeAxes(const EGraph& g, const ENode& n) {
  if (g.opset() < 13) return n.op->GetInts("axes");
  return n.children.size() > 1 ? IntValues(g, Child(g, n, 1)) : std::nullopt;
}

// Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a)   (the mask's [B, S] -> [B, 1, 1, S])
ClassId ComposeUnsqueezes(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const ENode* inner = g.FindOp(Child(g, n, 0), "Unsqueeze");
  if (inner == nullptr) return ctx.Decline("input is not an Unsqueeze");
  ClassId x = Child(g, *inner, 0);
  const Shape* xs = RankedShape(g, x);
  auto a1 = UnsqueezeAxes(g, *inner);
  auto a2 = UnsqueezeAxes(g, n);
  if (xs == nullptr || !a1 || !a2) return ctx.Decline("rank or axes unknown");
  int64_t mid_rank = xs->rank() + static_cast<int64_t>(a1->size());
  int64_t out_rank = mid_rank + static_cast<int64_t>(a2->size());
  auto normalized = [](std::vector<int64_t> axes, int64_t rank) -> std::optional<std::vector<int64_t>> {
    for (int64_t& a : axes) {
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) return std::nullopt;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
    return axes;
  };
  auto inner_axes = normalized(*a1, mid_rank);
  auto outer_axes = normalized(*a2, out_rank);
  if (!inner_axes || !outer_axes) return ctx.Decline("axes out of range");
  // The intermediate's axis j lands on the j-th output position the outer one leaves free.
  std::vector<int64_t> free;
  for (int64_t p = 0; p < out_rank; ++p) {
    if (!std::binary_search(outer_axes->begin(), outer_axes->end(), p)) free.push_back(p);
  }
  std::vector<int64_t> axes = *outer_axes;
  for (int64_t j : *inner_axes) axes.push_back(free[j]);
  std::sort(axes.begin(), axes.end());
  return AddUnsqueeze(g, x, axes);
}

}  // namespace

void AddShapeRules(std::vector<Rule>& rules) {
  for (const char* op : {"Shape", "Gather", "Slice", "Concat", "Cast", "Squeeze", "Unsqueeze", "Where"}) {
    rules.push_back({"fold_shape_arithmetic",
                     "Gather(Shape(x), i) -> Const  when dim i of x is known (also Slice, Concat, Cast)",
                     op, Exactness::kExact, 1, FoldShapeArithmetic});
  }
  rules.push_back({"fold_shape_comparison", "Equal(Shape(x)[i], -1) -> false  (and other decided comparisons of dims)",
                   "Equal", Exactness::kExact, 1, FoldShapeComparison});
  rules.push_back({"use_reshape_copies",
                   "Reshape(x, Concat(Shape(x)[i], c, ..)) -> Reshape(x, [0, c, .., -1])", "Reshape",
                   Exactness::kExact, 5, UseReshapeCopies});
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
    rules.push_back({"compose_reshapes", "Reshape(Reshape(x, s1), s2) -> Reshape(x, s2)", op,
                     Exactness::kExact, 5, ComposeReshapes});
  }
  rules.push_back({"transpose_as_reshape", "Transpose(x, perm) -> Reshape(x, s)  when perm only moves axes of size 1",
                   "Transpose", Exactness::kExact, 5, TransposeAsReshape});
  rules.push_back({"compose_unsqueezes", "Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a1∘a2)", "Unsqueeze",
                   Exactness::kExact, 1, ComposeUnsqueezes});
  rules.push_back({"compose_slices", "Slice(Slice(x, p1), p2) -> Slice(x, p1∘p2)", "Slice", Exactness::kExact, 10,
                   ComposeSlices});
  rules.push_back({"transpose_through_unit_reshape",
                   "Transpose(Reshape(x), p) -> Reshape(Transpose(x, p'), s)  when the Reshape only drops or adds "
                   "axes of size 1",
                   "Transpose", Exactness::kExact, 5, TransposeThroughUnitReshape});
  rules.push_back({"compose_transposes", "Transpose(Transpose(x, p1), p2) -> Transpose(x, p1∘p2)",
                   "Transpose", Exactness::kExact, 1, ComposeTransposes});
}

}  // namespace aic::rewrite

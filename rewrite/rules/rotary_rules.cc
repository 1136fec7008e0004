// RotaryEmbedding (opset 23) recovered from rotate-half as HF transformers
// (Llama, GPT-NeoX, Mistral, Qwen, ...) write it, non-interleaved:
//   y = x * cos + rotate_half(x) * sin
//   rotate_half(x) = Concat(Neg(Slice(x, D/2..D)), Slice(x, 0..D/2), axis=-1)
// with x [B, H, S, D] and cos/sin [B or 1, 1, S, D] whose two halves along
// the last axis are equal (HF builds emb = cat(freqs, freqs); cos =
// emb.cos()). Emitted as RotaryEmbedding(x, cos_half, sin_half) with the
// caches [B, S, D/2]: the first half of cos's last axis, its head axis
// squeezed away, expanded over x's batch when cos has batch 1.
//
// Exact: for k < D/2 the pattern computes x1·c + (−x2)·s and x2·c + x1·s with
// one rounding per product and per sum, which is what RotaryEmbedding's
// (x1·c − x2·s, x1·s + x2·c) is, rounding for rounding, once c and s are the
// same for k and k + D/2 — which is why that equality is proven, never assumed.
//
// What the rule proves before it fires, and why:
// - x rank 4, float/float16/bfloat16 (RotaryEmbedding's types), D known,
//   even and > 0; the result x's shape (the Muls did
//   not broadcast x).
// - The Slices are exactly the halves of the last axis with step 1, and the
//   Concat joins (−second half, first half) on the last axis: any other order
//   or sign is another rotation (or none).
// - cos and sin: rank 4, head axis of size 1, last dim D, sequence dim x's,
//   batch 1 or x's; halves equal by value (a constant) or by construction
//   (Concat(f, f) on the last axis under ops that act per element or move
//   only other axes: Cos, Sin, Cast, a one-element scale, Unsqueeze, Expand,
//   Gather or Slice off the last axis).
//
// fuse_partial_rotary_embedding then folds a partial rotation (GPT-NeoX's
// rotary_pct, Phi: x[..., :r] rotated, x[..., r:] concatenated back after it)
// into rotary_embedding_dim=r.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/tensor/slice_params.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// The last-axis index `axis` (possibly negative) of a rank-`rank` tensor.
bool IsLastAxis(int64_t axis, int64_t rank) { return axis == -1 || axis == rank - 1; }

// Slice e-node `n` as one axis range: nullopt unless its parameters are
// known, it slices the last axis of x only, with step 1. Sets x.
struct LastAxisRange {
  ClassId x;
  int64_t start, count;
};
std::optional<LastAxisRange> LastAxisSlice(const EGraph& g, const ENode& n, int64_t dim) {
  ClassId x = Child(g, n, 0);
  const Shape* xs = RankedShape(g, x);
  if (xs == nullptr || xs->rank() < 1) return std::nullopt;
  auto params = SliceParamsOf(*n.op, g.opset(), xs->rank(), [&](size_t i) -> std::optional<std::vector<int64_t>> {
    return i < n.children.size() && n.children[i] != kNoClass ? IntValues(g, Child(g, n, i)) : std::nullopt;
  });
  if (!params.ok() || !params->has_value()) return std::nullopt;
  const SliceParams& p = **params;
  if (p.axes.size() != 1 || p.axes[0] != xs->rank() - 1 || p.steps[0] != 1) return std::nullopt;
  AxisRange r = ClampSlice(p.starts[0], p.ends[0], 1, dim);
  return LastAxisRange{x, r.start, r.count};
}

// Whether class c is rotate_half(x) of a rank-4 x whose last dim is `dim`:
// Concat(Neg(x[..., half:]), x[..., :half]) on the last axis. Sets x.
bool IsRotateHalf(const EGraph& g, ClassId c, int64_t dim, ClassId& x) {
  const int64_t half = dim / 2;
  for (const ENode* cat : g.FindOps(c, "Concat")) {
    if (cat->children.size() != 2 || !IsLastAxis(cat->op->GetInt("axis", 0), 4)) continue;
    const ENode* neg = g.FindOp(Child(g, *cat, 0), "Neg");
    if (neg == nullptr) continue;
    for (const ENode* hi : g.FindOps(Child(g, *neg, 0), "Slice")) {
      std::optional<LastAxisRange> second = LastAxisSlice(g, *hi, dim);
      if (!second || second->start != half || second->count != half) continue;
      for (const ENode* lo : g.FindOps(Child(g, *cat, 1), "Slice")) {
        std::optional<LastAxisRange> first = LastAxisSlice(g, *lo, dim);
        if (first && first->x == second->x && first->start == 0 && first->count == half) {
          x = first->x;
          return true;
        }
      }
    }
  }
  return false;
}

// Whether a known tensor's last axis of `dim` has equal halves, bit for bit
// (so +0 and -0 differ, as their products' signs may, and a NaN equals only
// itself).
bool ValueHalvesEqual(const Tensor& t, int64_t dim) {
  if (t.rank() < 1 || t.dim(t.rank() - 1) != dim || !IsFloat(t.dtype())) return false;
  const size_t half_bytes = static_cast<size_t>(dim / 2) * ElementSize(t.dtype());
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  for (int64_t row = 0; row < t.num_elements() / dim; ++row, p += 2 * half_bytes) {
    if (std::memcmp(p, p + half_bytes, half_bytes) != 0) return false;
  }
  return true;
}

// The last dim of class c when known.
std::optional<int64_t> LastDim(const EGraph& g, ClassId c) {
  const Shape* s = RankedShape(g, c);
  if (s == nullptr || s->rank() < 1 || !(*s)[s->rank() - 1].is_value()) return std::nullopt;
  return (*s)[s->rank() - 1].value();
}

// Whether class c (last dim `dim`) has equal halves along its last axis: by
// value, or built so (see the file comment). `depth` bounds the walk.
bool HalvesEqual(const EGraph& g, ClassId c, int64_t dim, int depth = 0) {
  if (c == kNoClass || depth > 12 || LastDim(g, c) != dim) return false;
  if (const Tensor* t = g.value(c)) return ValueHalvesEqual(*t, dim);
  const int64_t rank = RankedShape(g, c)->rank();
  for (int32_t i : g.data(c).nodes) {
    const ENode& n = g.node(i);
    if (n.kind != ENodeKind::kOp || !n.op->domain.empty() || n.children.empty()) continue;
    const std::string& op = n.op->op_type;
    ClassId in = Child(g, n, 0);
    if (op == "Concat") {
      // Concat(f, f): the same class twice, so the halves are one value.
      if (n.children.size() == 2 && IsLastAxis(n.op->GetInt("axis", 0), rank) && in == Child(g, n, 1)) return true;
      continue;
    }
    bool keeps_last_axis = false;
    if (op == "Cos" || op == "Sin" || op == "Cast" || op == "Identity" || op == "Neg") {
      keeps_last_axis = true;  // per element
    } else if (op == "Unsqueeze" || op == "Expand") {
      // The last dim is dim ≥ 2 on both sides, so the last axis is the input's
      // own: neither a new axis of 1 nor one broadcast from 1.
      keeps_last_axis = LastDim(g, in) == dim;
    } else if (op == "Mul" || op == "Div") {
      // A one-element scale (HF's attention_scaling), on the right for Div.
      const Tensor* k = g.value(Child(g, n, 1));
      const Tensor* k0 = op == "Mul" ? g.value(in) : nullptr;
      if (k != nullptr && k->num_elements() == 1) {
        keeps_last_axis = true;
      } else if (k0 != nullptr && k0->num_elements() == 1) {
        in = Child(g, n, 1);
        keeps_last_axis = true;
      }
    } else if (op == "Gather") {
      // cos_cached[position_ids]: rows picked along a leading axis.
      const Shape* data = RankedShape(g, in);
      int64_t axis = n.op->GetInt("axis", 0);
      keeps_last_axis = data != nullptr && data->rank() >= 2 && !IsLastAxis(axis, data->rank());
    } else if (op == "Slice") {
      // cos_cached[:seq_len]: other axes cut, the last one whole.
      const Shape* data = RankedShape(g, in);
      if (data == nullptr) continue;
      auto p = SliceParamsOf(*n.op, g.opset(), data->rank(), [&](size_t j) -> std::optional<std::vector<int64_t>> {
        return j < n.children.size() && n.children[j] != kNoClass ? IntValues(g, Child(g, n, j)) : std::nullopt;
      });
      if (!p.ok() || !p->has_value()) continue;
      keeps_last_axis = true;
      for (int64_t a : (*p)->axes) keeps_last_axis = keeps_last_axis && a != data->rank() - 1;
    }
    if (keeps_last_axis && HalvesEqual(g, in, dim, depth + 1)) return true;
  }
  return false;
}

// Why a cos/sin operand does not fit, or "" when it does: rank 4, [1 or B, 1, S, D]
// against x's [B, H, S, D], halves equal.
std::string CacheMismatch(const EGraph& g, ClassId c, const Shape& xs, DType dtype) {
  const Shape* cs = RankedShape(g, c);
  if (cs == nullptr || cs->rank() != 4) return "is not rank 4";
  if (g.type(c).dtype != dtype) return "is not x's dtype";
  const Dim& batch = (*cs)[0];
  if (!(batch.is_value() && batch.value() == 1) && !batch.SameAs(xs[0])) return "has a batch that is neither 1 nor x's";
  if (!((*cs)[1].is_value() && (*cs)[1].value() == 1)) return "has a head axis that is not 1";
  if (!(*cs)[2].SameAs(xs[2])) return "has a sequence dim that is not x's";
  if (!(*cs)[3].SameAs(xs[3])) return "has a last dim that is not x's";
  if (!HalvesEqual(g, c, xs[3].value())) return "has halves not proven equal";
  return "";
}

// cos [Bc, 1, S, D] -> its first half as [B, S, D/2]: a constant when cos is
// known, else Squeeze(Slice(cos)) (expanded over x's batch when Bc is 1 and
// x's batch is not).
ClassId HalfCache(EGraph& g, ClassId cos, ClassId x, const Shape& xs) {
  const Dim cache_batch = (*RankedShape(g, cos))[0];  // a copy: classes are added below
  const int64_t dim = xs[3].value(), half = dim / 2;
  auto ints = [&](std::vector<int64_t> v) {
    auto n = static_cast<int64_t>(v.size());
    return g.AddConst(Int64Tensor(v, {n}));
  };
  ClassId out;
  if (const Tensor* t = g.value(cos)) {
    // The first half of each row's bytes: no conversion, so no rounding, in any float type.
    Tensor ht(t->dtype(), {t->dim(0), t->dim(2), half});
    const size_t half_bytes = static_cast<size_t>(half) * ElementSize(t->dtype());
    const auto* src = static_cast<const uint8_t*>(t->raw_data());
    auto* dst = static_cast<uint8_t*>(ht.mutable_raw_data());
    for (int64_t r = 0; r < t->num_elements() / dim; ++r) {
      std::memcpy(dst + r * half_bytes, src + 2 * r * half_bytes, half_bytes);
    }
    out = g.AddConst(ht);
  } else {
    ClassId sliced = g.AddOp("Slice", "", {cos, ints({0}), ints({half}), ints({3}), ints({1})});
    out = g.AddOp("Squeeze", "", {sliced, ints({1})});
  }
  const Dim& xb = xs[0];
  bool cache_batch_one = cache_batch.is_value() && cache_batch.value() == 1;
  if (!cache_batch_one || (xb.is_value() && xb.value() == 1)) return out;
  ClassId shape;
  if (xb.is_value()) {
    shape = ints({xb.value(), 1, 1});
  } else {
    // x's batch read from what x was sliced from along its last axis, if so
    // (a partial rotation's x[..., :r]): a Slice kept only for its Shape would
    // still run.
    for (int hops = 0; hops < 4; ++hops) {
      const ENode* cut = nullptr;
      for (const ENode* s : g.FindOps(x, "Slice")) {
        std::optional<int64_t> d = LastDim(g, Child(g, *s, 0));
        if (d && LastAxisSlice(g, *s, *d)) cut = s;
      }
      if (cut == nullptr) break;
      x = Child(g, *cut, 0);
    }
    ClassId batch = g.AddOp("Slice", "", {g.AddOp("Shape", "", {x}), ints({0}), ints({1}), ints({0}), ints({1})});
    shape = g.AddOp("Concat", "", {batch, ints({1, 1})}, {Attribute::Int("axis", 0)});
  }
  return g.AddOp("Expand", "", {out, shape});
}

// x * cos + rotate_half(x) * sin -> RotaryEmbedding(x, cos_half, sin_half)
ClassId FuseRotaryEmbedding(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  // Why 13: the emitted Slice and Squeeze take their parameters as inputs.
  if (g.opset() < 13) return ctx.Decline("below opset 13");
  std::string why = "not x * cos + rotate_half(x) * sin";
  ClassId x = kNoClass, cos = kNoClass, sin = kNoClass;
  // Each operand order of the Add and of either Mul, until one proves out.
  bool matched = EitherOrder(g, n, [&](ClassId direct, ClassId rotated) {
    for (const ENode* rmul : g.FindOps(rotated, "Mul")) {
      bool found = EitherOrder(g, *rmul, [&](ClassId rot, ClassId s) {
        std::optional<int64_t> dim = LastDim(g, rot);
        ClassId cand = kNoClass;
        if (!dim || *dim < 2 || *dim % 2 != 0 || !IsRotateHalf(g, rot, *dim, cand)) return false;
        for (const ENode* dmul : g.FindOps(direct, "Mul")) {
          bool ok = EitherOrder(g, *dmul, [&](ClassId a, ClassId c) {
            if (a != cand) return false;
            x = cand;
            cos = c;
            sin = s;
            return true;
          });
          if (ok) return true;
        }
        why = "rotate_half(x) * sin without x * cos beside it";
        return false;
      });
      if (found) return true;
    }
    return false;
  });
  if (!matched) return ctx.Decline(why);
  const Shape* xs = RankedShape(g, x);
  if (xs == nullptr || xs->rank() != 4) return ctx.Decline("x is not rank 4");
  DType dtype = g.type(x).dtype;
  // RotaryEmbedding-23's T: no double.
  if (dtype != DType::kFloat && dtype != DType::kFloat16 && dtype != DType::kBFloat16) {
    return ctx.Decline("x is not float, float16 or bfloat16");
  }
  const Shape* out = RankedShape(g, cls);
  if (out == nullptr || !SameShape(*out, *xs)) return ctx.Decline("the result is not x's shape");
  for (auto [c, name] : {std::pair{cos, "cos"}, std::pair{sin, "sin"}}) {
    std::string bad = CacheMismatch(g, c, *xs, dtype);
    if (!bad.empty()) return ctx.Decline(absl::StrCat(name, " ", bad));
  }
  ClassId cos_half = HalfCache(g, cos, x, *xs);
  ClassId sin_half = HalfCache(g, sin, x, *xs);
  return AddNewerStandardOp(ctx, "RotaryEmbedding", {x, cos_half, sin_half});
}

// Concat(RotaryEmbedding(x[..., :r], c, s), x[..., r:]) -> RotaryEmbedding(x, c, s, rotary_embedding_dim=r)
// Partial rotation (GPT-NeoX's rotary_pct, Phi): the first r features of each
// head rotated, the rest passed through, which is what rotary_embedding_dim
// says. A rotation that was itself partial (dim r' < r) keeps r'. 4-D only:
// a 3-D x's last axis holds every head, so its slices are not per head.
ClassId FusePartialRotaryEmbedding(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const Shape* out = RankedShape(g, cls);
  if (n.children.size() != 2 || out == nullptr || out->rank() != 4 || !IsLastAxis(n.op->GetInt("axis", 0), 4)) {
    return ctx.Decline("not a Concat of two rank-4 tensors on the last axis");
  }
  std::optional<int64_t> dim = LastDim(g, cls);
  if (!dim) return ctx.Decline("last dim not known");
  for (const ENode* rope : g.FindOps(Child(g, n, 0), "RotaryEmbedding")) {
    std::optional<int64_t> r = LastDim(g, Child(g, *rope, 0));
    const Shape* rs = RankedShape(g, Child(g, *rope, 0));
    if (rope->num_outputs != 1 || !r || rs == nullptr || rs->rank() != 4 || *r >= *dim) continue;
    int64_t inner = rope->op->GetInt("rotary_embedding_dim", 0);
    for (const ENode* head : g.FindOps(Child(g, *rope, 0), "Slice")) {
      std::optional<LastAxisRange> first = LastAxisSlice(g, *head, *dim);
      if (!first || first->start != 0 || first->count != *r || LastDim(g, first->x) != *dim) continue;
      for (const ENode* tail : g.FindOps(Child(g, n, 1), "Slice")) {
        std::optional<LastAxisRange> rest = LastAxisSlice(g, *tail, *dim);
        if (!rest || rest->x != first->x || rest->start != *r || rest->count != *dim - *r) continue;
        std::vector<ClassId> children;
        for (size_t i = 0; i < rope->children.size(); ++i) children.push_back(i == 0 ? first->x : Child(g, *rope, i));
        std::vector<Attribute> attrs;
        for (const Attribute& a : rope->op->attributes) {
          if (a.name != "rotary_embedding_dim") attrs.push_back(a);
        }
        attrs.push_back(Attribute::Int("rotary_embedding_dim", inner != 0 ? inner : *r));
        return g.AddOp(rope->op->op_type, rope->op->domain, children, attrs);
      }
    }
  }
  return ctx.Decline("not Concat(RotaryEmbedding(x[..., :r]), x[..., r:])");
}

}  // namespace

void AddRotaryRules(std::vector<Rule>& rules) {
  rules.push_back({"fuse_rotary_embedding",
                   "x * cos + Concat(-x[..., D/2:], x[..., :D/2]) * sin -> RotaryEmbedding(x, cos[..., :D/2], "
                   "sin[..., :D/2])   (cos, sin with equal halves)",
                   "Add", Exactness::kExact, 23, FuseRotaryEmbedding, "RotaryEmbedding"});
  rules.push_back({"fuse_partial_rotary_embedding",
                   "Concat(RotaryEmbedding(x[..., :r], c, s), x[..., r:]) -> RotaryEmbedding(x, c, s, "
                   "rotary_embedding_dim=r)",
                   "Concat", Exactness::kExact, 23, FusePartialRotaryEmbedding, "RotaryEmbedding"});
}

}  // namespace aic::rewrite

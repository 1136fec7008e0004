// Parallel convolutions of one input, summed, as one convolution: a conv is
// linear in its weights, so Conv(x, W1, b1) + Conv(x, W2, b2) is
// Conv(x, W1 + W2, b1 + b2) when both slide the same window (strides,
// dilations, groups; a smaller kernel sits inside the larger one where its
// pads say it does). The input itself, or a BatchNormalization of it, is a
// conv too: its one centre tap per channel (1, or BN's scale, plus BN's shift
// as bias). Networks trained with such branches and meant to be merged
// before deployment (RepVGG: 3x3 + 1x1 + identity; MobileOne: four 3x3 and a
// 1x1 and an identity per block) are often exported as trained: each block
// ran every branch (timm mobileone_s0: 191 conv steps, 2-4x the work).
// Reassociating: the merged sum rounds once per tap, not once per branch.
#include <cmath>
#include <optional>

#include "ops/nn/batch_norm_affine.h"
#include "ops/nn/conv_geometry.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// One summand as a conv of x: its weights' dims [Cout, Cin/group, k...], its
// window (explicit pads) and group count, and where its numbers come from: a
// Conv's weight and bias tensors (`proto` the Conv node, whose attributes a
// merged conv starts from), or a per-channel scale and shift (x itself, or
// BN(x)). The numbers are read as doubles only for the pair that merges.
struct ConvBranch {
  ClassId x = kNoClass;
  std::vector<int64_t> wdims;
  Window win;
  int64_t group = 1;
  DType dtype = DType::kFloat;
  const Node* proto = nullptr;
  const Tensor* weight = nullptr;     // a Conv's
  const Tensor* bias = nullptr;       // a Conv's, if it has one
  std::vector<double> scale, shift;   // a channel affine's
};

// The branch's weights in double: a Conv's as they are, a channel affine's
// as one tap per output channel reading its own input channel (local index
// c % (Cin/group) in its group).
std::vector<double> WeightsOf(const ConvBranch& b) {
  if (b.weight != nullptr) return ToDoubles(*b.weight);
  const int64_t cout = b.wdims[0], cin_per_group = b.wdims[1];
  std::vector<double> w(static_cast<size_t>(cout * cin_per_group), 0.0);
  for (int64_t oc = 0; oc < cout; ++oc) w[oc * cin_per_group + oc % cin_per_group] = b.scale[oc];
  return w;
}

std::vector<double> BiasOf(const ConvBranch& b) {
  if (b.bias != nullptr) return ToDoubles(*b.bias);
  if (b.weight != nullptr) return std::vector<double>(static_cast<size_t>(b.wdims[0]), 0.0);
  return b.shift;
}

bool AllFinite(const std::vector<double>& v) {
  for (double d : v) {
    if (!std::isfinite(d)) return false;
  }
  return true;
}

// A Conv e-node of known float weights (and bias), its window resolved
// against x's known spatial dims.
std::optional<ConvBranch> ConvBranchOf(const EGraph& g, const ENode& conv) {
  if (!conv.op->domain.empty() || conv.num_outputs != 1) return std::nullopt;
  const Tensor* w = ChildValue(g, conv, 1);
  if (w == nullptr || w->rank() < 3 || !IsFloat(w->dtype())) return std::nullopt;
  const bool has_bias = conv.children.size() > 2 && conv.children[2] != kNoClass;
  const Tensor* b = has_bias ? ChildValue(g, conv, 2) : nullptr;
  if (has_bias && (b == nullptr || b->dtype() != w->dtype() || b->num_elements() != w->dim(0))) return std::nullopt;
  const Shape* xs = RankedShape(g, Child(g, conv, 0));
  if (xs == nullptr || xs->rank() != w->rank()) return std::nullopt;
  const size_t spatial = static_cast<size_t>(w->rank()) - 2;
  std::vector<int64_t> in(spatial), kernel(spatial);
  for (size_t a = 0; a < spatial; ++a) {
    if (!xs->dims()[2 + a].is_value()) return std::nullopt;
    in[a] = xs->dims()[2 + a].value();
    kernel[a] = w->dim(static_cast<int64_t>(2 + a));
  }
  absl::StatusOr<Window> win = ReadWindow(*conv.op, kernel);
  if (!win.ok()) return std::nullopt;
  ConvBranch c;
  c.win = *win;
  ResolveWindow(c.win, in);  // explicit pads
  c.x = Child(g, conv, 0);
  c.wdims = w->dims();
  c.group = conv.op->GetInt("group", 1);
  c.dtype = w->dtype();
  c.proto = conv.op;
  c.weight = w;
  c.bias = b;
  return c;
}

// x·scale + shift per channel as a conv shaped like `like` (a 1-tap kernel
// per axis, undilated, unpadded, stride 1). Needs Cin == Cout.
std::optional<ConvBranch> ChannelAffineBranch(ClassId x, const ConvBranch& like, std::vector<double> scale,
                                              std::vector<double> shift) {
  const int64_t cout = like.wdims[0];
  if (like.wdims[1] * like.group != cout || static_cast<int64_t>(scale.size()) != cout) return std::nullopt;
  ConvBranch c;
  c.x = x;
  c.wdims = like.wdims;
  const size_t spatial = like.wdims.size() - 2;
  for (size_t a = 0; a < spatial; ++a) c.wdims[2 + a] = 1;
  c.win.kernel.assign(spatial, 1);
  c.win.strides.assign(spatial, 1);
  c.win.dilations.assign(spatial, 1);
  c.win.pads.assign(2 * spatial, 0);
  c.group = like.group;
  c.dtype = like.dtype;
  c.scale = std::move(scale);
  c.shift = std::move(shift);
  return c;
}

// `small` embedded in `big`'s kernel: the offset per axis at which its taps
// read the same input positions as big's, or nullopt (other strides,
// dilations, groups or channels, or no such offset).
std::optional<std::vector<int64_t>> Offsets(const ConvBranch& big, const ConvBranch& small) {
  if (big.group != small.group || big.wdims[0] != small.wdims[0] || big.wdims[1] != small.wdims[1] ||
      big.wdims.size() != small.wdims.size()) {
    return std::nullopt;
  }
  const size_t spatial = big.win.rank();
  std::vector<int64_t> t(spatial);
  for (size_t a = 0; a < spatial; ++a) {
    if (big.win.strides[a] != small.win.strides[a]) return std::nullopt;
    const int64_t kb = big.win.kernel[a], ks = small.win.kernel[a], d = big.win.dilations[a];
    // A one-tap axis has no dilation of its own.
    if (ks > 1 && small.win.dilations[a] != d) return std::nullopt;
    const int64_t shift = big.win.pad_begin(a) - small.win.pad_begin(a);
    if (ks > kb || shift < 0 || shift % d != 0) return std::nullopt;
    t[a] = shift / d;
    if (t[a] + ks > kb) return std::nullopt;
    // The same output extent: the trailing pads line up the same way.
    if (big.win.pad_end(a) - small.win.pad_end(a) != (kb - ks - t[a]) * d) return std::nullopt;
  }
  return t;
}

// w (dims wdims) += small (dims sdims) at spatial offsets t, both [Cout, Cin/g, k...] row-major.
void AddInto(std::vector<double>& w, const std::vector<int64_t>& wdims, const std::vector<double>& small,
             const std::vector<int64_t>& sdims, const std::vector<int64_t>& t) {
  std::vector<int64_t> index(sdims.size(), 0);
  for (double v : small) {
    int64_t at = 0;
    for (size_t a = 0; a < sdims.size(); ++a) at = at * wdims[a] + index[a] + (a >= 2 ? t[a - 2] : 0);
    w[static_cast<size_t>(at)] += v;
    for (size_t a = sdims.size(); a-- > 0;) {
      if (++index[a] < sdims[a]) break;
      index[a] = 0;
    }
  }
}

// The branches of class `c` that are convs of known weights.
std::vector<ConvBranch> ConvsIn(const EGraph& g, ClassId c) {
  std::vector<ConvBranch> out;
  for (const ENode* conv : g.FindOps(c, "Conv")) {
    if (std::optional<ConvBranch> b = ConvBranchOf(g, *conv)) out.push_back(std::move(*b));
  }
  return out;
}

// Class `other` as a conv of `x` shaped like `conv`: x itself, or an
// inference BatchNormalization of x.
std::optional<ConvBranch> AffineOfInput(const EGraph& g, ClassId other, const ConvBranch& conv) {
  const int64_t channels = conv.wdims[0];
  if (other == conv.x) {
    return ChannelAffineBranch(conv.x, conv, std::vector<double>(static_cast<size_t>(channels), 1.0),
                               std::vector<double>(static_cast<size_t>(channels), 0.0));
  }
  for (const ENode* bn : g.FindOps(other, "BatchNormalization")) {
    if (bn->num_outputs != 1 || Child(g, *bn, 0) != conv.x) continue;
    std::optional<ChannelAffine> affine = BatchNormAffineOf(g, *bn, channels);
    if (affine) return ChannelAffineBranch(conv.x, conv, affine->scale, affine->shift);
  }
  return std::nullopt;
}

// Add(Conv(x, W1, b1), Conv(x, W2, b2)) -> Conv(x, W1 + W2, b1 + b2)
// Add(x or BatchNormalization(x), Conv(x, W, b)) -> Conv(x, W + s·δ, b + t)
ClassId MergeParallelConvs(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  if (n.children.size() != 2) return ctx.Decline("not a binary Add");
  const Shape* ys = RankedShape(g, cls);
  const Shape* s0 = RankedShape(g, Child(g, n, 0));
  const Shape* s1 = RankedShape(g, Child(g, n, 1));
  if (ys == nullptr || s0 == nullptr || s1 == nullptr || !SameShape(*ys, *s0) || !SameShape(*ys, *s1)) {
    return ctx.Decline("the operands' shapes are not both the sum's (a broadcast)");
  }
  ClassId merged = kNoClass;
  bool found = EitherOrder(g, n, [&](ClassId a, ClassId b) {
    // Why: a branch read elsewhere too stays computed, and the merged conv
    // would add its work rather than replace it.
    if (g.UseCount(a) > 1) return false;
    const std::vector<ConvBranch> convs_of_b = g.UseCount(b) > 1 ? std::vector<ConvBranch>{} : ConvsIn(g, b);
    for (const ConvBranch& conv : ConvsIn(g, a)) {
      std::vector<ConvBranch> partners = convs_of_b;
      if (std::optional<ConvBranch> affine = AffineOfInput(g, b, conv)) partners.push_back(std::move(*affine));
      for (const ConvBranch& other : partners) {
        if (other.x != conv.x || other.dtype != conv.dtype) continue;
        // The merged conv takes the window of the larger kernel.
        std::optional<std::vector<int64_t>> t = Offsets(conv, other);
        const bool conv_is_big = t.has_value();
        const ConvBranch& big = conv_is_big ? conv : other;
        const ConvBranch& small = conv_is_big ? other : conv;
        if (!conv_is_big) t = Offsets(big, small);
        if (!t || big.proto == nullptr) continue;
        std::vector<double> w = WeightsOf(big), bias = BiasOf(big);
        const std::vector<double> small_w = WeightsOf(small), small_bias = BiasOf(small);
        if (!AllFinite(w) || !AllFinite(small_w) || !AllFinite(bias) || !AllFinite(small_bias)) continue;
        AddInto(w, big.wdims, small_w, small.wdims, *t);
        for (size_t c = 0; c < bias.size(); ++c) bias[c] += small_bias[c];
        std::vector<Attribute> attrs = big.proto->attributes;
        SetAttribute(attrs, Attribute::Ints("pads", big.win.pads));
        SetAttribute(attrs, Attribute::Ints("kernel_shape", big.win.kernel));
        if (big.proto->GetString("auto_pad", "NOTSET") != "NOTSET") {
          SetAttribute(attrs, Attribute::String("auto_pad", "NOTSET"));
        }
        const ClassId wc = g.AddConst(FromDoubles(w, big.dtype, big.wdims));
        const ClassId bc = g.AddConst(FromDoubles(bias, big.dtype, {big.wdims[0]}));
        merged = g.AddOp("Conv", "", {conv.x, wc, bc}, attrs);
        return true;
      }
    }
    return false;
  });
  if (!found) return ctx.Decline("no two summands are convs of one input over one window (or x, or BN(x))");
  return merged;
}

}  // namespace

void AddConvMergeRules(std::vector<Rule>& rules) {
  rules.push_back({"merge_parallel_convs",
                   "Conv(x, W1, b1) + Conv(x, W2, b2) -> Conv(x, W1 + W2, b1 + b2); x or BN(x) as a 1-tap conv",
                   "Add", Exactness::kReassociating, 1, MergeParallelConvs});
}

}  // namespace aic::rewrite

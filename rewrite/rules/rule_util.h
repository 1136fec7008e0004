// Small matching helpers shared by the rule families: constants as numbers,
// shapes as known dims, attribute lookups on e-nodes, commutative operands
// in either order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/fused/standard_aliases.h"
#include "ops/nn/batch_norm_affine.h"
#include "ops/nn/clip_bounds.h"
#include "ops/tensor/pad_params.h"
#include "rewrite/egraph/egraph.h"
#include "rewrite/rules/rule.h"

namespace aic::rewrite {

// The class's statically known int tensor as int64s (int32/int64 only).
std::optional<std::vector<int64_t>> IntValues(const EGraph& g, ClassId c);
// True when every element of the class's known value equals v (numeric dtypes).
bool AllElementsEqual(const EGraph& g, ClassId c, double v);
// The tensor type of a class when it is a tensor with known rank.
const Shape* RankedShape(const EGraph& g, ClassId c);
// Dims equal one by one (known values or the same symbol).
bool SameShape(const Shape& a, const Shape& b);
bool IsFloat(DType t);
// Number of consumers of the class (0 when unknown).
int Uses(const EGraph& g, ClassId c);
// A child of an e-node, canonical (kNoClass when absent).
ClassId Child(const EGraph& g, const ENode& n, size_t i);

// Matches a commutative binary e-node (Add, Mul) in both operand orders, in
// place of a loop over `side` and `1 - side`: calls f(a, b) with its
// children (canonical) as (0, 1), then, only if that returned false, as
// (1, 0); true when either call returned true. What f binds on success (an
// out-parameter, a captured local) is thus from the order that matched.
template <typename F>
bool EitherOrder(const EGraph& g, const ENode& n, F f) {
  ClassId c0 = Child(g, n, 0);
  ClassId c1 = Child(g, n, 1);
  return f(c0, c1) || f(c1, c0);
}

// Whether class c has an `op_type` e-node (Add, Mul) whose operands satisfy
// f in either order (EitherOrder), trying the class's e-nodes in turn.
template <typename F>
bool HasOpEitherOrder(const EGraph& g, ClassId c, const char* op_type, F f) {
  for (const ENode* n : g.FindOps(c, op_type)) {
    if (EitherOrder(g, *n, f)) return true;
  }
  return false;
}

// Replaces the attribute of a.name in `attrs`, or appends it (Node::SetAttr
// for the attribute list a rule builds its new e-node from).
void SetAttribute(std::vector<Attribute>& attrs, Attribute a);

// A tensor of doubles converted to `dtype` (float types only) with dims.
Tensor FromDoubles(const std::vector<double>& v, DType dtype, std::vector<int64_t> dims);
std::vector<double> ToDoubles(const Tensor& t);
Tensor Int64Tensor(const std::vector<int64_t>& v, std::vector<int64_t> dims);

// Per-channel values of a constant that broadcasts against a [N, C, ...]
// tensor of rank `rank` along axis 1 only ([C, 1, 1] over [N, C, H, W]), or
// a scalar: its `channels` values; empty otherwise.
std::vector<double> PerChannelValues(const Tensor& c, int64_t rank, int64_t channels);

// scale·k and bias·k (a Mul) or bias + k (an Add), element by element: an
// affine step after a normalization folded into its scale and bias. `k` has
// one value per element of both, or one for all.
void FoldAffine(std::vector<double>& scale, std::vector<double>& bias, const std::vector<double>& k, bool is_mul);

// Unsqueeze(x) at `axes`: the axes as an input from opset 13, an attribute before.
ClassId AddUnsqueeze(EGraph& g, ClassId x, const std::vector<int64_t>& axes);

// Clip's bounds on an e-node (ops/nn/clip_bounds.h), from the known values of its children.
ClipBounds ClipBoundsOf(const EGraph& g, const ENode& clip);

// BatchNormalization's affine form on an e-node (ops/nn/batch_norm_affine.h).
std::optional<ChannelAffine> BatchNormAffineOf(const EGraph& g, const ENode& bn, int64_t channels);

// The known value of child i of an e-node (nullptr when absent or unknown).
const Tensor* ChildValue(const EGraph& g, const ENode& n, size_t i);
// A Pad e-node's (before, after) pads per axis (ops/tensor/pad_params.h);
// nullopt when they are not known.
std::optional<std::vector<std::pair<int64_t, int64_t>>> PadsOfENode(const EGraph& g, const ENode& pad);

// Adds a standard op that is newer than some models' opsets (Gelu,
// LayerNormalization, HardSwish): in the default domain when the model's
// opset has it, else as its ai.aic alias (the driver runs such a rule below
// its opset only for targets that run the alias).
ClassId AddNewerStandardOp(RuleContext& ctx, const std::string& op_type, const std::vector<ClassId>& children,
                           std::vector<Attribute> attributes = {});

}  // namespace aic::rewrite

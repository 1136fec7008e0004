// Shared, non-template pieces of the elementwise families (math unary/binary,
// logic, cast, activations): shape/dtype inference for unary and broadcasting
// ops, the traits builder for pointwise ops, the FLOP convention, and the
// registration entry points of the family's sub-files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/math/elementwise_driver.h"
#include "ops/op_context.h"
#include "ops/registry.h"
#include "ops/traits.h"

namespace aic {

// FLOPs per output element, a fixed convention (not a hardware measure):
// one for each basic operation (+ - * / min max compare abs neg floor round
// select, and logic/bit ops on integers), kFlopsTranscendental for exp, log,
// sqrt, pow, the trigonometric and hyperbolic functions and erf. Composite
// activations add up their parts (Sigmoid = exp + add + div = 6). Pure data
// movement (Cast) counts 0.
inline constexpr int64_t kFlopsBasic = 1;
inline constexpr int64_t kFlopsTranscendental = 4;

// Output = input 0's type and shape; the dtype must be in `s`.
absl::Status InferSameAsInput(OpContext& ctx, TypeSet s);
// Output: bool, input 0's shape; the dtype must be in `s`.
absl::Status InferPredicate(OpContext& ctx, TypeSet s);
// Broadcast of every present input (legacy opset<7 axis alignment for two
// inputs). All inputs share one dtype, in `s`; the output has that dtype, or
// `out` when given (bool for comparisons).
absl::Status InferBroadcast(OpContext& ctx, TypeSet s, std::optional<DType> out = std::nullopt);

InferFn SameAsInputInfer(TypeSet s);
InferFn PredicateInfer(TypeSet s);
InferFn BroadcastInfer(TypeSet s, std::optional<DType> out = std::nullopt);
// BroadcastInfer for ops that take exactly two inputs.
InferFn BinaryInfer(TypeSet s, std::optional<DType> out = std::nullopt);
CostFn ElementwiseCostFn(int64_t flops_per_element);

// The seed's metadata for a pointwise op, built fluently:
//   PointwiseInfo("ReLU", "y = max(x, 0)").Irreversible().Collapses(kClampsRange, "...")
// Defaults: nonlinear, invertibility unknown, no collapse.
struct PointwiseInfo {
  std::string name;        // semantic_name
  std::string meaning;     // formula
  Linearity linearity = Linearity::kNonlinear;
  Invertibility invertibility = Invertibility::kUnknown;
  CollapseKind collapse = CollapseKind::kNone;
  std::string collapse_how;
  std::vector<std::string> fuses_with;
  std::string removable_when;
  std::string safe_transform_when;

  PointwiseInfo(std::string n, std::string m) : name(std::move(n)), meaning(std::move(m)) {}
  PointwiseInfo& Linear(Linearity l = Linearity::kLinear) { linearity = l; return *this; }
  PointwiseInfo& Invertible() { invertibility = Invertibility::kInvertible; return *this; }
  PointwiseInfo& Irreversible() { invertibility = Invertibility::kIrreversible; return *this; }
  PointwiseInfo& Collapses(CollapseKind k, std::string how) {
    collapse = k;
    collapse_how = std::move(how);
    return *this;
  }
  PointwiseInfo& FusesWith(std::vector<std::string> ops) { fuses_with = std::move(ops); return *this; }
  PointwiseInfo& RemovableWhen(std::string s) { removable_when = std::move(s); return *this; }
  PointwiseInfo& SafeWhen(std::string s) { safe_transform_when = std::move(s); return *this; }
};
// elementwise = true; effect kRestricts when the op collapses values, else
// kPreserves; effect_detail names the shape that is kept.
Traits PointwiseTraits(const OpContext& ctx, PointwiseInfo info);
TraitsFn PointwiseTraitsFn(PointwiseInfo info);

// Activation fusions that oneDNN post-ops and cuBLASLt epilogues offer.
std::vector<std::string> ActivationFusions();

// True when every element of t is nonzero (for "Scale is invertible").
bool AllNonZero(const Tensor& t);

// Sub-files of the families (registered from RegisterElementwiseUnaryOps /
// RegisterElementwiseBinaryOps).
void RegisterCastOps(OpRegistry& r);
void RegisterBitCastOps(OpRegistry& r);  // bitcast.cc
void RegisterLogicOps(OpRegistry& r);
void RegisterVariadicOps(OpRegistry& r);
void RegisterParametricActivationOps(OpRegistry& r);  // ops/nn/activation_parametric.cc


// An OpDef in the default domain from its hooks.
OpDef MakeOpDef(const char* op_type, int since_version, InferFn infer, TraitsFn traits,
                CostFn cost, KernelFn kernel);

// Registers a unary op whose output dtype equals its input's: one line per op
// in the family files.
template <TypeSet S, typename F>
void RegisterUnary(OpRegistry& r, const char* op_type, int since_version, int64_t flops,
                   PointwiseInfo info, F f) {
  r.Register(MakeOpDef(op_type, since_version, SameAsInputInfer(S),
                       PointwiseTraitsFn(std::move(info)), ElementwiseCostFn(flops),
                       UnaryKernel<S>(f)));
}

// Same, for ops whose functor reads attributes (make(node) returns it) and
// whose traits depend on the node.
template <TypeSet S, typename Make>
void RegisterUnaryWith(OpRegistry& r, const char* op_type, int since_version, int64_t flops,
                       TraitsFn traits, Make make) {
  r.Register(MakeOpDef(op_type, since_version, SameAsInputInfer(S), std::move(traits),
                       ElementwiseCostFn(flops), UnaryKernelWith<S>(std::move(make))));
}

}  // namespace aic

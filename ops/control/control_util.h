// Pieces shared by the control-flow ops (If, Loop, Scan) and SequenceMap: the
// subgraph attributes, type merging for values that come from more than one
// place (two branches, or a loop's initial value and its body's result), the
// shape of a scan output stacked from iterations, and the seed's traits of an
// op that runs a body.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"
#include "ops/traits.h"

namespace aic {

// The graph held by attribute `name`, or nullptr.
const Graph* GraphAttr(const Node& node, const char* name);

// A type that covers both `a` and `b`: equal dims stay, different dims become
// fresh symbols, different ranks give unknown rank; sequences and optionals
// merge their elements. An unknown side gives what the other side's kind and
// element type alone say.
TypeInfo MergeTypes(const TypeInfo& a, const TypeInfo& b, const OpContext& ctx);

// `per_iteration` (a tensor type) with `dim` inserted at `axis` (0 <= axis <=
// rank). Unknown rank stays unknown; a non-tensor gives an unknown type.
TypeInfo StackedType(const TypeInfo& per_iteration, const Dim& dim, int64_t axis);

// The tensor a scan output is when there were no iterations: the body's
// declared output type with 0 inserted at `axis` (unknown dims count as 0).
// Fails when the body does not declare a tensor dtype.
absl::StatusOr<Tensor> EmptyStack(const TypeInfo& per_iteration, int64_t axis);

// Stacks iteration results along a new axis; no parts gives EmptyStack.
absl::StatusOr<Tensor> StackIterations(const std::vector<Tensor>& parts,
                                       const TypeInfo& per_iteration, int64_t axis);

// The subgraph runner, or FailedPrecondition when the caller gave none.
absl::StatusOr<SubgraphRunner*> RunnerOf(const KernelContext& ctx);

// Traits of an op that runs a body: semantics come from the body, so linearity
// and invertibility are unknown; the meaning names the body sizes.
Traits ControlFlowTraits(const std::string& semantic_name, const std::string& meaning,
                         const std::string& removable_when);

// The op's own inputs and outputs only: what its bodies do is counted by the
// analyzer, body by body. known=false when `iterations_known` is false.
Cost ControlFlowCost(const OpContext& ctx, bool iterations_known);

}  // namespace aic

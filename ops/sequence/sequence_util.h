// Helpers shared by the sequence and optional ops: reading a sequence input,
// its element type, a position input, and the seed's traits of an op that only
// moves tensors between containers.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"
#include "ops/registry.h"
#include "ops/traits.h"

namespace aic {

// The element type of a sequence (or optional) type; kNone when not known.
TypeInfo ElementType(const TypeInfo& container);

// The tensor element of a sequence type, for checks: its dtype or kUndefined.
DType SequenceDType(const TypeInfo& seq);

// Statically: input `i` must be a sequence (or of unknown type).
absl::Status CheckSequenceInput(const OpContext& ctx, size_t i);
// At run time: input `i` as a sequence, or an error naming the node.
absl::StatusOr<const RuntimeValue*> SequenceInput(const KernelContext& ctx, size_t i);

// Statically: a position input must be an int32/int64 scalar when typed.
absl::Status CheckPositionInput(const OpContext& ctx, size_t i);
// Reads position input `i` and normalizes it against `size`: valid positions
// are [-size, size - 1], or [-size, size] when `allow_end` (insertion).
absl::StatusOr<int64_t> ReadPosition(const KernelContext& ctx, size_t i, int64_t size,
                                     bool allow_end);

// Traits of an op that moves or selects whole tensors without computing.
Traits ContainerTraits(const std::string& semantic_name, const std::string& meaning,
                       Linearity linearity, Invertibility invertibility,
                       CollapseKind collapse = CollapseKind::kNone,
                       const std::string& collapse_how = "");

// Cost of a container op: bytes when every input/output is a static tensor.
Cost ContainerCost(const OpContext& ctx);

// Registration of the family's parts (one file each).
void RegisterSequenceBasicOps(OpRegistry& r);        // sequence.cc
void RegisterSequenceSplitConcatOps(OpRegistry& r);  // sequence_split_concat.cc
void RegisterSequenceMapOp(OpRegistry& r);           // sequence_map.cc
void RegisterOptionalOps(OpRegistry& r);             // optional.cc

}  // namespace aic

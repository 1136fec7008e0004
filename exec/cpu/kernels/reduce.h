// Reductions of dense f32 over one contiguous block of axes: the input seen
// as outer x reduced x inner (inner = 1 when the block ends at the last
// axis). ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp. Used where
// oneDNN's reduction has only its reference implementation (an inner
// extent that is not the last axis) or lacks the op.
#pragma once

#include <cstdint>
#include <string>

#include "exec/cpu/kernels/axis_lanes.h"

namespace aic::cpu::kernels {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

// The kind for an ONNX op type ("ReduceSum", ...); false when not covered.
bool ReduceKindOf(const std::string& op_type, ReduceKind* kind);

// out: outer x inner. `lanes.dim` is the product of the reduced extents.
// Max/Min propagate NaN as the reference does.
void ReduceF32(const float* x, float* out, const AxisLanes& lanes, ReduceKind kind);

}  // namespace aic::cpu::kernels

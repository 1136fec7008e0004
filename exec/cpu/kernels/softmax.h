// Softmax and LogSoftmax along any axis of dense f32 (oneDNN 2.6 runs its
// reference implementation for a non-last axis of a plain tensor; the last
// axis stays with oneDNN's JIT kernel, see LowerSoftmaxOrNative).
#pragma once

#include "exec/cpu/kernels/axis_lanes.h"
#include "graph/dtype.h"

namespace aic::cpu::kernels {

// y = softmax(x) (or log-softmax) along the lanes' axis; y may equal x.
void SoftmaxF32(const float* x, float* y, const AxisLanes& lanes, bool log);

// Softmax of a tensor the model declares `half` (float16 or bfloat16),
// computed the way an fp16 kernel and the reference executor compute it
// (ops/nn/softmax.cc, numpy's float16 arithmetic): x - max, its exp, the
// sum and the quotient each rounded to `half`. Along the last axis float16
// sums pairwise in float and rounds once, as numpy does; otherwise (and for
// bfloat16) every addition rounds. y may equal x.
void SoftmaxRoundedToHalf(const float* x, float* y, const AxisLanes& lanes, DType half);

}  // namespace aic::cpu::kernels

// Softmax and LogSoftmax along any axis of dense f32 (oneDNN 2.6 runs its
// reference implementation for a non-last axis of a plain tensor; on CPUs
// without AVX-512F the last axis stays with oneDNN's JIT kernel, see
// LowerSoftmaxOrNative).
#pragma once

#include "exec/cpu/kernels/axis_lanes.h"

namespace aic::cpu::kernels {

// y = softmax(x) (or log-softmax) along the lanes' axis; y may equal x.
void SoftmaxF32(const float* x, float* y, const AxisLanes& lanes, bool log);

}  // namespace aic::cpu::kernels

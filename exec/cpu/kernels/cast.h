// Cast between f32, f16, int32, int64, uint8, int8 and bool over dense
// buffers: one converting loop per (from, to) pair.
#pragma once

#include <cstdint>

#include "graph/dtype.h"

namespace aic::cpu::kernels {

using CastFn = void (*)(const void* x, void* y, int64_t n);

// Null when the pair is not covered (the reference kernel then runs).
CastFn CastKernel(DType from, DType to);

}  // namespace aic::cpu::kernels

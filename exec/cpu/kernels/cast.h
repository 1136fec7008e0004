// Cast between f32, f16, int32, int64, uint8, int8 and bool over dense
// buffers: one converting loop per (from, to) pair.
#pragma once

#include <cstdint>

#include "graph/dtype.h"

namespace aic::cpu::kernels {

using CastFn = void (*)(const void* x, void* y, int64_t n);

// Null when the pair is not covered (the reference kernel then runs).
CastFn CastKernel(DType from, DType to);

// n float16 values (their bits) to float, and floats to float16 rounded to
// nearest even, on the calling thread: what CastKernel's f16 <-> f32 pair
// does, for kernels converting a row at a time.
void HalfToFloatRow(const uint16_t* x, float* y, int64_t n);
void FloatToHalfRow(const float* x, uint16_t* y, int64_t n);

// Rounds each of x's n floats to the nearest float16 (`half` kFloat16) or
// bfloat16 (kBFloat16), ties to even, in place: the value a tensor of that
// type stores when a kernel computed it in float (the reference executor's
// outputs; support/half.h FloatToHalf / FloatToBFloat16). NaN stays NaN.
void RoundToHalfInPlace(float* x, int64_t n, DType half);
// y = x rounded as RoundToHalfInPlace does (y may equal x).
void RoundToHalfCopy(const float* x, float* y, int64_t n, DType half);

}  // namespace aic::cpu::kernels

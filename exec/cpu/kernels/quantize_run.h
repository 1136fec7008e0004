// One QuantizeLinear pass over contiguous floats with one scale and zero
// point: y = saturate(round_half_even(f32(x / scale)) + zero), NaN to the
// low end, as the reference (ops/misc/quantize.cc) and DynamicQuantizeLinear
// define it. Shared by QuantizeLinear's kernel (quantize.h) and
// DynamicQuantizeLinear's (dynamic_quantize.h).
//
// Why not a plain loop: compiled for AVX-512F, the division and the float
// clamps GCC vectorizes as compare-and-blend left a [1, 128, 1024] pass at
// ~50 µs, the bulk of a statically quantized transformer's run time. With
// AVX-512F the pass divides (or multiplies by 1/scale, below), rounds,
// clamps with min/max and narrows with the saturating vpmov{us,s}db; with
// AVX2 only (quantize_avx2.h), the same 8 lanes at a time.
// x * (1/scale) is within ~2.5 ulps of f32(x / scale), and the two round to
// different integers only when one of them lies within those ulps of a
// half-integer: a vector with a lane within |t| * 2^-20 (8 ulps) of one is
// recomputed with the division (the AVX-512 form uses one margin for every
// lane, at least that for every quotient that does not saturate:
// quantize_avx512.h), so results are bit-equal to the division's.
// Which of the two is faster depends on the CPU (QuantizeByDivision).
// Without AVX2 the plain loop runs.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

void QuantizeRunU8(const float* x, uint8_t* y, int64_t n, float scale, float zero);
void QuantizeRunS8(const float* x, int8_t* y, int64_t n, float scale, float zero);

// Whether the passes above take the AVX-512 path (quantize_avx512.h) for
// this scale: the CPU has AVX-512F and scale and 1/scale are normal.
bool QuantizeRunIsVectorized(float scale);
// Whether the vector passes (AVX-512 or AVX2) divide (else multiply by
// 1/scale and divide only near ties): whichever was faster here, timed once.
bool QuantizeByDivision();
// Tests of both ways: 1 divide, 0 multiply, -1 (the default) the timed choice.
void ForceQuantizeByDivision(int mode);
// Tests of the AVX2 forms on a CPU with AVX-512: true runs every pass that
// asks QuantizeRunIsVectorized as on a CPU without AVX-512. Returns the
// setting it replaced (for a test to restore).
bool ForceQuantizeWithoutAvx512(bool on);

// The DequantizeLinear pass over contiguous 8-bit values with one scale and
// zero point: y = (f32(x) - zero) * scale, the reference's float32 order.
// Shared by DequantizeLinear's kernel (quantize.h) and QLinearAdd/Mul's
// (quantized_binary.h).
void DequantizeRunU8(const uint8_t* x, float* y, int64_t n, float scale, float zero);
void DequantizeRunS8(const int8_t* x, float* y, int64_t n, float scale, float zero);

}  // namespace aic::cpu::kernels

// Sixteen floats quantized as QuantizeLinear defines it (quantize_run.h):
// f32(x / scale) rounded half to even, + zero, clamped to [lo, hi]. The
// float result is an exact integer in range; the callers narrow it. Two
// ways to the same bits: the division itself, or x * (1/scale) with the
// lanes within 8 ulps of a tie (or NaN) recomputed with the division. Which
// is faster depends on the CPU (a 16-lane vdivps is cheap on AMD Zen 4 and
// slow on Intel's AVX-512 cores), so QuantizeByDivision() (quantize_run.h)
// times both once. One definition for the QuantizeLinear pass and the fused
// QLinearAdd/Mul pass (quantized_binary.cc).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>

#define AIC_QUANTIZE_AVX512 1

namespace aic::cpu::kernels {

struct QuantizeConstants {
  __m512 scale, inv, zero, lo, hi;
  // 0.5 less the tie margin: |x * (1/scale) - its rounding| at or over it
  // divides (QuantizedLanes).
  __m512 tie_floor;
};

// GCC 12's AVX-512 intrinsics start from _mm*_undefined_* values, which
// -Wmaybe-uninitialized reports inside the headers (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The tie margin is one constant, not 8 ulps of each quotient t
// (|t| * 2^-20): past |t| = `bound` both roundings of t saturate to the same
// end of [lo, hi], so only quotients under it matter, and bound * 2^-19 is
// at least twice their 8 ulps. The per-lane margin took four of the fused
// QLinearAdd pass's ~22 vector operations per 16 values, which is
// compute-bound on Intel's AVX-512 cores.
__attribute__((target("avx512f"))) inline QuantizeConstants MakeQuantizeConstants(float scale, float zero, float lo,
                                                                                   float hi) {
  const float bound = std::max(hi - zero, zero - lo) + 2.0f;
  return {_mm512_set1_ps(scale), _mm512_set1_ps(1.0f / scale), _mm512_set1_ps(zero),
          _mm512_set1_ps(lo),    _mm512_set1_ps(hi),           _mm512_set1_ps(0.5f - bound * 0x1p-19f)};
}

template <bool kDivide>
__attribute__((target("avx512f"))) inline __m512 QuantizedLanes(__m512 xv, const QuantizeConstants& c) {
  if (kDivide) {
    __m512 q = _mm512_roundscale_ps(_mm512_div_ps(xv, c.scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, c.zero), c.lo), c.hi);
  }
  __m512 t = _mm512_mul_ps(xv, c.inv);
  __m512 q = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // |t - q| <= 1/2 (exact), so within the margin of a tie is |t - q| at or
  // over tie_floor; not less than it: near a tie, or NaN (unordered).
  __mmask16 near = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, q)), c.tie_floor, _CMP_NLT_UQ);
  if (near != 0) {
    q = _mm512_mask_roundscale_ps(q, near, _mm512_div_ps(xv, c.scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // max(NaN, lo) is lo (vmaxps returns its second operand when one is NaN).
  return _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, c.zero), c.lo), c.hi);
}

#pragma GCC diagnostic pop

}  // namespace aic::cpu::kernels

#endif

// Eight floats quantized as QuantizeLinear defines it (quantize_run.h), for
// CPUs with AVX2 but not AVX-512 (quantize_avx512.h holds the 16-lane form):
// f32(x / scale) rounded half to even, + zero, clamped to [lo, hi] (NaN to
// lo, as the scalar QuantizeOne), narrowed to 8-bit integers. One definition
// for the QuantizeLinear pass and the fused QLinearAdd/Mul pass
// (quantized_binary.cc). Callers check avx2::HaveAvx2Fma() first.
#pragma once

#include <cmath>

#include "exec/cpu/kernels/vector_math_avx2.h"

#ifdef AIC_HAVE_AVX2_MATH

namespace aic::cpu::kernels::avx2 {

struct QuantizeConstants {
  __m256 scale, inv, zero, lo, hi;
  bool by_reciprocal;
};

// `divide`: the caller's choice of the faster way on this CPU
// (QuantizeByDivision, quantize_run.h). x * (1 / scale) approximates
// x / scale only where both are normal: other scales divide.
AIC_AVX2 inline QuantizeConstants MakeQuantizeConstants(float scale, float zero, float lo, float hi, bool divide) {
  const bool normal = std::isnormal(scale) && std::isnormal(1.0f / scale);
  return {_mm256_set1_ps(scale), _mm256_set1_ps(1.0f / scale), _mm256_set1_ps(zero), _mm256_set1_ps(lo),
          _mm256_set1_ps(hi), normal && !divide};
}

// f32(x / scale) rounded half to even, without a division where that cannot
// change the result: t = x * (1/scale) is within 2^-22 of x / scale
// relatively (two roundings), so where t is farther than |t| * 2^-20 from a
// tie (k + 0.5), t and f32(x / scale) round to the same integer. Only a vector
// with a lane near a tie (or NaN, infinite) divides. The division was the
// bulk of a fused QDQ Add on a Zen 3 (1.76x ONNX Runtime's time on u8
// [1,256,56,56]); the check is six cheap instructions. (quantize_avx512.h
// does the same with a mask.)
AIC_AVX2 inline __m256 RoundedQuotient(__m256 x, const QuantizeConstants& c) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  if (!c.by_reciprocal) return _mm256_round_ps(_mm256_div_ps(x, c.scale), kNearest);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 t = _mm256_mul_ps(x, c.inv);
  const __m256 q = _mm256_round_ps(t, kNearest);
  const __m256 from_tie =
      _mm256_andnot_ps(sign, _mm256_sub_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(t, q)), _mm256_set1_ps(0.5f)));
  const __m256 limit = _mm256_mul_ps(_mm256_andnot_ps(sign, t), _mm256_set1_ps(0x1p-20f));
  // Not (from_tie > limit): near a tie, or NaN (unordered).
  if (_mm256_movemask_ps(_mm256_cmp_ps(from_tie, limit, _CMP_NGT_UQ)) != 0) {
    return _mm256_round_ps(_mm256_div_ps(x, c.scale), kNearest);
  }
  return q;
}

// The eight quantized values in the low 8 bytes, int8 (is_signed) or uint8.
AIC_AVX2 inline __m128i QuantizedBytes(__m256 x, const QuantizeConstants& c, bool is_signed) {
  __m256 v = RoundedQuotient(x, c);
  v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, c.zero), c.lo), c.hi);  // vmaxps gives lo for NaN
  __m256i iv = _mm256_cvtps_epi32(v);
  __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(iv), _mm256_extracti128_si256(iv, 1));
  return is_signed ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
}

}  // namespace aic::cpu::kernels::avx2

#endif  // AIC_HAVE_AVX2_MATH

// Eight floats quantized as QuantizeLinear defines it (quantize_run.h), for
// CPUs with AVX2 but not AVX-512 (quantize_avx512.h holds the 16-lane form):
// f32(x / scale) rounded half to even, + zero, clamped to [lo, hi] (NaN to
// lo, as the scalar QuantizeOne), narrowed to 8-bit integers. One definition
// for the QuantizeLinear pass and the fused QLinearAdd/Mul pass
// (quantized_binary.cc). Callers check avx2::HaveAvx2Fma() first.
#pragma once

#include "exec/cpu/kernels/vector_math_avx2.h"

#ifdef AIC_HAVE_AVX2_MATH

namespace aic::cpu::kernels::avx2 {

struct QuantizeConstants {
  __m256 scale, zero, lo, hi;
};

AIC_AVX2 inline QuantizeConstants MakeQuantizeConstants(float scale, float zero, float lo, float hi) {
  return {_mm256_set1_ps(scale), _mm256_set1_ps(zero), _mm256_set1_ps(lo), _mm256_set1_ps(hi)};
}

// The eight quantized values in the low 8 bytes, int8 (is_signed) or uint8.
AIC_AVX2 inline __m128i QuantizedBytes(__m256 x, const QuantizeConstants& c, bool is_signed) {
  __m256 v = _mm256_round_ps(_mm256_div_ps(x, c.scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, c.zero), c.lo), c.hi);  // vmaxps gives lo for NaN
  __m256i iv = _mm256_cvtps_epi32(v);
  __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(iv), _mm256_extracti128_si256(iv, 1));
  return is_signed ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
}

}  // namespace aic::cpu::kernels::avx2

#endif  // AIC_HAVE_AVX2_MATH

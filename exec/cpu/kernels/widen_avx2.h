// 8-bit values widened to int16 with a zero point subtracted, 16 at a time:
// how the pair kernels (pair_gemm.cc, pair_conv.cc) bring activations to
// their int16 operands. Only functions marked AIC_AVX2 may call these.
#pragma once

#include "exec/cpu/kernels/vector_math_avx2.h"

#ifdef AIC_HAVE_AVX2_MATH

#include <cstdint>

namespace aic::cpu::kernels::avx2 {

// The 16 bytes at src (int8 when kSigned, else uint8) minus zero.
template <bool kSigned>
AIC_AVX2 inline __m256i WidenSixteen(const void* src, __m256i zero) {
  const __m128i bytes = _mm_loadu_si128(static_cast<const __m128i*>(src));
  return _mm256_sub_epi16(kSigned ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes), zero);
}

// The even bytes of the 32 at src (a stride-2 run of 16) minus zero.
template <bool kSigned>
AIC_AVX2 inline __m256i WidenSixteenEven(const void* src, __m256i zero) {
  const __m256i bytes = _mm256_loadu_si256(static_cast<const __m256i*>(src));
  const __m256i v = kSigned ? _mm256_srai_epi16(_mm256_slli_epi16(bytes, 8), 8)
                            : _mm256_and_si256(bytes, _mm256_set1_epi16(0xff));
  return _mm256_sub_epi16(v, zero);
}

}  // namespace aic::cpu::kernels::avx2

#endif  // AIC_HAVE_AVX2_MATH

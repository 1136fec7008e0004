// The requantization of QLinearConv and QLinearMatMul on 16 int32 sums at
// once, as the reference kernel rounds it: y = saturate(nearbyint(double(C)
// · scale) + zero), the same double product, half to even, then the zero
// point added and the result clamped to uint8 or int8. Only functions marked
// AIC_AVX2 may call it (the pair kernels: pair_gemm.cc, pair_depthwise.cc).
#pragma once

#include "exec/cpu/kernels/vector_math_avx2.h"

#ifdef AIC_HAVE_AVX2_MATH

namespace aic::cpu::kernels::avx2 {

struct RequantizeConstants {
  __m256d low, high;  // the output's bounds minus the zero point
  __m128i zero;       // the zero point in 8 int16 lanes
  bool out_signed;
  // Whether every |C·scale| is known to be below 2^31: then the conversion
  // to int32 cannot overflow and the saturating packs do the clamping.
  bool fits;
};

AIC_AVX2 inline RequantizeConstants MakeRequantizeConstants(int32_t zero, bool out_signed, bool fits) {
  const double lo = out_signed ? -128.0 : 0.0, hi = out_signed ? 127.0 : 255.0;
  return {_mm256_set1_pd(lo - zero), _mm256_set1_pd(hi - zero), _mm_set1_epi16(static_cast<int16_t>(zero)),
          out_signed, fits};
}

// Sums c0..c15 (lo: 0-7, hi: 8-15) to 16 bytes; scales: 16 per-column
// doubles, or null for `scale` on all. The conversion to int32 rounds as
// nearbyint does (the current mode, half to even); a clamp to the output's
// integer bounds before it equals one after it.
AIC_AVX2 inline __m128i RequantizeSixteen(__m256i lo, __m256i hi, const double* scales, __m256d scale,
                                           const RequantizeConstants& k) {
  const __m128i parts[4] = {_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1),
                            _mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)};
  __m128i q[4];
  if (k.fits) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256d s = scales != nullptr ? _mm256_loadu_pd(scales + 4 * i) : scale;
      q[i] = _mm256_cvtpd_epi32(_mm256_mul_pd(_mm256_cvtepi32_pd(parts[i]), s));
    }
  } else {
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256d s = scales != nullptr ? _mm256_loadu_pd(scales + 4 * i) : scale;
      const __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(parts[i]), s);
      q[i] = _mm256_cvtpd_epi32(_mm256_min_pd(_mm256_max_pd(v, k.low), k.high));
    }
  }
  // Saturating at each narrowing: an int16-saturated value plus the zero
  // point (|zero| <= 255) stays outside the 8-bit range on the same side.
  const __m128i w0 = _mm_adds_epi16(_mm_packs_epi32(q[0], q[1]), k.zero);
  const __m128i w1 = _mm_adds_epi16(_mm_packs_epi32(q[2], q[3]), k.zero);
  return k.out_signed ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
}

}  // namespace aic::cpu::kernels::avx2

#endif  // AIC_HAVE_AVX2_MATH

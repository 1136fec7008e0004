// e^x, log x, tanh x and friends on 16 floats at once with AVX-512F
// intrinsics, for the row kernels of unary_avx512.cc and softmax.cc. The
// compiler's vectorization of the scalar forms (exp.h, log.h) spends twice
// the memory-bound time on large tensors, and oneDNN 2.6's JIT eltwise about
// as much (bench/OPS.md: Exp, Tanh, Sigmoid on [8,512,768] 1.4-1.9x ONNX
// Runtime); these keep up with memory. Only functions marked AIC_AVX512 may
// call them, and only after HaveAvx512() said yes.
//
// NaN in gives NaN out everywhere: every clamp is max(lo, min(hi, x)), and
// vminps/vmaxps return their second operand when either is NaN.
//
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* values, which
// -Wmaybe-uninitialized and -Wuninitialized report where they are inlined (a
// known false positive): files defining AIC_AVX512 functions wrap them in
// AIC_AVX512_BEGIN / AIC_AVX512_END.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define AIC_HAVE_AVX512_MATH 1
#include <immintrin.h>

#include <cstddef>
#include <initializer_list>
#include <iterator>

#include "exec/cpu/kernels/vector_math_coefficients.h"
#endif

namespace aic::cpu::kernels::avx512 {

// Whether this CPU runs AVX-512F (checked once); false off x86-64.
inline bool HaveAvx512() {
#ifdef AIC_HAVE_AVX512_MATH
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
#else
  return false;
#endif
}

}  // namespace aic::cpu::kernels::avx512

#ifdef AIC_HAVE_AVX512_MATH

#define AIC_AVX512 __attribute__((target("avx512f")))
#define AIC_AVX512_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define AIC_AVX512_END _Pragma("GCC diagnostic pop")

AIC_AVX512_BEGIN

namespace aic::cpu::kernels::avx512 {

AIC_AVX512 inline __m512 Clamp(__m512 x, float lo, float hi) {
  return _mm512_max_ps(_mm512_set1_ps(lo), _mm512_min_ps(_mm512_set1_ps(hi), x));
}

// e^x: n = round(x·log2 e), r = x - n·ln2 with ln2 in two parts (n·0.693359375
// is exact), e^r by Cephes' expf polynomial (|r| <= ln2/2), then 2^n applied
// by vscalefps, which overflows to inf past the top and underflows gradually
// through the subnormals at the bottom (the clamp only keeps n in range).
// Max error against double exp: 2 ulp (tests/exec/cpu/vector_math_test.cc).
AIC_AVX512 inline __m512 Exp(__m512 x) {
  __m512 c = Clamp(x, -104.0f, 89.0f);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(vector_math::kLn2High), c);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(vector_math::kLn2Low), r);
  __m512 p = _mm512_set1_ps(vector_math::kExpPoly[0]);
  for (size_t i = 1; i < std::size(vector_math::kExpPoly); ++i) {
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(vector_math::kExpPoly[i]));
  }
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// e^x on 8 doubles: n = round(x·log2 e), r = x - n·ln2 with ln2 in two
// parts (the high one has 21 trailing zero bits, so n·hi is exact for any n
// in range), e^r by its Taylor series to r^13 (|r| <= ln2/2: the remainder
// is under 1e-17 relative), then 2^n by vscalefpd (gradual underflow,
// overflow to inf). Max error against std::exp: 2 ulp (the test).
AIC_AVX512 inline __m512d ExpPd(__m512d x) {
  __m512d c = _mm512_max_pd(_mm512_set1_pd(-746.0), _mm512_min_pd(_mm512_set1_pd(710.0), x));
  __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(c, _mm512_set1_pd(1.4426950408889634)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(6.93147180369123816490e-01), c);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.90821492927058770002e-10), r);
  // 1/k! for k = 13 down to 2, then 1 + (r + p·r²): one rounding where the
  // leading 1 joins.
  __m512d p = _mm512_set1_pd(vector_math::kExpTaylor[0]);
  for (size_t i = 1; i < std::size(vector_math::kExpTaylor); ++i) {
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(vector_math::kExpTaylor[i]));
  }
  p = _mm512_add_pd(_mm512_fmadd_pd(p, _mm512_mul_pd(r, r), r), _mm512_set1_pd(1.0));
  return _mm512_scalef_pd(p, n);
}

// log x: x = m·2^e with m in [√½, √2) (vgetmantps/vgetexpps, which see
// subnormals as the numbers they are), log m = f - f²/2 + f³·P(f) for
// f = m - 1 by Cephes' logf polynomial, e·ln2 added in two parts. log 0 =
// -inf, log of a negative number or NaN = NaN, log inf = inf. Max error
// against double log: 2 ulp (the test).
AIC_AVX512 inline __m512 Log(__m512 x) {
  __m512 e = _mm512_getexp_ps(x);
  __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  __mmask16 big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356237309505f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_ps(e, big, e, _mm512_set1_ps(1.0f));
  __m512 f = _mm512_sub_ps(m, _mm512_set1_ps(1.0f));
  __m512 z = _mm512_mul_ps(f, f);
  __m512 p = _mm512_set1_ps(vector_math::kLogPoly[0]);
  for (size_t i = 1; i < std::size(vector_math::kLogPoly); ++i) {
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(vector_math::kLogPoly[i]));
  }
  __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, f), z);
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(vector_math::kLn2Low), y);
  y = _mm512_fnmadd_ps(z, _mm512_set1_ps(0.5f), y);
  __m512 r = _mm512_add_ps(f, y);
  r = _mm512_fmadd_ps(e, _mm512_set1_ps(vector_math::kLn2High), r);
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, inf, _CMP_EQ_OQ), inf);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), _mm512_set1_ps(-__builtin_inff()));
  __mmask16 bad = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ);  // x < 0 or NaN
  return _mm512_mask_mov_ps(r, bad, _mm512_set1_ps(__builtin_nanf("")));
}

// log(1 + t) for t >= 0: log u of u = 1 + t, corrected by the rounding of
// that sum ((u - 1) - t) / u, so tiny t gives t, not 0.
AIC_AVX512 inline __m512 Log1pNonNegative(__m512 t) {
  __m512 u = _mm512_add_ps(t, _mm512_set1_ps(1.0f));
  __m512 lost = _mm512_sub_ps(_mm512_sub_ps(u, _mm512_set1_ps(1.0f)), t);
  return _mm512_sub_ps(Log(u), _mm512_div_ps(lost, u));
}

// 1 / (1 + e^-x): 0 where e^-x overflows, 1 where it underflows.
AIC_AVX512 inline __m512 Sigmoid(__m512 x) {
  __m512 e = Exp(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f)));
}

// tanh x as an odd rational function of degree 13/6 (the minimax fit Eigen
// uses, vector_math_coefficients.h) of a = min(|x|, 9), the sign put back by
// an OR; no exp, so no cancellation near 0, and no compares: a tiny x comes
// out as itself and |x| >= 9 as ±1 by the fit's own constants. NaN stays NaN
// (vminps returns its second operand). Max error: 3 ulp (the test).
AIC_AVX512 inline __m512 Tanh(__m512 x) {
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  __m512 a = _mm512_min_ps(_mm512_set1_ps(vector_math::kTanhClamp), _mm512_abs_ps(x));
  __m512 a2 = _mm512_mul_ps(a, a);
  __m512 p = _mm512_set1_ps(vector_math::kTanhP[0]);
  for (size_t i = 1; i < std::size(vector_math::kTanhP); ++i) {
    p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(vector_math::kTanhP[i]));
  }
  __m512 q = _mm512_set1_ps(vector_math::kTanhQ[0]);
  for (size_t i = 1; i < std::size(vector_math::kTanhQ); ++i) {
    q = _mm512_fmadd_ps(q, a2, _mm512_set1_ps(vector_math::kTanhQ[i]));
  }
  __m512 y = _mm512_mul_ps(a, _mm512_div_ps(p, q));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), _mm512_and_si512(_mm512_castps_si512(x), sign)));
}

}  // namespace aic::cpu::kernels::avx512

AIC_AVX512_END

#endif  // AIC_HAVE_AVX512_MATH

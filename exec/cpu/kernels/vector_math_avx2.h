// e^x, tanh x and the logistic on 8 floats at once with AVX2 and FMA, for
// CPUs without AVX-512 (vector_math_avx512.h holds the 16-lane forms these
// mirror). There oneDNN 2.6's jit:avx2 eltwise took 8-10x ONNX Runtime's
// time for Tanh and 5x for GELU's tanh form (`run_ops.py` on a Zen 3 EPYC);
// these keep up with memory. Only functions marked AIC_AVX2 may call them,
// and only after HaveAvx2Fma() said yes.
//
// NaN in gives NaN out: every clamp is max(lo, min(hi, x)), and
// vminps/vmaxps return their second operand when either is NaN.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define AIC_HAVE_AVX2_MATH 1
#include <immintrin.h>

#include <cstddef>
#include <iterator>

#include "exec/cpu/kernels/vector_math_coefficients.h"
#endif

namespace aic::cpu::kernels::avx2 {

// Whether this CPU runs AVX2 and FMA (checked once); false off x86-64.
inline bool HaveAvx2Fma() {
#ifdef AIC_HAVE_AVX2_MATH
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
#else
  return false;
#endif
}

}  // namespace aic::cpu::kernels::avx2

#ifdef AIC_HAVE_AVX2_MATH

#define AIC_AVX2 __attribute__((target("avx2,fma")))

namespace aic::cpu::kernels::avx2 {

AIC_AVX2 inline __m256 Clamp(__m256 x, float lo, float hi) {
  return _mm256_max_ps(_mm256_set1_ps(lo), _mm256_min_ps(_mm256_set1_ps(hi), x));
}

// 2^n for integral n in [-150, 128] (as floats): two factors 2^(n - n/2) and
// 2^(n/2), each a normal float, applied by two products, so a result under
// FLT_MIN underflows gradually and one past FLT_MAX overflows to inf.
AIC_AVX2 inline __m256 ScaleByPowerOfTwo(__m256 p, __m256 n) {
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i half = _mm256_srai_epi32(ni, 1);
  __m256i rest = _mm256_sub_epi32(ni, half);
  const __m256i bias = _mm256_set1_epi32(127);
  __m256 a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  __m256 b = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(rest, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, a), b);
}

// e^x as avx512::Exp: n = round(x·log2 e), r = x - n·ln2 in two parts,
// Cephes' expf polynomial on |r| <= ln2/2, times 2^n. Max error against
// double exp: 2 ulp (tests/exec/cpu/vector_math_test.cc).
// e^(x - n·ln2) for integral n, |x - n·ln2| <= ln2/2: r in two parts (n·ln2
// adds no rounding), then Cephes' 1 + r + r²·P(r). Shared by Exp and ExpOfNonPositive.
AIC_AVX2 inline __m256 ExpOfReduced(__m256 x, __m256 n) {
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(vector_math::kLn2High), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(vector_math::kLn2Low), r);
  __m256 p = _mm256_set1_ps(vector_math::kExpPoly[0]);
  for (size_t i = 1; i < std::size(vector_math::kExpPoly); ++i) {
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(vector_math::kExpPoly[i]));
  }
  return _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
}

AIC_AVX2 inline __m256 Exp(__m256 x) {
  __m256 c = Clamp(x, -104.0f, 89.0f);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return ScaleByPowerOfTwo(ExpOfReduced(c, n), n);
}

// log(1 + t) for t in [0, 1] (what softplus needs: t = e^-|x|): log u of
// u = 1 + t in [1, 2] as avx512::Log computes it (m = u or u/2 in [√½, √2),
// Cephes' polynomial, e·ln2 in two parts), corrected by the rounding of the
// sum ((u - 1) - t) / u, so a tiny t gives t, not 0. No special values: u is
// never 0, negative, inf or NaN but where t is NaN (then NaN).
AIC_AVX2 inline __m256 Log1pOfUnit(__m256 t) {
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 u = _mm256_add_ps(t, one);
  __m256 big = _mm256_cmp_ps(u, _mm256_set1_ps(1.41421356237309505f), _CMP_GT_OQ);
  __m256 m = _mm256_blendv_ps(u, _mm256_mul_ps(u, _mm256_set1_ps(0.5f)), big);
  __m256 e = _mm256_and_ps(big, one);  // 1 where u was halved
  __m256 f = _mm256_sub_ps(m, one);
  __m256 z = _mm256_mul_ps(f, f);
  __m256 p = _mm256_set1_ps(vector_math::kLogPoly[0]);
  for (size_t i = 1; i < std::size(vector_math::kLogPoly); ++i) {
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(vector_math::kLogPoly[i]));
  }
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, f), z);
  y = _mm256_fmadd_ps(e, _mm256_set1_ps(vector_math::kLn2Low), y);
  y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
  __m256 r = _mm256_add_ps(f, y);
  r = _mm256_fmadd_ps(e, _mm256_set1_ps(vector_math::kLn2High), r);
  __m256 lost = _mm256_sub_ps(_mm256_sub_ps(u, one), t);
  return _mm256_sub_ps(r, _mm256_div_ps(lost, u));
}

// e^x for x <= 0 (a softmax's x - max): one exponent-field add for 2^n
// (n in [-126, 0]), n rounded by the 1.5·2^23 shift inside the first FMA;
// results under FLT_MIN (x < -87.34) flush to 0, whose relative error
// vanishes against the row's sum of at least 1. 17 operations against Exp's
// 24: a [8, 12, 128, 128] softmax spent two thirds of its time in them. NaN
// stays NaN.
AIC_AVX2 inline __m256 ExpOfNonPositive(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.3365447f);
  const __m256 c = _mm256_max_ps(lowest, x);  // vmaxps returns x when it is NaN
  const __m256 shift = _mm256_set1_ps(12582912.0f);  // 1.5·2^23
  __m256 j = _mm256_fmadd_ps(c, _mm256_set1_ps(1.44269504088896341f), shift);
  __m256 p = ExpOfReduced(c, _mm256_sub_ps(j, shift));
  __m256 e = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_castps_si256(j), 23)));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, lowest, _CMP_LT_OQ), e);
}

// 1 / (1 + e^-x) as D / (D + 2^n·N): e^-x = 2^n·e^r with n = round(-x·log2 e)
// and r = -x - n·ln2 (two parts), and e^r = N/D its (3,3) Padé approximant
// N = E + O, D = E - O, E = 1 + r²/10, O = r/2 + r³/120 (relative error
// under 1e-8 on |r| <= ln2/2), so the one division the logistic needs anyway
// also divides the approximant: 11 operations on the FMA pipes against 14
// for Cephes' exp polynomial and 1/(1 + e) (Zen 3, 98304 floats: 0.049 ->
// 0.037 ms). x is clamped to [-88, 87]: n stays in [-126, 127], so 2^n·N is
// one exponent-field add (n rounded by the 1.5·2^23 shift inside the first
// FMA; at n = -126 the garbage below FLT_MIN only ever meets D + it = D), and
// below -88 the result is 0. Max error 1.5 ulp (the test), as Exp's form had.
AIC_AVX2 inline __m256 Sigmoid(__m256 x) {
  const __m256 c = Clamp(x, -88.0f, 87.0f);
  const __m256 shift = _mm256_set1_ps(12582912.0f);  // 1.5·2^23
  __m256 j = _mm256_fmadd_ps(c, _mm256_set1_ps(-1.44269504088896341f), shift);
  __m256 n = _mm256_sub_ps(j, shift);
  __m256 r = _mm256_fnmsub_ps(n, _mm256_set1_ps(vector_math::kLn2High), c);  // -c - n·ln2
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(vector_math::kLn2Low), r);
  __m256 r2 = _mm256_mul_ps(r, r);
  __m256 even = _mm256_fmadd_ps(r2, _mm256_set1_ps(0.1f), _mm256_set1_ps(1.0f));
  __m256 odd = _mm256_mul_ps(r, _mm256_fmadd_ps(r2, _mm256_set1_ps(1.0f / 120.0f), _mm256_set1_ps(0.5f)));
  __m256 num = _mm256_add_ps(even, odd);
  __m256 den = _mm256_sub_ps(even, odd);
  // n << 23 is j's bits << 23 (j's exponent and the shift's leading bit
  // move out). A NaN's n gives garbage bits here, but den is NaN.
  __m256 scaled = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(num), _mm256_slli_epi32(_mm256_castps_si256(j), 23)));
  __m256 y = _mm256_div_ps(den, _mm256_add_ps(den, scaled));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-88.0f), _CMP_LT_OQ), y);
}

// tanh x as avx512::Tanh: the odd rational function of degree 13/6 on
// a = min(|x|, 9) (vector_math_coefficients.h), the sign put back by an OR.
// NaN stays NaN (vminps returns its second operand); ±inf gives ±1, -0 gives
// -0, a tiny x itself. Max error: 3 ulp (the test).
AIC_AVX2 inline __m256 Tanh(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 a = _mm256_min_ps(_mm256_set1_ps(vector_math::kTanhClamp), _mm256_andnot_ps(sign, x));
  __m256 a2 = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(vector_math::kTanhP[0]);
  for (size_t i = 1; i < std::size(vector_math::kTanhP); ++i) {
    p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(vector_math::kTanhP[i]));
  }
  __m256 q = _mm256_set1_ps(vector_math::kTanhQ[0]);
  for (size_t i = 1; i < std::size(vector_math::kTanhQ); ++i) {
    q = _mm256_fmadd_ps(q, a2, _mm256_set1_ps(vector_math::kTanhQ[i]));
  }
  __m256 y = _mm256_mul_ps(a, _mm256_div_ps(p, q));
  return _mm256_or_ps(y, _mm256_and_ps(x, sign));
}

// The largest and the sum of the eight lanes.
AIC_AVX2 inline float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

AIC_AVX2 inline float HorizontalSum(__m256 v) {
  __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  m = _mm_add_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// An integral double n (|n| < 2^51) as the int64 in each 64-bit lane: AVX2
// has no vcvtpd2qq, so through the bits of n + 1.5·2^52.
AIC_AVX2 inline __m256i IntegralToInt64(__m256d n) {
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);
  return _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(n, magic)), _mm256_castpd_si256(magic));
}

// 2^k for integral k in [-1022, 1023] (as doubles): its exponent field.
AIC_AVX2 inline __m256d PowerOfTwoPd(__m256d k) {
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(IntegralToInt64(k), _mm256_set1_epi64x(1023)), 52));
}

// e^x on 4 doubles as avx512::ExpPd (Taylor series to r^13 on |r| <= ln2/2),
// 2^n applied as two normal factors 2^(n - ⌊n/2⌋)·2^⌊n/2⌋ in place of
// vscalefpd: gradual underflow, overflow to inf. Max error: 2 ulp (the test).
AIC_AVX2 inline __m256d ExpPd(__m256d x) {
  __m256d c = _mm256_max_pd(_mm256_set1_pd(-746.0), _mm256_min_pd(_mm256_set1_pd(710.0), x));
  __m256d n = _mm256_round_pd(_mm256_mul_pd(c, _mm256_set1_pd(1.4426950408889634)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(6.93147180369123816490e-01), c);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(1.90821492927058770002e-10), r);
  __m256d p = _mm256_set1_pd(vector_math::kExpTaylor[0]);
  for (size_t i = 1; i < std::size(vector_math::kExpTaylor); ++i) {
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(vector_math::kExpTaylor[i]));
  }
  p = _mm256_add_pd(_mm256_fmadd_pd(p, _mm256_mul_pd(r, r), r), _mm256_set1_pd(1.0));
  // n in [-1077, 1024]: each half within the normal exponents.
  __m256d half = _mm256_floor_pd(_mm256_mul_pd(n, _mm256_set1_pd(0.5)));
  __m256d y = _mm256_mul_pd(_mm256_mul_pd(p, PowerOfTwoPd(_mm256_sub_pd(n, half))), PowerOfTwoPd(half));
  // NaN stays NaN (its n is NaN, whose integer bits make no power of two).
  return _mm256_blendv_pd(y, x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

}  // namespace aic::cpu::kernels::avx2

#endif  // AIC_HAVE_AVX2_MATH

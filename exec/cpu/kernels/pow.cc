// pow(x, y) = e^(y·ln|x|) on 8 floats at once. glibc's powf is a scalar
// call of 6-10 ns per element on a Zen 3, and ONNX Runtime's Pow is that
// same call, so a vector form wins by the width. The
// single-precision shortcut exp(y·ln x) loses |y·ln x|·2^-24 of relative
// accuracy (a 1000-ulp error at x^30), so both halves run in double
// precision, 4 lanes at a time, each to ~1e-11: the one rounding to float at
// the end is the only visible error.
#include "exec/cpu/kernels/pow.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

#ifdef AIC_HAVE_AVX2_MATH

namespace {

// ln x on 4 doubles, for positive, finite, normal x (every nonzero finite
// float is normal once widened): x = 2^e·m with m in [√½, √2), ln m =
// 2·atanh(t), t = (m - 1)/(m + 1), |t| <= 0.1716, summed to t^13. The first
// term left out is 2·t^15/15 < 4e-13 absolute, so the error it leaves in
// z = y·ln x stays below 2e-10 wherever e^z is a finite nonzero float
// (|z| <= 104, so |y| <= 104/|ln x|, and |ln x| >= 0.34 where |t| is
// largest): a few hundredths of a float ulp of the result, not double's
// 1e-16, so the series stops there.
AIC_AVX2 __attribute__((always_inline)) inline __m256d LnForPow(__m256d x) {
  const __m256i bits = _mm256_castpd_si256(x);
  const __m256i mantissa = _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll);
  const __m256i one = _mm256_set1_epi64x(0x3FF0000000000000ll);
  __m256d m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, mantissa), one));  // [1, 2)
  // The biased exponent as a double: put in the low bits of 2^52's mantissa.
  const __m256i two52 = _mm256_set1_epi64x(0x4330000000000000ll);
  __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(bits, 52), two52)),
                            _mm256_set1_pd(4503599627370496.0 + 1023.0));
  const __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(1.4142135623730951), _CMP_GT_OQ);
  m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
  e = _mm256_add_pd(e, _mm256_and_pd(big, _mm256_set1_pd(1.0)));
  const __m256d t = _mm256_div_pd(_mm256_sub_pd(m, _mm256_set1_pd(1.0)), _mm256_add_pd(m, _mm256_set1_pd(1.0)));
  const __m256d t2 = _mm256_mul_pd(t, t);
  // The series in t² by Estrin's scheme: three short chains, not one of six
  // dependent FMAs (the loop is bound by latency, not by the FMA pipes).
  const __m256d t4 = _mm256_mul_pd(t2, t2);
  const __m256d p01 = _mm256_fmadd_pd(_mm256_set1_pd(2.0 / 5), t2, _mm256_set1_pd(2.0 / 3));
  const __m256d p23 = _mm256_fmadd_pd(_mm256_set1_pd(2.0 / 9), t2, _mm256_set1_pd(2.0 / 7));
  const __m256d p45 = _mm256_fmadd_pd(_mm256_set1_pd(2.0 / 13), t2, _mm256_set1_pd(2.0 / 11));
  const __m256d p = _mm256_fmadd_pd(_mm256_fmadd_pd(p45, t4, p23), t4, p01);
  // ln x = e·ln 2 + 2t + t·t²·p, the small terms added last.
  const __m256d ln_m = _mm256_fmadd_pd(_mm256_mul_pd(t, t2), p, _mm256_add_pd(t, t));
  return _mm256_fmadd_pd(e, _mm256_set1_pd(0.69314718055994531), ln_m);
}

// e^z on 4 doubles to ~1e-11 relative (Taylor to r^9 on |r| <= ln2/2: the
// first term left out is below 7e-12), z clamped to [-110, 100], beyond
// which a float result is 0 or inf anyway; the conversion to float then
// rounds to subnormals, 0 or inf as the value calls for.
AIC_AVX2 __attribute__((always_inline)) inline __m256d ExpForPow(__m256d z) {
  z = _mm256_max_pd(_mm256_set1_pd(-110.0), _mm256_min_pd(_mm256_set1_pd(100.0), z));
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(z, _mm256_set1_pd(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(6.93147180369123816490e-01), z);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(1.90821492927058770002e-10), r);
  // 1 + r + r²·(1/2 + r/6 + ... + r^7/9!), the sum by Estrin's scheme.
  const __m256d r2 = _mm256_mul_pd(r, r);
  const __m256d r4 = _mm256_mul_pd(r2, r2);
  const __m256d q01 = _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 6), r, _mm256_set1_pd(0.5));
  const __m256d q23 = _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 120), r, _mm256_set1_pd(1.0 / 24));
  const __m256d q45 = _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 5040), r, _mm256_set1_pd(1.0 / 720));
  const __m256d q67 = _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 362880), r, _mm256_set1_pd(1.0 / 40320));
  const __m256d q = _mm256_fmadd_pd(_mm256_fmadd_pd(q67, r2, q45), r4, _mm256_fmadd_pd(q23, r2, q01));
  const __m256d p = _mm256_fmadd_pd(q, r2, _mm256_add_pd(r, _mm256_set1_pd(1.0)));
  return _mm256_mul_pd(p, avx2::PowerOfTwoPd(n));  // n in [-159, 145]: a normal power of two
}

// |x|^y for 4 lanes (x nonzero and finite, y finite).
AIC_AVX2 __attribute__((always_inline)) inline __m128 AbsPow4(__m128 ax, __m128 y) {
  return _mm256_cvtpd_ps(ExpForPow(_mm256_mul_pd(_mm256_cvtps_pd(y), LnForPow(_mm256_cvtps_pd(ax)))));
}

// pow on 8 lanes; lanes whose operands are zero, infinite or NaN are marked
// in *special (a movemask) for the caller to redo with std::pow.
AIC_AVX2 __attribute__((always_inline)) inline __m256 Pow8(__m256 x, __m256 y, int* special) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 inf = _mm256_set1_ps(INFINITY);
  // !(0 < |x| < inf) || !(|y| < inf): NaN compares false, so it is special too.
  const __m256 ok = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(ax, _mm256_setzero_ps(), _CMP_GT_OQ),
                                                _mm256_cmp_ps(ax, inf, _CMP_LT_OQ)),
                                  _mm256_cmp_ps(_mm256_andnot_ps(sign, y), inf, _CMP_LT_OQ));
  *special = _mm256_movemask_ps(ok) ^ 0xFF;
  // Keep the special lanes' arithmetic quiet: they are overwritten.
  const __m256 sx = _mm256_blendv_ps(_mm256_set1_ps(1.0f), ax, ok);
  const __m256 sy = _mm256_blendv_ps(_mm256_setzero_ps(), y, ok);
  __m256 r = _mm256_set_m128(AbsPow4(_mm256_extractf128_ps(sx, 1), _mm256_extractf128_ps(sy, 1)),
                             AbsPow4(_mm256_castps256_ps128(sx), _mm256_castps256_ps128(sy)));
  // A negative base: an integer exponent gives ±|x|^y (odd: negative), any
  // other NaN. Floats of magnitude 2^24 and more are even integers.
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 integer = _mm256_cmp_ps(_mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), y, _CMP_EQ_OQ);
  const __m256 half = _mm256_mul_ps(y, _mm256_set1_ps(0.5f));
  const __m256 odd = _mm256_and_ps(
      integer, _mm256_cmp_ps(_mm256_round_ps(half, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), half, _CMP_NEQ_UQ));
  r = _mm256_xor_ps(r, _mm256_and_ps(_mm256_and_ps(negative, odd), sign));
  return _mm256_blendv_ps(r, _mm256_set1_ps(NAN), _mm256_andnot_ps(integer, negative));
}

// Stores Pow8's lanes at y + at, the lanes marked special redone with
// std::pow first. Before the store, not after: y may be a (the step runs in
// place), and a lane's base must be read before the store overwrites it
// (redone after it, 0^1 read the vector's placeholder 1 back as its base and
// gave 1).
template <bool kA, bool kB>
AIC_AVX2 __attribute__((always_inline)) inline void StorePow8(const float* a, const float* b, float* y, int64_t at,
                                                              __m256 r, int special) {
  if (special == 0) return _mm256_storeu_ps(y + at, r);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, r);
  for (; special != 0; special &= special - 1) {
    const int j = __builtin_ctz(special);
    lanes[j] = std::pow(a[kA ? at + j : 0], b[kB ? at + j : 0]);
  }
  _mm256_storeu_ps(y + at, _mm256_load_ps(lanes));
}

template <bool kA, bool kB>
AIC_AVX2 void PowRun(const float* a, const float* b, float* y, int64_t n) {
  // Sixteen lanes a step: two independent chains for the out-of-order core
  // to overlap.
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = kA ? _mm256_loadu_ps(a + i) : _mm256_set1_ps(a[0]);
    const __m256 x1 = kA ? _mm256_loadu_ps(a + i + 8) : x0;
    const __m256 e0 = kB ? _mm256_loadu_ps(b + i) : _mm256_set1_ps(b[0]);
    const __m256 e1 = kB ? _mm256_loadu_ps(b + i + 8) : e0;
    int special0, special1;
    const __m256 r0 = Pow8(x0, e0, &special0);
    const __m256 r1 = Pow8(x1, e1, &special1);
    StorePow8<kA, kB>(a, b, y, i, r0, special0);
    StorePow8<kA, kB>(a, b, y, i + 8, r1, special1);
  }
  for (; i + 8 <= n; i += 8) {
    int special;
    const __m256 r = Pow8(kA ? _mm256_loadu_ps(a + i) : _mm256_set1_ps(a[0]),
                          kB ? _mm256_loadu_ps(b + i) : _mm256_set1_ps(b[0]), &special);
    StorePow8<kA, kB>(a, b, y, i, r, special);
  }
  for (; i < n; ++i) y[i] = std::pow(a[kA ? i : 0], b[kB ? i : 0]);
}

void PowRow(const void* const* in, const int64_t* s, void* out, int64_t n) {
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  float* y = static_cast<float*>(out);
  if (s[0] != 0 && s[1] != 0) return PowRun<true, true>(a, b, y, n);
  if (s[0] != 0) return PowRun<true, false>(a, b, y, n);
  if (s[1] != 0) return PowRun<false, true>(a, b, y, n);
  std::fill(y, y + n, std::pow(a[0], b[0]));  // one value: computed once
}

}  // namespace

RowFn Avx2PowKernel() { return avx2::HaveAvx2Fma() ? PowRow : nullptr; }

#else

RowFn Avx2PowKernel() { return nullptr; }

#endif

}  // namespace aic::cpu::kernels

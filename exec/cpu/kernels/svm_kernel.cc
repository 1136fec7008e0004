#include "exec/cpu/kernels/svm_kernel.h"

#include <cmath>

#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

#ifdef AIC_HAVE_AVX512_MATH

namespace {

AIC_AVX512_BEGIN

// Squared distances (RBF) or dot products of x against 8 support vectors
// starting at v, features in order.
template <bool kDistance>
AIC_AVX512 inline __m512d Accumulate(const SvmModel& m, const double* x, int64_t v, __mmask8 lanes) {
  __m512d acc = _mm512_setzero_pd();
  const double* s = m.support_by_feature.data() + v;
  for (int64_t f = 0; f < m.features; ++f, s += m.vectors) {
    const __m512d sv = _mm512_maskz_loadu_pd(lanes, s);
    const __m512d xf = _mm512_set1_pd(x[f]);
    if constexpr (kDistance) {
      const __m512d d = _mm512_sub_pd(xf, sv);
      acc = _mm512_fmadd_pd(d, d, acc);
    } else {
      acc = _mm512_fmadd_pd(xf, sv, acc);
    }
  }
  return acc;
}

AIC_AVX512 void KernelRowAvx512(const SvmModel& m, const double* x, double* k) {
  for (int64_t v = 0; v < m.vectors; v += 8) {
    const int64_t left = m.vectors - v;
    const __mmask8 lanes = left >= 8 ? __mmask8(0xFF) : __mmask8((1u << left) - 1);
    if (m.kernel == SvmKernelType::kRbf) {
      const __m512d d2 = Accumulate<true>(m, x, v, lanes);
      _mm512_mask_storeu_pd(k + v, lanes, avx512::ExpPd(_mm512_mul_pd(_mm512_set1_pd(-m.gamma), d2)));
      continue;
    }
    _mm512_mask_storeu_pd(k + v, lanes, Accumulate<false>(m, x, v, lanes));
  }
  // POLY and SIGMOID finish each value with libm, as the reference.
  if (m.kernel == SvmKernelType::kPoly) {
    for (int64_t v = 0; v < m.vectors; ++v) k[v] = std::pow(m.gamma * k[v] + m.coef0, m.degree);
  } else if (m.kernel == SvmKernelType::kSigmoid) {
    for (int64_t v = 0; v < m.vectors; ++v) k[v] = std::tanh(m.gamma * k[v] + m.coef0);
  }
}

AIC_AVX512_END

}  // namespace

SvmKernelRowFn FastSvmKernelRow() { return avx512::HaveAvx512() ? KernelRowAvx512 : SvmKernelRow; }

#else

SvmKernelRowFn FastSvmKernelRow() { return SvmKernelRow; }

#endif

}  // namespace aic::cpu::kernels

// The unary row kernels written with AVX2 and FMA intrinsics
// (vector_math_avx2.h) for CPUs without AVX-512: 8 lanes at a time, the tail
// through a small buffer. FastUnaryKernel (unary.cc) offers them where the
// AVX-512 ones (unary_avx512.cc) cannot run.
#include "exec/cpu/kernels/unary_avx2.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "exec/cpu/kernels/erf.h"
#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

#ifdef AIC_HAVE_AVX2_MATH

namespace {

using avx2::Exp;
using avx2::Sigmoid;
using avx2::Tanh;

// A row kernel applying the __m256 -> __m256 expression `expr` (of `v`):
// a lambda cannot carry the target attribute, so each row is its own function.
#define AIC_AVX2_ROW(name, expr)                                          \
  AIC_AVX2 void name(const float* x, float* y, int64_t n) {               \
    int64_t i = 0;                                                        \
    for (; i + 8 <= n; i += 8) {                                          \
      __m256 v = _mm256_loadu_ps(x + i);                                  \
      _mm256_storeu_ps(y + i, (expr));                                    \
    }                                                                     \
    if (i < n) {                                                          \
      alignas(32) float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};                \
      std::copy(x + i, x + n, buf);                                       \
      __m256 v = _mm256_load_ps(buf);                                     \
      _mm256_store_ps(buf, (expr));                                       \
      std::copy(buf, buf + (n - i), y + i);                               \
    }                                                                     \
  }

// 0.5·v·(1 + tanh(u)) = v·sigmoid(2u), u = √(2/π)·(v + 0.044715·v³): one exp
// and no cancellation for negative v (as unary_avx512.cc's).
AIC_AVX2 inline __m256 GeluTanh(__m256 v) {
  __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
  __m256 u = _mm256_mul_ps(_mm256_fmadd_ps(v3, _mm256_set1_ps(0.044715f), v), _mm256_set1_ps(0.79788456080286536f));
  return _mm256_mul_ps(v, Sigmoid(_mm256_add_ps(u, u)));
}

// erf's branch-free polynomials (erf.h) compiled for AVX2 with FMA: the
// AIC_KERNEL_CLONES "avx2" clone has no FMA and took 1.4-1.55x ONNX
// Runtime's time on a Zen 3.
AIC_AVX2 void ErfRow(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = ErfApprox(x[i]);
}

// log(1 + e^v) = max(v, 0) + log1p(e^-|v|): no overflow, exact tails.
AIC_AVX2 inline __m256 Softplus(__m256 v) {
  __m256 t = Exp(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)));
  return _mm256_add_ps(_mm256_max_ps(_mm256_setzero_ps(), v), avx2::Log1pOfUnit(t));
}

AIC_AVX2_ROW(ExpRow, Exp(v))
AIC_AVX2_ROW(SoftplusRow, Softplus(v))
AIC_AVX2_ROW(SwishRow, _mm256_mul_ps(v, Sigmoid(v)))
AIC_AVX2_ROW(SigmoidRow, Sigmoid(v))
AIC_AVX2_ROW(TanhRow, Tanh(v))
AIC_AVX2_ROW(GeluTanhRow, GeluTanh(v))

#undef AIC_AVX2_ROW

}  // namespace

UnaryRowFn Avx2UnaryKernel(const std::string& op) {
  if (!avx2::HaveAvx2Fma()) return nullptr;
  static const auto* table = new absl::flat_hash_map<std::string, UnaryRowFn>{
      {"Exp", ExpRow},           {"Sigmoid", SigmoidRow}, {"Tanh", TanhRow},
      {"GeluTanh", GeluTanhRow}, {"Swish", SwishRow},     {"Erf", ErfRow},
      {"Softplus", SoftplusRow},
  };
  auto it = table->find(op);
  return it == table->end() ? nullptr : it->second;
}

#else

UnaryRowFn Avx2UnaryKernel(const std::string&) { return nullptr; }

#endif  // AIC_HAVE_AVX2_MATH

}  // namespace aic::cpu::kernels

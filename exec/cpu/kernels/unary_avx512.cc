// The unary row kernels written with AVX-512F intrinsics
// (vector_math_avx512.h): exp, the logistic, tanh and the activations built on
// them. Each row is 16 lanes at a time with one masked tail; UnaryKernel
// (unary.cc) offers them where the CPU has AVX-512F.
#include "exec/cpu/kernels/unary_avx512.h"

#include "absl/container/flat_hash_map.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN

namespace {

using avx512::Exp;
using avx512::Log1pNonNegative;
using avx512::Sigmoid;
using avx512::Tanh;

// A row kernel applying the __m512 -> __m512 expression `expr` (of `v`):
// a lambda cannot carry the target attribute, so each row is its own function.
#define AIC_AVX512_ROW(name, expr)                                                        \
  AIC_AVX512 void name(const float* x, float* y, int64_t n) {                             \
    int64_t i = 0;                                                                        \
    for (; i + 16 <= n; i += 16) {                                                        \
      __m512 v = _mm512_loadu_ps(x + i);                                                  \
      _mm512_storeu_ps(y + i, (expr));                                                    \
    }                                                                                     \
    if (i < n) {                                                                          \
      auto m = static_cast<__mmask16>((1u << (n - i)) - 1);                               \
      __m512 v = _mm512_maskz_loadu_ps(m, x + i);                                         \
      _mm512_mask_storeu_ps(y + i, m, (expr));                                            \
    }                                                                                     \
  }

// log(1 + e^v) = max(v, 0) + log1p(e^-|v|): no overflow, exact tails.
AIC_AVX512 inline __m512 Softplus(__m512 v) {
  __m512 t = Exp(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(v)));
  return _mm512_add_ps(_mm512_max_ps(_mm512_setzero_ps(), v), Log1pNonNegative(t));
}

// 0.5·v·(1 + tanh(u)) = v·sigmoid(2u), u = √(2/π)·(v + 0.044715·v³): one exp
// and no cancellation for negative v.
AIC_AVX512 inline __m512 GeluTanh(__m512 v) {
  __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
  __m512 u = _mm512_mul_ps(_mm512_fmadd_ps(v3, _mm512_set1_ps(0.044715f), v), _mm512_set1_ps(0.79788456080286536f));
  return _mm512_mul_ps(v, Sigmoid(_mm512_add_ps(u, u)));
}

// v·tanh(softplus v) = v·n/(n + 2), n = e^v·(e^v + 2) (unary.cc's MishOf):
// beyond v = 20 it is v to f32 precision (and n/(n + 2) would be inf/inf).
AIC_AVX512 inline __m512 Mish(__m512 v) {
  __m512 t = Exp(v);
  __m512 n = _mm512_mul_ps(t, _mm512_add_ps(t, _mm512_set1_ps(2.0f)));
  __m512 y = _mm512_mul_ps(v, _mm512_div_ps(n, _mm512_add_ps(n, _mm512_set1_ps(2.0f))));
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(v, _mm512_set1_ps(20.0f), _CMP_GT_OQ), v);
}

AIC_AVX512_ROW(ExpRow, Exp(v))
AIC_AVX512_ROW(SwishRow, _mm512_mul_ps(v, Sigmoid(v)))
AIC_AVX512_ROW(SigmoidRow, Sigmoid(v))
AIC_AVX512_ROW(TanhRow, Tanh(v))
AIC_AVX512_ROW(SoftplusRow, Softplus(v))
AIC_AVX512_ROW(GeluTanhRow, GeluTanh(v))
AIC_AVX512_ROW(MishRow, Mish(v))

#undef AIC_AVX512_ROW

}  // namespace

AIC_AVX512_END

UnaryRowFn Avx512UnaryKernel(const std::string& op) {
  if (!avx512::HaveAvx512()) return nullptr;
  static const auto* table = new absl::flat_hash_map<std::string, UnaryRowFn>{
      {"Exp", ExpRow},           {"Sigmoid", SigmoidRow}, {"Tanh", TanhRow},
      {"Softplus", SoftplusRow}, {"GeluTanh", GeluTanhRow}, {"Mish", MishRow},
      {"Swish", SwishRow},
  };
  auto it = table->find(op);
  return it == table->end() ? nullptr : it->second;
}

#else

UnaryRowFn Avx512UnaryKernel(const std::string&) { return nullptr; }

#endif  // AIC_HAVE_AVX512_MATH

}  // namespace aic::cpu::kernels

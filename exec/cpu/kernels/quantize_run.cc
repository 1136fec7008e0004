#include "exec/cpu/kernels/quantize_run.h"

#include <cmath>

#include "exec/cpu/kernels/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AIC_QUANTIZE_AVX512 1
#endif

namespace aic::cpu::kernels {

namespace {

template <typename Q>
inline Q QuantizeOne(float x, float scale, float zero, float lo, float hi) {
  float v = std::nearbyint(x / scale) + zero;
  v = v >= lo ? v : lo;  // NaN saturates to lo (a defined cast; the spec leaves it open)
  v = v <= hi ? v : hi;
  return static_cast<Q>(v);
}

template <typename Q>
AIC_KERNEL_CLONES void PortableRun(const float* x, Q* y, int64_t n, float scale, float zero, float lo, float hi) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = QuantizeOne<Q>(x[i], scale, zero, lo, hi);
}

#ifdef AIC_QUANTIZE_AVX512
// GCC 12's AVX-512 intrinsics start from _mm*_undefined_* values, which
// -Wmaybe-uninitialized reports inside the headers (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <bool kSigned>
__attribute__((target("avx512f"))) void Avx512Run(const float* x, void* out, int64_t n, float scale, float zero,
                                                  float lo, float hi) {
  auto* y = static_cast<uint8_t*>(out);
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 vinv = _mm512_set1_ps(1.0f / scale);
  const __m512 vzero = _mm512_set1_ps(zero);
  const __m512 vlo = _mm512_set1_ps(lo);
  const __m512 vhi = _mm512_set1_ps(hi);
  const __m512 half = _mm512_set1_ps(0.5f);
  const __m512 margin = _mm512_set1_ps(0x1p-20f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 xv = _mm512_loadu_ps(x + i);
    __m512 t = _mm512_mul_ps(xv, vinv);
    __m512 q = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 from_tie = _mm512_abs_ps(_mm512_sub_ps(_mm512_abs_ps(_mm512_sub_ps(t, q)), half));
    __m512 limit = _mm512_mul_ps(_mm512_abs_ps(t), margin);
    // Not (from_tie > limit): near a tie, or NaN (unordered).
    __mmask16 near = _mm512_cmp_ps_mask(from_tie, limit, _CMP_NGT_UQ);
    if (near != 0) {
      q = _mm512_mask_roundscale_ps(q, near, _mm512_div_ps(xv, vscale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    // max(NaN, lo) is lo (vmaxps returns its second operand when one is NaN).
    __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, vzero), vlo), vhi);
    __m512i iv = _mm512_cvtps_epi32(v);
    __m128i b = kSigned ? _mm512_cvtsepi32_epi8(iv) : _mm512_cvtusepi32_epi8(iv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), b);
  }
  for (; i < n; ++i) {
    if (kSigned) {
      reinterpret_cast<int8_t*>(y)[i] = QuantizeOne<int8_t>(x[i], scale, zero, lo, hi);
    } else {
      y[i] = QuantizeOne<uint8_t>(x[i], scale, zero, lo, hi);
    }
  }
}

#pragma GCC diagnostic pop

// The fast pass needs a normal scale with a normal reciprocal (else x * (1/s)
// is no approximation of x / s).
bool UseAvx512(float scale) {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has && std::isnormal(scale) && std::isnormal(1.0f / scale);
}
#endif

template <typename Q>
AIC_KERNEL_CLONES void DequantizeLoop(const Q* x, float* y, int64_t n, float scale, float zero) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero) * scale;
}

}  // namespace

void DequantizeRunU8(const uint8_t* x, float* y, int64_t n, float scale, float zero) {
  DequantizeLoop(x, y, n, scale, zero);
}

void DequantizeRunS8(const int8_t* x, float* y, int64_t n, float scale, float zero) {
  DequantizeLoop(x, y, n, scale, zero);
}

void QuantizeRunU8(const float* x, uint8_t* y, int64_t n, float scale, float zero) {
#ifdef AIC_QUANTIZE_AVX512
  if (UseAvx512(scale)) return Avx512Run<false>(x, y, n, scale, zero, 0.0f, 255.0f);
#endif
  PortableRun(x, y, n, scale, zero, 0.0f, 255.0f);
}

void QuantizeRunS8(const float* x, int8_t* y, int64_t n, float scale, float zero) {
#ifdef AIC_QUANTIZE_AVX512
  if (UseAvx512(scale)) return Avx512Run<true>(x, y, n, scale, zero, -128.0f, 127.0f);
#endif
  PortableRun(x, y, n, scale, zero, -128.0f, 127.0f);
}

}  // namespace aic::cpu::kernels

// Every head vector is contiguous in both layouts, so the kernel walks them
// in memory order and finds each one's token from its index. Each product
// and sum is rounded to f32 as the reference kernel rounds it.
#include "exec/cpu/kernels/rotary.h"

#include <cstring>

#include "exec/cpu/kernels/half_rows.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

namespace {

// One head vector, pairs (k, k + half).
AIC_KERNEL_CLONES void RotateHalves(const float* x, const float* __restrict c, const float* __restrict s,
                                    float* y, int64_t half) {
  const float* x2 = x + half;
  float* y2 = y + half;
#pragma omp simd
  for (int64_t k = 0; k < half; ++k) {
    float a = x[k], b = x2[k];  // both read before either is written (y may be x)
    float ca = c[k] * a, sb = s[k] * b, sa = s[k] * a, cb = c[k] * b;
    y[k] = ca - sb;
    y2[k] = sa + cb;
  }
}

// One head vector, pairs (2k, 2k + 1).
AIC_KERNEL_CLONES void RotateInterleaved(const float* x, const float* __restrict c,
                                         const float* __restrict s, float* y, int64_t half) {
#pragma omp simd
  for (int64_t k = 0; k < half; ++k) {
    float a = x[2 * k], b = x[2 * k + 1];
    float ca = c[k] * a, sb = s[k] * b, sa = s[k] * a, cb = c[k] * b;
    y[2 * k] = ca - sb;
    y[2 * k + 1] = sa + cb;
  }
}

}  // namespace

namespace {

// Head vector v's row of the caches: its token (b, s) as b·seq + s, or that
// token's position id.
inline int64_t CacheRow(const RotaryShape& shape, const int64_t* positions, int64_t v) {
  int64_t token = shape.heads_first ? (v / (shape.heads * shape.seq)) * shape.seq + v % shape.seq : v / shape.heads;
  return positions != nullptr ? positions[token] : token;
}

// Rotates one head vector's first rot features (y may be x).
inline void RotateVector(const float* xv, const float* cos, const float* sin, int64_t row, float* yv,
                         const RotaryShape& shape) {
  const int64_t half = shape.rot / 2;
  if (half == 0) return;
  const float* c = cos + row * half;
  const float* s = sin + row * half;
  if (shape.interleaved) {
    RotateInterleaved(xv, c, s, yv, half);
  } else {
    RotateHalves(xv, c, s, yv, half);
  }
}

}  // namespace

void RotaryEmbeddingF32(const float* x, const float* cos, const float* sin, const int64_t* positions, float* y,
                        const RotaryShape& shape) {
  const int64_t head = shape.head, rest = head - shape.rot;
  const int64_t vectors = shape.batch * shape.seq * shape.heads;
  if (head == 0 || vectors == 0) return;
  ParallelFor(vectors, head * 2, [&](int64_t v) {
    const float* xv = x + v * head;
    float* yv = y + v * head;
    RotateVector(xv, cos, sin, CacheRow(shape, positions, v), yv, shape);
    if (rest > 0 && yv != xv) std::memcpy(yv + shape.rot, xv + shape.rot, static_cast<size_t>(rest) * sizeof(float));
  });
}

#ifdef AIC_HAVE_AVX2_MATH
namespace {

// One half head vector, pairs (k, k + half), half a multiple of 8: read as
// halves, rotated in f32, rounded back (vcvtps2ph, nearest even, as
// FloatToHalfRow) in registers, with no f32 row in between. Products are
// kept apart from the sums (no FMA contraction), as RotateHalves rounds.
__attribute__((target("avx2,fma,f16c"))) void RotateHalvesF16(const uint16_t* x, const float* c, const float* s,
                                                               uint16_t* y, int64_t half) {
  for (int64_t k = 0; k < half; k += 8) {
    const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k)));
    const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + half + k)));
    const __m256 cv = _mm256_loadu_ps(c + k), sv = _mm256_loadu_ps(s + k);
    __m256 ca = _mm256_mul_ps(cv, a), sb = _mm256_mul_ps(sv, b), sa = _mm256_mul_ps(sv, a), cb = _mm256_mul_ps(cv, b);
    asm("" : "+x"(ca), "+x"(sb), "+x"(sa), "+x"(cb));
    const __m128i y1 = _mm256_cvtps_ph(_mm256_sub_ps(ca, sb), _MM_FROUND_TO_NEAREST_INT);
    const __m128i y2 = _mm256_cvtps_ph(_mm256_add_ps(sa, cb), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + k), y1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + half + k), y2);
  }
}

}  // namespace
#endif

void RotaryEmbeddingHalf(const uint16_t* x, const float* cos, const float* sin, const int64_t* positions, uint16_t* y,
                         const RotaryShape& shape) {
  const int64_t head = shape.head;
  const int64_t vectors = shape.batch * shape.seq * shape.heads;
  if (head == 0 || vectors == 0) return;
#ifdef AIC_HAVE_AVX2_MATH
  // The split-halves layout (Llama's) with whole vectors of pairs: one pass
  // over the halves. The widen-rotate-round passes over a buffer took 1.5x
  // ONNX Runtime's time on [1, 32, 512, 128] (Zen 3).
  static const bool f16c = avx2::HaveAvx2Fma() && __builtin_cpu_supports("f16c");
  const int64_t half = shape.rot / 2;
  if (f16c && !shape.interleaved && half > 0 && half % 8 == 0) {
    const int64_t rest = head - shape.rot;
    ParallelFor(vectors, head * 3, [&](int64_t v) {
      const int64_t row = CacheRow(shape, positions, v);
      RotateHalvesF16(x + v * head, cos + row * half, sin + row * half, y + v * head, half);
      if (rest > 0 && y != x) {
        std::memcpy(y + v * head + shape.rot, x + v * head + shape.rot, static_cast<size_t>(rest) * sizeof(uint16_t));
      }
    });
    return;
  }
#endif
  ForEachHalfRow(x, y, vectors, head, head * 3, [&](int64_t v, float* buf) {
    RotateVector(buf, cos, sin, CacheRow(shape, positions, v), buf, shape);
  });
}

}  // namespace aic::cpu::kernels

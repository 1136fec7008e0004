// Every head vector is contiguous in both layouts, so the kernel walks them
// in memory order and finds each one's token from its index. Each product
// and sum is rounded to f32 as the reference kernel rounds it.
#include "exec/cpu/kernels/rotary.h"

#include <cstring>

#include "exec/cpu/kernels/half_rows.h"
#include "exec/cpu/kernels/parallel.h"

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

void RotaryEmbeddingHalf(const uint16_t* x, const float* cos, const float* sin, const int64_t* positions, uint16_t* y,
                         const RotaryShape& shape) {
  const int64_t head = shape.head;
  const int64_t vectors = shape.batch * shape.seq * shape.heads;
  if (head == 0 || vectors == 0) return;
  ForEachHalfRow(x, y, vectors, head, head * 3, [&](int64_t v, float* buf) {
    RotateVector(buf, cos, sin, CacheRow(shape, positions, v), buf, shape);
  });
}

}  // namespace aic::cpu::kernels

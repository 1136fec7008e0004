#include "exec/cpu/kernels/quantized_binary.h"

#include <algorithm>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/quantize_run.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kChunk = 256;

AIC_KERNEL_CLONES void Combine(float* a, const float* b, int64_t n, bool add, bool relu) {
  if (add) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] + b[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] * b[i];
  }
  if (relu) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] < 0.0f ? 0.0f : a[i];
  }
}

void DequantizeAny(const void* q, bool is_signed, int64_t offset, float* out, int64_t n, float scale, float zero) {
  if (is_signed) {
    DequantizeRunS8(static_cast<const int8_t*>(q) + offset, out, n, scale, zero);
  } else {
    DequantizeRunU8(static_cast<const uint8_t*>(q) + offset, out, n, scale, zero);
  }
}

// Elements [begin, begin + len) of y, len <= kChunk; `bd` is b dequantized
// when it is broadcast. With b_inner == 1 the piece lies within one period of
// b (the caller cuts it so), and reads bd in place.
void RunChunk(const QuantizedBinary& p, const void* a, const void* b, const float* bd, void* y, int64_t begin,
              int64_t len) {
  alignas(64) float fa[kChunk];
  alignas(64) float fb[kChunk];
  const float* bv = fb;
  DequantizeAny(a, p.a_signed, begin, fa, len, p.a_scale, p.a_zero);
  if (!p.b_broadcast) {
    DequantizeAny(b, p.b_signed, begin, fb, len, p.b_scale, p.b_zero);
  } else if (p.b_inner == 1) {
    bv = bd + begin % p.b_count;
  } else {
    for (int64_t i = 0; i < len;) {  // runs of b_inner equal values
      int64_t pos = begin + i;
      int64_t run = std::min(len - i, p.b_inner - pos % p.b_inner);
      std::fill(fb + i, fb + i + run, bd[(pos / p.b_inner) % p.b_count]);
      i += run;
    }
  }
  Combine(fa, bv, len, p.add, p.relu);
  if (p.y_signed) {
    QuantizeRunS8(fa, static_cast<int8_t*>(y) + begin, len, p.y_scale, p.y_zero);
  } else {
    QuantizeRunU8(fa, static_cast<uint8_t*>(y) + begin, len, p.y_scale, p.y_zero);
  }
}

}  // namespace

void RunQuantizedBinary(const QuantizedBinary& p, const void* a, const void* b, void* y, int64_t n) {
  std::vector<float> bd;
  if (p.b_broadcast) {
    bd.resize(static_cast<size_t>(p.b_count));
    DequantizeAny(b, p.b_signed, 0, bd.data(), p.b_count, p.b_scale, p.b_zero);
  }
  ParallelPieces(n, [&](int64_t begin, int64_t len) {
    for (int64_t c = 0; c < len;) {
      int64_t piece = std::min(kChunk, len - c);
      if (p.b_broadcast && p.b_inner == 1) piece = std::min(piece, p.b_count - (begin + c) % p.b_count);
      RunChunk(p, a, b, bd.data(), y, begin + c, piece);
      c += piece;
    }
  });
}

}  // namespace aic::cpu::kernels

#include "exec/cpu/kernels/swiglu.h"

#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

AIC_KERNEL_CLONES void SwiGluRow(const float* a, const float* b, float* y, int64_t n, float alpha) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] / (1.0f + ExpApprox(-alpha * a[i])) * b[i];
}

}  // namespace

void SwiGluF32(const float* a, const float* b, float* y, int64_t n, float alpha) {
  constexpr int64_t kPiece = 8192;
  int64_t pieces = (n + kPiece - 1) / kPiece;
  ParallelFor(pieces, kPiece, [&](int64_t p) {
    int64_t begin = p * kPiece;
    int64_t len = n - begin < kPiece ? n - begin : kPiece;
    SwiGluRow(a + begin, b + begin, y + begin, len, alpha);
  });
}

}  // namespace aic::cpu::kernels

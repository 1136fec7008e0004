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
  ParallelPieces(n, [&](int64_t begin, int64_t len) { SwiGluRow(a + begin, b + begin, y + begin, len, alpha); });
}

}  // namespace aic::cpu::kernels

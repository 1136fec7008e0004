#include "exec/cpu/kernels/moments.h"

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

AIC_KERNEL_CLONES RunMoments MomentsOf(const float* x, int64_t n) {
  RunMoments m;
  if (n <= 0) return m;
  double k = x[0];
  double s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - k;
    s1 += d;
    s2 += d * d;
  }
  double mean_shifted = s1 / static_cast<double>(n);
  double var = s2 / static_cast<double>(n) - mean_shifted * mean_shifted;
  m.mean = k + mean_shifted;
  m.variance = var < 0 ? 0 : var;
  return m;
}

}  // namespace aic::cpu::kernels

// Row by row along the axis with `inner` running sums side by side (a
// vectorized add per row); for the last axis (inner = 1) one sequential sum
// per lane. Sums accumulate in the element type, as the reference does.
#include "exec/cpu/kernels/cumsum.h"

#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

template <typename T>
void CumSumTyped(const T* x, T* y, const AxisLanes& l, bool exclusive, bool reverse) {
  ParallelFor(l.outer, l.dim * l.inner, [&](int64_t o) {
    thread_local std::vector<T> acc;
    acc.assign(static_cast<size_t>(l.inner), T(0));
    const T* xs = x + o * l.dim * l.inner;
    T* ys = y + o * l.dim * l.inner;
    for (int64_t step = 0; step < l.dim; ++step) {
      int64_t j = reverse ? l.dim - 1 - step : step;
      const T* row = xs + j * l.inner;
      T* out = ys + j * l.inner;
      T* a = acc.data();
      if (exclusive) {
#pragma omp simd
        for (int64_t i = 0; i < l.inner; ++i) {
          out[i] = a[i];
          a[i] += row[i];
        }
      } else {
#pragma omp simd
        for (int64_t i = 0; i < l.inner; ++i) {
          a[i] += row[i];
          out[i] = a[i];
        }
      }
    }
  });
}

}  // namespace

bool CumSum(DType dtype, const void* x, void* y, const AxisLanes& l, bool exclusive, bool reverse) {
  switch (dtype) {
    case DType::kFloat:
      CumSumTyped(static_cast<const float*>(x), static_cast<float*>(y), l, exclusive, reverse);
      return true;
    case DType::kInt32:
      CumSumTyped(static_cast<const int32_t*>(x), static_cast<int32_t*>(y), l, exclusive, reverse);
      return true;
    case DType::kInt64:
      CumSumTyped(static_cast<const int64_t*>(x), static_cast<int64_t*>(y), l, exclusive, reverse);
      return true;
    default:
      return false;
  }
}

}  // namespace aic::cpu::kernels

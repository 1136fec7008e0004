// Row by row along the axis with `inner` running sums side by side (a
// vectorized add per row, the sums so far read back from the previous output
// row); for the last axis (inner = 1) eight rows' sums
// side by side, each still one sequential sum. Sums accumulate in the
// element type in the reference's order.
#include "exec/cpu/kernels/cumsum.h"

#include <algorithm>
#include <cstdint>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// One row's step along the axis: out = prev + row, where prev is the previous
// output row (the running sums so far, inclusive) and row the input row that
// follows them, or out = 0 + row for the first row (0 + x, not a copy: as the
// reference's running sum, -0 becomes +0). Reading the running sums back from
// the output instead of keeping a separate accumulator row saves a store per
// element (1.23x ONNX Runtime's time on [8, 512, 768] along axis 1 with one).
// Cloned for AVX2/AVX-512: compiled for baseline x86-64 only, the same case
// took 1.43x.
template <typename T>
AIC_KERNEL_CLONES void StepRow(const T* prev, const T* row, T* out, int64_t n) {
  if (prev == nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = T(0) + row[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = prev[i] + row[i];
  }
}

// The last axis (inner = 1): kRows rows, each one sequential sum as the
// reference adds, side by side so that their adds overlap instead of each
// waiting on the previous one (and no call per element: stepping rows of one
// element took 5.6 ns an element, 1.5x ONNX Runtime's time on [1, 128, 768]).
template <int64_t kRows, typename T>
AIC_KERNEL_CLONES void LastAxisRows(const T* x, T* y, int64_t dim, bool exclusive, bool reverse) {
  T acc[kRows] = {};
  for (int64_t step = 0; step < dim; ++step) {
    const int64_t j = reverse ? dim - 1 - step : step;
    for (int64_t k = 0; k < kRows; ++k) {
      const int64_t at = k * dim + j;
      const T v = x[at];
      if (exclusive) {
        y[at] = acc[k];
        acc[k] += v;
      } else {
        acc[k] += v;
        y[at] = acc[k];
      }
    }
  }
}

template <typename T>
void CumSumTyped(const T* x, T* y, const AxisLanes& l, bool exclusive, bool reverse) {
  if (l.inner == 1) {
    constexpr int64_t kGroup = 8;  // rows side by side; the last few one at a time
    ParallelFor((l.outer + kGroup - 1) / kGroup, kGroup * l.dim, [&](int64_t g) {
      const int64_t first = g * kGroup, rows = std::min(kGroup, l.outer - first);
      if (rows == kGroup) return LastAxisRows<kGroup>(x + first * l.dim, y + first * l.dim, l.dim, exclusive, reverse);
      for (int64_t r = first; r < first + rows; ++r) {
        LastAxisRows<1>(x + r * l.dim, y + r * l.dim, l.dim, exclusive, reverse);
      }
    });
    return;
  }
  ParallelFor(l.outer, l.dim * l.inner, [&](int64_t o) {
    const T* xs = x + o * l.dim * l.inner;
    T* ys = y + o * l.dim * l.inner;
    const int64_t back = reverse ? l.inner : -l.inner;  // from a row to the one before it in the sum's order
    for (int64_t step = 0; step < l.dim; ++step) {
      T* out = ys + (reverse ? l.dim - 1 - step : step) * l.inner;
      if (exclusive) {
        // y[j] = y[j-1] + x[j-1], the first row zeros.
        if (step == 0) {
          std::fill(out, out + l.inner, T(0));
        } else {
          StepRow<T>(out + back, xs + (out + back - ys), out, l.inner);
        }
      } else {
        StepRow<T>(step == 0 ? nullptr : out + back, xs + (out - ys), out, l.inner);
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

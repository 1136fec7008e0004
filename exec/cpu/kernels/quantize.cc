// Runs of `inner` elements share one channel's scale and zero point; each
// run is a vectorized loop, runs are spread over threads.
#include "exec/cpu/kernels/quantize.h"

#include <cmath>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/quantize_run.h"

namespace aic::cpu::kernels {

namespace {

template <typename Q>
AIC_KERNEL_CLONES void DequantizeRun(const Q* x, float* y, int64_t n, float scale, float zero) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero) * scale;
}

// f(run index, channel) over outer x channels runs of `inner` elements.
template <typename F>
void ForEachRun(const QuantLayout& l, F&& f) {
  ParallelFor(l.outer * l.channels, l.inner, [&](int64_t r) { f(r, r % l.channels); });
}

}  // namespace

void QuantizeF32(const float* x, void* y, bool is_signed, const QuantLayout& l) {
  ForEachRun(l, [&](int64_t r, int64_t c) {
    int64_t at = r * l.inner;
    if (is_signed) {
      QuantizeRunS8(x + at, static_cast<int8_t*>(y) + at, l.inner, l.scale[c], l.zero_point[c]);
    } else {
      QuantizeRunU8(x + at, static_cast<uint8_t*>(y) + at, l.inner, l.scale[c], l.zero_point[c]);
    }
  });
}

void DequantizeToF32(const void* x, bool is_signed, float* y, const QuantLayout& l) {
  ForEachRun(l, [&](int64_t r, int64_t c) {
    int64_t at = r * l.inner;
    if (is_signed) {
      DequantizeRun(static_cast<const int8_t*>(x) + at, y + at, l.inner, l.scale[c], l.zero_point[c]);
    } else {
      DequantizeRun(static_cast<const uint8_t*>(x) + at, y + at, l.inner, l.scale[c], l.zero_point[c]);
    }
  });
}

}  // namespace aic::cpu::kernels

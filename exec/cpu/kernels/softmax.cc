// Along a non-last axis the `inner` lanes lie side by side, so the kernel
// walks the axis row by row with every pass vectorized across the lanes:
// running max, then e^(x - max) summed (written to y), then the scaling.
// The last axis (inner = 1) is three passes over each contiguous lane.
#include "exec/cpu/kernels/softmax.h"

#include <cmath>
#include <vector>

#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/log.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

AIC_KERNEL_CLONES void MaxInto(const float* row, float* best, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) best[i] = row[i] > best[i] ? row[i] : best[i];
}

AIC_KERNEL_CLONES void ExpSumInto(const float* row, const float* best, float* out, float* sum, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float e = ExpApprox(row[i] - best[i]);
    out[i] = e;
    sum[i] += e;
  }
}

AIC_KERNEL_CLONES void ScaleBy(float* row, const float* factor, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) row[i] *= factor[i];
}

AIC_KERNEL_CLONES void ShiftBy(const float* row, const float* shift, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = row[i] - shift[i];
}

// One block of `width` lanes (columns) over the axis (rows `stride` apart).
void SoftmaxBlock(const float* x, float* y, int64_t dim, int64_t stride, int64_t width, bool log,
                  std::vector<float>& best, std::vector<float>& sum) {
  best.assign(x, x + width);
  for (int64_t j = 1; j < dim; ++j) MaxInto(x + j * stride, best.data(), width);
  sum.assign(static_cast<size_t>(width), 0.0f);
  if (log) {
    // y = x - (max + log(sum e^(x - max))); e^ values only summed.
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(width));
    for (int64_t j = 0; j < dim; ++j) ExpSumInto(x + j * stride, best.data(), scratch.data(), sum.data(), width);
    for (int64_t i = 0; i < width; ++i) best[i] += LogApprox(sum[i]);
    for (int64_t j = 0; j < dim; ++j) ShiftBy(x + j * stride, best.data(), y + j * stride, width);
    return;
  }
  for (int64_t j = 0; j < dim; ++j) ExpSumInto(x + j * stride, best.data(), y + j * stride, sum.data(), width);
  for (int64_t i = 0; i < width; ++i) sum[i] = 1.0f / sum[i];
  for (int64_t j = 0; j < dim; ++j) ScaleBy(y + j * stride, sum.data(), width);
}

// One contiguous lane (the last axis).
AIC_KERNEL_CLONES void SoftmaxLane(const float* x, float* y, int64_t n, bool log) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  float s = 0;
  if (log) {
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < n; ++j) s += ExpApprox(x[j] - m);
    float shift = m + LogApprox(s);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] - shift;
    return;
  }
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) {
    float e = ExpApprox(x[j] - m);
    y[j] = e;
    s += e;
  }
  float inv = 1.0f / s;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}

}  // namespace

void SoftmaxF32(const float* x, float* y, const AxisLanes& l, bool log) {
  if (l.dim == 0 || l.outer * l.inner == 0) return;
  if (l.inner == 1) {
    ParallelFor(l.outer, l.dim * 8, [&](int64_t o) { SoftmaxLane(x + o * l.dim, y + o * l.dim, l.dim, log); });
    return;
  }
  // Blocks of up to 1024 lanes keep the running max and sum in cache.
  constexpr int64_t kBlock = 1024;
  int64_t blocks = (l.inner + kBlock - 1) / kBlock;
  ParallelFor(l.outer * blocks, l.dim * kBlock * 8, [&](int64_t t) {
    thread_local std::vector<float> best, sum;
    int64_t o = t / blocks, b = t % blocks;
    int64_t begin = b * kBlock;
    int64_t width = l.inner - begin < kBlock ? l.inner - begin : kBlock;
    int64_t offset = o * l.dim * l.inner + begin;
    SoftmaxBlock(x + offset, y + offset, l.dim, l.inner, width, log, best, sum);
  });
}

}  // namespace aic::cpu::kernels

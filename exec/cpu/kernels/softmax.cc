// Along a non-last axis the `inner` lanes lie side by side, so the kernel
// walks the axis row by row with every pass vectorized across the lanes:
// running max, then e^(x - max) summed (written to y), then the scaling.
// The last axis (inner = 1) is three passes over each contiguous lane
// (AVX-512 intrinsics where the CPU has them).
#include "exec/cpu/kernels/softmax.h"

#include <cmath>
#include <vector>

#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/log.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

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

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
// The last axis with AVX-512F, `lanes` (at most 16) lanes at a time: the
// max and the sum of e^(x - max) per lane, then the 16 logs (or reciprocals)
// as one vector, then the output pass per lane. One lane at a time, the
// scalar log and the reductions made a dependency chain per lane that cost
// LogSoftmax on [8,12,128,128] 1.3x ONNX Runtime's time. e^ by avx512::Exp;
// the max skips NaN as SoftmaxLane's does, and a NaN still turns its whole
// lane NaN through the sum.
AIC_AVX512 void SoftmaxLanesAvx512(const float* x, float* y, int64_t n, int64_t lanes, bool log) {
  const int64_t full = n / 16 * 16;
  const auto tail = static_cast<__mmask16>((1u << (n - full)) - 1);
  alignas(64) float maxes[16] = {}, sums[16];
  for (int64_t l = 0; l < 16; ++l) sums[l] = 1.0f;
  for (int64_t l = 0; l < lanes; ++l) {
    const float* xl = x + l * n;
    float* yl = y + l * n;
    __m512 mv = _mm512_set1_ps(-__builtin_inff());
    for (int64_t i = 0; i < full; i += 16) mv = _mm512_max_ps(_mm512_loadu_ps(xl + i), mv);
    if (tail != 0) mv = _mm512_mask_max_ps(mv, tail, _mm512_maskz_loadu_ps(tail, xl + full), mv);
    maxes[l] = _mm512_reduce_max_ps(mv);
    const __m512 mb = _mm512_set1_ps(maxes[l]);
    __m512 sv = _mm512_setzero_ps();
    for (int64_t i = 0; i < full; i += 16) {
      __m512 e = avx512::Exp(_mm512_sub_ps(_mm512_loadu_ps(xl + i), mb));
      if (!log) _mm512_storeu_ps(yl + i, e);
      sv = _mm512_add_ps(sv, e);
    }
    if (tail != 0) {
      __m512 e = avx512::Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xl + full), mb));
      if (!log) _mm512_mask_storeu_ps(yl + full, tail, e);
      sv = _mm512_mask_add_ps(sv, tail, sv, e);
    }
    sums[l] = _mm512_reduce_add_ps(sv);
  }
  alignas(64) float factor[16];
  const __m512 s = _mm512_load_ps(sums);
  _mm512_store_ps(factor, log ? _mm512_add_ps(_mm512_load_ps(maxes), avx512::Log(s))
                              : _mm512_div_ps(_mm512_set1_ps(1.0f), s));
  for (int64_t l = 0; l < lanes; ++l) {
    const __m512 f = _mm512_set1_ps(factor[l]);
    const float* xl = x + l * n;
    float* yl = y + l * n;
    if (log) {
      for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(yl + i, _mm512_sub_ps(_mm512_loadu_ps(xl + i), f));
      if (tail != 0) _mm512_mask_storeu_ps(yl + full, tail, _mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xl + full), f));
    } else {
      for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(yl + i, _mm512_mul_ps(_mm512_loadu_ps(yl + i), f));
      if (tail != 0) _mm512_mask_storeu_ps(yl + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, yl + full), f));
    }
  }
}
AIC_AVX512_END
#endif  // AIC_HAVE_AVX512_MATH

#ifdef AIC_HAVE_AVX2_MATH
// SoftmaxLanesAvx512 for CPUs with AVX2 but not AVX-512: the same passes
// eight elements at a time (a row's tail through masked loads), the logs of
// the lanes' sums one by one (a row holds hundreds of elements: they are no
// chain worth a vector). oneDNN 2.6's jit:avx2 softmax took 1.2-1.5x ONNX
// Runtime's time on a Zen 3 (last-axis Softmax and LogSoftmax, run_ops.py).
AIC_AVX2 void SoftmaxLanesAvx2(const float* x, float* y, int64_t n, int64_t lanes, bool log) {
  const int64_t full = n / 8 * 8;
  const int rest = static_cast<int>(n - full);
  // Lane j of the tail is in the row when j < rest.
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(rest), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 tail_ps = _mm256_castsi256_ps(tail);
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  for (int64_t l = 0; l < lanes; ++l) {
    const float* xl = x + l * n;
    float* yl = y + l * n;
    __m256 mv = minus_inf;
    // vmaxps(x, m) keeps m where x is NaN: the max skips NaN, as SoftmaxLane's does.
    for (int64_t i = 0; i < full; i += 8) mv = _mm256_max_ps(_mm256_loadu_ps(xl + i), mv);
    if (rest != 0) mv = _mm256_max_ps(_mm256_blendv_ps(minus_inf, _mm256_maskload_ps(xl + full, tail), tail_ps), mv);
    const float max = avx2::HorizontalMax(mv);
    const __m256 mb = _mm256_set1_ps(max);
    __m256 sv = _mm256_setzero_ps();
    for (int64_t i = 0; i < full; i += 8) {
      __m256 e = avx2::ExpOfNonPositive(_mm256_sub_ps(_mm256_loadu_ps(xl + i), mb));
      if (!log) _mm256_storeu_ps(yl + i, e);
      sv = _mm256_add_ps(sv, e);
    }
    if (rest != 0) {
      __m256 e = _mm256_and_ps(avx2::ExpOfNonPositive(_mm256_sub_ps(_mm256_maskload_ps(xl + full, tail), mb)), tail_ps);
      if (!log) _mm256_maskstore_ps(yl + full, tail, e);
      sv = _mm256_add_ps(sv, e);
    }
    const float sum = avx2::HorizontalSum(sv);
    const __m256 f = _mm256_set1_ps(log ? max + std::log(sum) : 1.0f / sum);
    if (log) {
      for (int64_t i = 0; i < full; i += 8) _mm256_storeu_ps(yl + i, _mm256_sub_ps(_mm256_loadu_ps(xl + i), f));
      if (rest != 0) _mm256_maskstore_ps(yl + full, tail, _mm256_sub_ps(_mm256_maskload_ps(xl + full, tail), f));
    } else {
      for (int64_t i = 0; i < full; i += 8) _mm256_storeu_ps(yl + i, _mm256_mul_ps(_mm256_loadu_ps(yl + i), f));
      if (rest != 0) _mm256_maskstore_ps(yl + full, tail, _mm256_mul_ps(_mm256_maskload_ps(yl + full, tail), f));
    }
  }
}
#endif  // AIC_HAVE_AVX2_MATH

}  // namespace

void SoftmaxF32(const float* x, float* y, const AxisLanes& l, bool log) {
  if (l.dim == 0 || l.outer * l.inner == 0) return;
  if (l.inner == 1) {
#ifdef AIC_HAVE_AVX512_MATH
    if (avx512::HaveAvx512()) {
      // Groups of up to 16 lanes, smaller when there are too few to share
      // among the threads.
      int64_t per = l.outer / (4 * static_cast<int64_t>(omp_get_max_threads()));
      per = per < 1 ? 1 : (per > 16 ? 16 : per);
      ParallelFor((l.outer + per - 1) / per, l.dim * 8 * per, [&](int64_t g) {
        int64_t first = g * per;
        SoftmaxLanesAvx512(x + first * l.dim, y + first * l.dim, l.dim, l.outer - first < per ? l.outer - first : per,
                           log);
      });
      return;
    }
#endif
#ifdef AIC_HAVE_AVX2_MATH
    if (avx2::HaveAvx2Fma()) {
      ParallelFor(l.outer, l.dim * 8,
                  [&](int64_t o) { SoftmaxLanesAvx2(x + o * l.dim, y + o * l.dim, l.dim, 1, log); });
      return;
    }
#endif
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

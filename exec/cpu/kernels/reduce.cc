// Both shapes accumulate in f32 lanes the compiler vectorizes: along a
// contiguous run (inner = 1) a reduction per row; otherwise row by row of
// `inner` side-by-side accumulators (the spatial mean of NCHW, say, or a
// channel reduction over [N, C, H, W] with inner = H·W). Sums along a
// contiguous row add f32 sums of 256-element blocks in double (one long f32
// sum drifts), sums of squares and absolute values are taken in double; the
// side-by-side form sums in f32 per element, matching the reference within
// f32 rounding for the extents exported models use.
#include "exec/cpu/kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vec8.h"

namespace aic::cpu::kernels {

bool ReduceKindOf(const std::string& op, ReduceKind* kind) {
  if (op == "ReduceSum") *kind = ReduceKind::kSum;
  else if (op == "ReduceMean") *kind = ReduceKind::kMean;
  else if (op == "ReduceMax") *kind = ReduceKind::kMax;
  else if (op == "ReduceMin") *kind = ReduceKind::kMin;
  else if (op == "ReduceSumSquare") *kind = ReduceKind::kSumSquare;
  else if (op == "ReduceL1") *kind = ReduceKind::kL1;
  else if (op == "ReduceL2") *kind = ReduceKind::kL2;
  else if (op == "ReduceLogSumExp") *kind = ReduceKind::kLogSumExp;
  else if (op == "ReduceProd") *kind = ReduceKind::kProd;
  else if (op == "ReduceLogSum") *kind = ReduceKind::kLogSum;
  else return false;
  return true;
}

namespace {

constexpr int64_t kSumBlock = 256;

// Below this many elements a row is folded by a plain loop: an `omp simd`
// reduction spills its vector partials and reads them back one lane at a
// time, a store-forwarding stall that made a product of 2 features 15 ns
// a row (skl2onnx's PolynomialFeatures).
constexpr int64_t kShortRun = 16;

// Max/Min with NaN winning, as the reference (ops/math/reduce.cc) does.
inline float PickMax(float acc, float v) { return (v != v || v > acc) ? v : acc; }
inline float PickMin(float acc, float v) { return (v != v || v < acc) ? v : acc; }

// Side-by-side partial results along a contiguous run: four vectors of
// eight lanes (vec8.h; ReduceMax over the rows of [8, 512, 768] took 0.37 ms
// with one accumulator, 0.25 with these: bench/ops, Zen 3).
constexpr int64_t kLanes = 32;

template <bool kIsMax>
[[gnu::always_inline]] inline F8 Pick8(F8 acc, F8 v) {
  if constexpr (kIsMax) {
    return v > acc ? v : acc;
  } else {
    return v < acc ? v : acc;
  }
}

// The run's extreme ignoring NaN, and whether a NaN was seen: the
// reference's NaN-wins result from two reductions that vectorize.
template <bool kIsMax>
[[gnu::always_inline]] inline float ExtremeRun(const float* x, int64_t n) {
  float m = x[0];
  bool nan = false;
  int64_t i = 0;
  if (n >= kLanes) {
    F8 m0 = Load8(x), m1 = m0, m2 = m0, m3 = m0;
    I8 n0 = {}, n1 = {}, n2 = {}, n3 = {};
    for (; i + kLanes <= n; i += kLanes) {
      const F8 v0 = Load8(x + i), v1 = Load8(x + i + 8), v2 = Load8(x + i + 16), v3 = Load8(x + i + 24);
      m0 = Pick8<kIsMax>(m0, v0);
      m1 = Pick8<kIsMax>(m1, v1);
      m2 = Pick8<kIsMax>(m2, v2);
      m3 = Pick8<kIsMax>(m3, v3);
      n0 |= v0 != v0;
      n1 |= v1 != v1;
      n2 |= v2 != v2;
      n3 |= v3 != v3;
    }
    const F8 mm = Pick8<kIsMax>(Pick8<kIsMax>(m0, m1), Pick8<kIsMax>(m2, m3));
    const I8 nn = n0 | n1 | n2 | n3;
    for (int k = 0; k < 8; ++k) {
      m = (kIsMax ? mm[k] > m : mm[k] < m) ? mm[k] : m;
      nan = nan || nn[k] != 0;
    }
  }
  for (; i < n; ++i) {
    m = (kIsMax ? x[i] > m : x[i] < m) ? x[i] : m;
    nan = nan || x[i] != x[i];
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

// An f32 sum of x[0, n) in side-by-side partial sums (n small: a block of a
// longer run).
[[gnu::always_inline]] inline float LaneSum(const float* x, int64_t n) {
  F8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    s0 += Load8(x + i);
    s1 += Load8(x + i + 8);
    s2 += Load8(x + i + 16);
    s3 += Load8(x + i + 24);
  }
  const F8 s8 = (s0 + s1) + (s2 + s3);
  float p = 0;
  for (; i < n; ++i) p += x[i];
  for (int k = 0; k < 8; ++k) p += s8[k];
  return p;
}

// Σ f(x[i]) in double (kShortRun: short runs by a plain loop).
template <typename F>
[[gnu::always_inline]] inline double SumInDouble(const float* x, int64_t n, F f) {
  double s = 0;
  if (n < kShortRun) {
    for (int64_t i = 0; i < n; ++i) s += f(static_cast<double>(x[i]));
    return s;
  }
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += f(static_cast<double>(x[i]));
  return s;
}

[[gnu::always_inline]] inline float ReduceRun(const float* x, int64_t n, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax: return ExtremeRun<true>(x, n);
    case ReduceKind::kMin: return ExtremeRun<false>(x, n);
    case ReduceKind::kLogSumExp: {
      float m = x[0];
      for (int64_t i = 1; i < n; ++i) m = PickMax(m, x[i]);
      if (std::isinf(m) || m != m) m = 0;  // let the sum carry inf/NaN
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < n; ++i) s += ExpApprox(x[i] - m);
      return static_cast<float>(std::log(s) + m);
    }
    case ReduceKind::kProd: {  // in double, as the reference accumulates
      double p = 1;
      if (n < kShortRun) {
        for (int64_t i = 0; i < n; ++i) p *= x[i];
      } else {
#pragma omp simd reduction(* : p)
        for (int64_t i = 0; i < n; ++i) p *= x[i];
      }
      return static_cast<float>(p);
    }
    default: break;
  }
  double s = 0;
  if (kind == ReduceKind::kSumSquare || kind == ReduceKind::kL2) {
    s = SumInDouble(x, n, [](double v) { return v * v; });
  } else if (kind == ReduceKind::kL1) {
    s = SumInDouble(x, n, [](double v) { return std::fabs(v); });
  } else {
    // f32 partial sums of 256-element blocks (vector lanes side by side),
    // added in double: the accuracy of a blocked pairwise sum at the speed
    // of an f32 one (widening every element to double cost 25% on
    // [8, 512, 768] rows).
    for (int64_t i = 0; i < n; i += kSumBlock) s += LaneSum(x + i, n - i < kSumBlock ? n - i : kSumBlock);
  }
  if (kind == ReduceKind::kMean) s /= static_cast<double>(n);
  if (kind == ReduceKind::kL2) s = std::sqrt(s);
  if (kind == ReduceKind::kLogSum) s = std::log(s);
  return static_cast<float>(s);
}

// Rows [begin, end) of the last-axis case in one call: short rows (a
// product of two features, 256 rows) paid a dispatch per row otherwise.
AIC_KERNEL_CLONES void ReduceRows(const float* x, float* out, int64_t begin, int64_t end, int64_t n, ReduceKind kind) {
  for (int64_t o = begin; o < end; ++o) out[o] = ReduceRun(x + o * n, n, kind);
}

[[gnu::always_inline]] inline void AccumulateRow(const float* row, float* acc, int64_t n, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] = PickMax(acc[i], row[i]);
      return;
    case ReduceKind::kMin:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] = PickMin(acc[i], row[i]);
      return;
    case ReduceKind::kSumSquare:
    case ReduceKind::kL2:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] += row[i] * row[i];
      return;
    case ReduceKind::kL1:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] += std::fabs(row[i]);
      return;
    case ReduceKind::kProd:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] *= row[i];
      return;
    default:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) acc[i] += row[i];
  }
}

// Rows [first, last) of a block folded into acc. A sum over a block 8 or 16
// floats wide (a channel-blocked conv output's spatial mean: 3136 rows of 8
// per block on [1, 64, 56, 56]) keeps each 8 lanes in four registers, the
// rows' additions interleaved; a loop over the block's width per row ran at
// 2.5x ONNX Runtime's time (SE blocks).
AIC_KERNEL_CLONES void AccumulateRows(const float* base, int64_t stride, int64_t first, int64_t last, float* acc,
                                      int64_t n, ReduceKind kind) {
  if ((kind == ReduceKind::kSum || kind == ReduceKind::kMean) && n % 8 == 0 && n <= 16) {
    for (int64_t c = 0; c < n; c += 8) {
      F8 s0 = Load8(acc + c), s1 = {}, s2 = {}, s3 = {};
      int64_t j = first;
      for (; j + 4 <= last; j += 4) {
        s0 += Load8(base + j * stride + c);
        s1 += Load8(base + (j + 1) * stride + c);
        s2 += Load8(base + (j + 2) * stride + c);
        s3 += Load8(base + (j + 3) * stride + c);
      }
      for (; j < last; ++j) s0 += Load8(base + j * stride + c);
      const F8 total = (s0 + s1) + (s2 + s3);
      std::memcpy(acc + c, &total, sizeof total);
    }
    return;
  }
  for (int64_t j = first; j < last; ++j) AccumulateRow(base + j * stride, acc, n, kind);
}

}  // namespace

void ReduceF32(const float* x, float* out, const AxisLanes& l, ReduceKind kind) {
  if (l.outer * l.inner == 0) return;
  if (l.inner == 1) {
    // Tasks of ~4K elements: long rows one each, short ones many.
    const int64_t rows_per_task = std::clamp<int64_t>(4096 / std::max<int64_t>(l.dim, 1), 1, 256);
    const int64_t tasks = (l.outer + rows_per_task - 1) / rows_per_task;
    ParallelFor(tasks, rows_per_task * l.dim, [&](int64_t t) {
      ReduceRows(x, out, t * rows_per_task, std::min(l.outer, (t + 1) * rows_per_task), l.dim, kind);
    });
    return;
  }
  if (kind == ReduceKind::kLogSumExp) {  // rare off the last axis: gather each lane
    ParallelFor(l.outer * l.inner, l.dim, [&](int64_t t) {
      thread_local std::vector<float> lane;
      int64_t o = t / l.inner, i = t % l.inner;
      lane.resize(static_cast<size_t>(l.dim));
      for (int64_t j = 0; j < l.dim; ++j) lane[j] = x[(o * l.dim + j) * l.inner + i];
      ReduceRows(lane.data(), out + t, 0, 1, l.dim, kind);
    });
    return;
  }
  constexpr int64_t kBlock = 2048;
  int64_t blocks = (l.inner + kBlock - 1) / kBlock;
  ParallelFor(l.outer * blocks, l.dim * kBlock, [&](int64_t t) {
    int64_t o = t / blocks, begin = (t % blocks) * kBlock;
    int64_t width = l.inner - begin < kBlock ? l.inner - begin : kBlock;
    const float* base = x + o * l.dim * l.inner + begin;
    float* acc = out + o * l.inner + begin;
    bool extreme = kind == ReduceKind::kMax || kind == ReduceKind::kMin;
    const float start = kind == ReduceKind::kProd ? 1.0f : 0.0f;
    for (int64_t i = 0; i < width; ++i) acc[i] = extreme ? base[i] : start;
    AccumulateRows(base, l.inner, extreme ? 1 : 0, l.dim, acc, width, kind);
    if (kind == ReduceKind::kMean) {
      float inv = 1.0f / static_cast<float>(l.dim);
      for (int64_t i = 0; i < width; ++i) acc[i] *= inv;
    } else if (kind == ReduceKind::kL2) {
      for (int64_t i = 0; i < width; ++i) acc[i] = std::sqrt(acc[i]);
    } else if (kind == ReduceKind::kLogSum) {
      for (int64_t i = 0; i < width; ++i) acc[i] = std::log(acc[i]);
    }
  });
}

}  // namespace aic::cpu::kernels

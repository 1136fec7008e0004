// Kernels over float16 rows that compute in f32 (a half model's edges, where
// widen_half would otherwise Cast the whole tensor to f32 and back): each
// row widened into a per-thread buffer, transformed there, rounded back.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/cast.h"
#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

// For each of `rows` rows of `len` halves: x's row widened to f32, f(row,
// floats) transforms the floats in place, the result rounded to half into
// y's row (y may equal x). Short rows go in blocks of about 1K values, one widening
// and one rounding call per block: per row, those calls and the per-thread
// buffer's lookup made a float16 RotaryEmbedding of 128-value heads take
// 2.2x its f32 time. Blocks are spread over threads by work_per_row.
template <typename F>
void ForEachHalfRow(const uint16_t* x, uint16_t* y, int64_t rows, int64_t len, int64_t work_per_row, F f) {
  const int64_t block = len >= 1024 ? 1 : 1024 / (len > 0 ? len : 1);
  ParallelFor((rows + block - 1) / block, work_per_row * block, [&](int64_t b) {
    const int64_t first = b * block;
    const int64_t n = rows - first < block ? rows - first : block;
    thread_local std::vector<float> buffer;
    if (static_cast<int64_t>(buffer.size()) < n * len) buffer.resize(static_cast<size_t>(n * len));
    HalfToFloatRow(x + first * len, buffer.data(), n * len);
    for (int64_t r = 0; r < n; ++r) f(first + r, buffer.data() + r * len);
    FloatToHalfRow(buffer.data(), y + first * len, n * len);
  });
}

// y = f(x) elementwise over n halves (their bits; y may equal x): runs of
// 1024 widened into a stack buffer that stays in L1, f(run, length)
// transforms the floats in place, the result rounded back to half. A half
// model's standalone activation (Cast -> Relu -> Cast as widen_half leaves
// it) in one pass over the half bytes: as three whole-tensor passes, the two
// Casts took 63% of an f16 ReLU over [8, 512, 768] and the whole 3.5x ONNX
// Runtime's time at 2 threads inside an If branch (bench/OPS.md).
template <typename F>
void ForEachHalfRun(const uint16_t* x, uint16_t* y, int64_t n, F f) {
  constexpr int64_t kRun = 1024;
  ParallelPieces(n, [&](int64_t begin, int64_t len) {
    alignas(64) float run[kRun];
    for (int64_t at = begin; at < begin + len; at += kRun) {
      const int64_t m = begin + len - at < kRun ? begin + len - at : kRun;
      HalfToFloatRow(x + at, run, m);
      f(run, m);
      FloatToHalfRow(run, y + at, m);
    }
  });
}

}  // namespace aic::cpu::kernels

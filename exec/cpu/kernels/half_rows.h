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

}  // namespace aic::cpu::kernels

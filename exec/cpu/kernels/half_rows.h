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
// y's row (y may equal x). Rows are spread over threads by work_per_row.
template <typename F>
void ForEachHalfRow(const uint16_t* x, uint16_t* y, int64_t rows, int64_t len, int64_t work_per_row, F f) {
  ParallelFor(rows, work_per_row, [&](int64_t r) {
    thread_local std::vector<float> row;
    if (static_cast<int64_t>(row.size()) < len) row.resize(static_cast<size_t>(len));
    HalfToFloatRow(x + r * len, row.data(), len);
    f(r, row.data());
    FloatToHalfRow(row.data(), y + r * len, len);
  });
}

}  // namespace aic::cpu::kernels

// Row normalizations: LayerNormalization y = (x - mean) / sqrt(var + eps) *
// scale (+ bias), mean and variance over each row of `cols` contiguous
// elements; RMSNormalization y = x / sqrt(mean(x²) + eps) * scale.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// x, y: rows x cols (y may equal x); scale, bias: cols (bias may be null);
// mean, inv_std: rows, or null when not wanted. Rows are spread over threads.
void LayerNormF32(const float* x, const float* scale, const float* bias, float* y, int64_t rows, int64_t cols,
                  float epsilon, float* mean = nullptr, float* inv_std = nullptr);

// x, y: rows x cols (y may equal x); scale: cols. Rows are spread over threads.
void RmsNormF32(const float* x, const float* scale, float* y, int64_t rows, int64_t cols, float epsilon);

// The same over float16 rows (their bits), for a half model's
// Cast -> LayerNormalization / RMSNormalization -> Cast: each row widened
// to f32, normalized (LayerNorm's scaling in f32, not double: the result is
// rounded to half, 2^13 times coarser), rounded back to half, without the
// two f32 tensors between the three steps.
void LayerNormHalf(const uint16_t* x, const float* scale, const float* bias, uint16_t* y, int64_t rows, int64_t cols,
                   float epsilon);
void RmsNormHalf(const uint16_t* x, const float* scale, uint16_t* y, int64_t rows, int64_t cols, float epsilon);

}  // namespace aic::cpu::kernels

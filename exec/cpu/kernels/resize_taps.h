// Separable resize of the two innermost dims of a dense f32 tensor by
// per-index taps (ops/tensor/resize_params.h: ResizeTapsFor), the modes the
// two-tap bilinear kernel does not cover: cubic, and antialiased linear or
// cubic downsampling. A horizontal pass blends each input row into a
// scratch row of the output's width, a vertical pass blends those rows; the
// reference sums the products of both weights in double, so results agree
// to float rounding. The reference took 1.7x ONNX Runtime's time on cubic.
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

// The taps of every output index of one axis: output i reads
// index[offset[i] .. offset[i + 1]) with the matching weights.
struct AxisTapTable {
  std::vector<int64_t> offset;
  std::vector<int64_t> index;
  std::vector<float> weight;
  int64_t size() const { return static_cast<int64_t>(offset.size()) - 1; }
};

// x: planes x in_h x in_w -> y: planes x ys.size() x xs.size().
void ResizeByTapsF32(const float* x, float* y, int64_t planes, int64_t in_h, int64_t in_w, const AxisTapTable& ys,
                     const AxisTapTable& xs);

}  // namespace aic::cpu::kernels

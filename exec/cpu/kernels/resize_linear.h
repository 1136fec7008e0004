// Bilinear resize of the two innermost dims of a dense f32 tensor, with the
// ONNX coordinate transformations half_pixel, pytorch_half_pixel,
// align_corners and asymmetric: per output row and column, two input indices
// and a weight, precomputed once (edges clamp, as the ONNX reference does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aic::cpu::kernels {

struct LinearAxis {
  std::vector<int64_t> lo, hi;  // input indices per output index
  std::vector<float> w;         // weight of hi
};

// nullopt for another coordinate mode. `scale` is the axis's resize scale
// (given, or out/in when sizes were given).
std::optional<LinearAxis> MakeLinearAxis(int64_t in, int64_t out, double scale, const std::string& coord);

// Nearest-neighbour resize of the two innermost dims of a dense tensor of
// `elem`-byte elements (1, 2, 4 or 8): output row r copies input row ys[r]
// at columns xs (an output row whose source row is the one before's is a
// copy of that row: integer upsampling writes each source row once).
void ResizeNearest(const void* x, void* y, int64_t planes, int64_t in_h, int64_t in_w,
                   const std::vector<int64_t>& ys, const std::vector<int64_t>& xs, size_t elem);

// x: planes x in_h x in_w -> y: planes x out_h x out_w.
void ResizeBilinearF32(const float* x, float* y, int64_t planes, int64_t in_h, int64_t in_w, const LinearAxis& ys,
                       const LinearAxis& xs);

}  // namespace aic::cpu::kernels

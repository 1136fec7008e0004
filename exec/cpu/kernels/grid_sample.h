// GridSample over 2-D float32 images in NCHW (bilinear or nearest, any
// padding and align_corners): each output location's taps and weights are
// worked out once, in double by the reference's own rules (GridSampler), and
// then applied to every channel. The reference kernel samples each channel
// anew in double: RAFT's correlation lookups took 1.4 ms a step that way.
#pragma once

#include <cstdint>

#include "ops/misc/grid_sample.h"

namespace aic::cpu::kernels {

struct GridSampleShape {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
};

// x [N, C, H, W], grid [N, OH, OW, 2] (x then y, normalized), y [N, C, OH, OW].
// `sampler`'s mode is kBilinear or kNearest.
void GridSample2dF32(const float* x, const float* grid, float* y, const GridSampleShape& shape,
                     const GridSampler& sampler);

}  // namespace aic::cpu::kernels

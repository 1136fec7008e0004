// RoiAlign over float32 NCHW features: each region's sample taps and
// weights are worked out once by the reference's own rules (roi_align.h, in
// double), then applied to every channel in f32. The reference kernel redoes
// the geometry per channel in double: a Faster R-CNN's box pooling
// ([150 regions, 256, 7, 7]) took 73 ms a call that way.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "ops/nn/roi_align.h"

namespace aic::cpu::kernels {

struct RoiAlignShape {
  int64_t batch = 0, channels = 0, height = 0, width = 0, regions = 0;
};

// x [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R],
// y [R, C, out_h, out_w]. An error where a batch index is out of range.
absl::Status RoiAlignF32(const float* x, const float* rois, const int64_t* batch_indices, float* y,
                         const RoiAlignShape& shape, const RoiAlignParams& params);

}  // namespace aic::cpu::kernels

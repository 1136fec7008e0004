// y = x·scale[c] + shift[c] per channel, optionally followed by ReLU: a
// BatchNormalization no conv absorbed (DenseNet's after a Concat), or a
// squeeze-and-excitation block's per-image channel scale (scale per image,
// no shift), in the layout its input arrives in. oneDNN 2.6 runs these as
// a binary with a per-channel operand at 1.3-2.3x ONNX Runtime's time
// (bench/OPS.md), and the SE multiply got no faster on two threads.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// x seen as [outer][blocks][spatial][block], channel c = b·block + j: plain
// NCHW is (N, C, H·W, 1), nChw16c (N, C/16, H·W, 16), NHWC (N, 1, H·W, C).
struct ChannelLayout {
  int64_t outer = 1;
  int64_t blocks = 1;
  int64_t spatial = 1;
  int64_t block = 1;
};

// y may equal x. scale and shift hold blocks·block values (padding lanes
// 0, so a padded block stays 0); shift may be null (0). scale_per_image:
// scale holds one such vector per image (outer index), else one for all.
void ChannelAffineF32(const float* x, float* y, const ChannelLayout& l, const float* scale, const float* shift,
                      bool relu, bool scale_per_image = false);

}  // namespace aic::cpu::kernels

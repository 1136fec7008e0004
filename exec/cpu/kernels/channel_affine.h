// y = x·scale[c] + shift[c] per channel, optionally followed by ReLU: a
// BatchNormalization no conv absorbed (DenseNet's after a Concat), in the
// layout its input arrives in. oneDNN 2.6 runs it as a binary with a
// per-channel operand at 1.3-2.3x ONNX Runtime's time (bench/OPS.md).
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

// y may equal x.
void ChannelAffineF32(const float* x, float* y, const ChannelLayout& l, const float* scale, const float* shift,
                      bool relu);

}  // namespace aic::cpu::kernels

// A depthwise 2-D convolution (one filter per channel, stride 1, no
// dilation) on plain NCHW f32: each output row is the sum of kh·kw shifted
// input rows times one weight each, vectorized along the row. oneDNN 2.6's
// depthwise kernels read a channel-blocked layout only, so a plain input (a
// graph input; ConvNeXt's depthwise conv between two Transposes) paid a
// reorder on each side: 70% of a [1, 64, 112, 112] 3x3 conv's time.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct DepthwiseGeometry {
  int64_t planes = 0;  // N·C
  int64_t channels = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 0, kw = 0;
  int64_t pad_top = 0, pad_left = 0;
};

// w: [C, kh·kw]; bias: [C] or null.
void DepthwiseConvF32(const float* x, const float* w, const float* bias, float* y, const DepthwiseGeometry& g);

}  // namespace aic::cpu::kernels

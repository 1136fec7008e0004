// A dilated 2-D convolution (stride 1, one group) as one GEMM per kernel
// tap over only the output positions where that tap reads the input:
//   y[:, rect_t] += W_t · x[:, rect_t + offset_t]   (W_t = W[:, :, kh, kw], M x C)
// A dilation wide against the feature map leaves most taps in the padding
// for most positions (DeepLab's ASPP at dilation 12 on a 20x20 map: 36% of
// the tap-positions read the input), which im2col + GEMM (oneDNN 2.6's
// gemm:jit for these) multiplies by zeros all the same: 21 ms at 1 thread on
// a Zen 3, ONNX Runtime's NCHWc kernel 10.9. A tap's input block is packed
// into a scratch [C, positions] unless it is the whole map; each product
// lands in a scratch and is added into its rectangle of y.
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

struct TapConvGeometry {
  int64_t batch = 1, in_c = 0, out_c = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 1, kw = 1;
  int64_t dh = 1, dw = 1;             // dilations
  int64_t pad_top = 0, pad_left = 0;  // leading pads
};

// One tap: the output rectangle where it reads the input, and the offset
// from an output position to the input position it reads.
struct ConvTap {
  int64_t oh0 = 0, oh1 = 0, ow0 = 0, ow1 = 0;
  int64_t dy = 0, dx = 0;
  int64_t index = 0;  // kh_i * kw + kw_i
  int64_t positions() const { return (oh1 - oh0) * (ow1 - ow0); }
};

// The taps of g that read the input somewhere (empty rectangles dropped).
std::vector<ConvTap> LiveTaps(const TapConvGeometry& g);

// Weights [M, C, kh, kw] regrouped per tap: tap t's W_t at t·M·C, row-major M x C.
std::vector<float> WeightsByTap(const float* w, const TapConvGeometry& g);

// y [N, M, out_h, out_w] = conv(x [N, C, in_h, in_w]) + bias (null: none).
// `by_tap` from WeightsByTap, `taps` from LiveTaps.
void TapConvF32(const float* x, const float* by_tap, const float* bias, float* y, const TapConvGeometry& g,
                const std::vector<ConvTap>& taps);

}  // namespace aic::cpu::kernels

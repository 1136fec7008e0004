// QLinearConv's integer convolution on the pair kernels (pair_gemm.h), for
// CPUs without VNNI: each group's output channels × output positions as one
// exact product of the weights (w - w_zero as int16, packed once) and the
// input's patches (x - x_zero, zero in the padding: QLinearConv pads with
// x_zero_point), packed into panels at each run; the sums are requantized in
// the kernel's registers as the reference does (double product with the
// f32 scale, half to even, zero point added, saturated).
#pragma once

#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/pair_gemm.h"

namespace aic::cpu::kernels {

// Spatial arrays are depth, height, width: a 1-D or 2-D conv has leading
// sizes 1 (kernel, stride and dilation 1, pads 0).
struct PairConvShape {
  int64_t batch = 1, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad[3] = {0, 0, 0};  // pad: leading side
};

struct PairConvQuant {
  int32_t x_zero = 0;
  bool x_signed = false;
  // w_zero: one value or one per output channel.
  std::vector<int32_t> w_zero;
  std::vector<int32_t> bias;   // empty or one per output channel
  std::vector<double> scales;  // one, or one per output channel: f32(xs·ws[c]/ys) as a double
  int32_t y_zero = 0;
  bool y_signed = false;
  bool sums_fit = false;  // every |(sum + bias)·scale| below 2^31 (PairGemmOutput::sums_fit)
};

class PairConv {
 public:
  // w: out_channels × in_channels/groups × kernel, int8 (w_signed) or uint8.
  PairConv(const PairConvShape& shape, const void* w, bool w_signed, PairConvQuant quant);

  // Bytes of the scratch Run needs (the packed patches of one block of output
  // rows of one image and group).
  int64_t ScratchBytes() const;
  // y = QLinearConv(x) for the whole batch, NCDHW in and out.
  void Run(const void* x, void* y, void* scratch) const;
  // ConvInteger's int32 sums for x with the zero point given here (a
  // DynamicQuantizeLinear computes it each run) and the weights' zero points
  // of the quant; with `scale`, f32(sum)·scale instead (its Cast -> Mul).
  void RunSums(const void* x, int32_t x_zero, void* y, void* scratch, const float* scale) const;

 private:
  // Patch rows 2p and 2p+1 of one image and group g, over the output rows
  // (od, oh) in [first, last), into pair p of the panels.
  void PackPair(const void* x_image, int32_t x_zero, int64_t g, int64_t p, int64_t first, int64_t last,
                int16_t* panels) const;
  // The convolution with `out`'s kind of output (its y, ldy, bias and scales
  // set per group and block here).
  void Convolve(const void* x, int32_t x_zero, void* y, void* scratch, PairGemmOutput out) const;

  PairConvShape s_;
  PairConvQuant q_;
  int64_t group_in_ = 0, group_out_ = 0, k_ = 0, k_pairs_ = 0, positions_ = 0;
  int64_t block_rows_ = 1;  // output rows (od, oh) packed and multiplied at a time
  bool pointwise_ = false;  // 1x1, stride 1, no padding: patch rows are input planes
  std::vector<int16_t> weights_;  // per group, w - w_zero packed in row tiles (PackPairRows)
  // Per kernel column: the output columns whose input column is inside the
  // row, [lo, hi), and the input column of output column 0.
  std::vector<int64_t> col_lo_, col_hi_, col_origin_;
};

}  // namespace aic::cpu::kernels

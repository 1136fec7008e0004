// Depthwise QLinearConv (groups = input channels) on CPUs without VNNI: the
// pair kernels' exact int16 products (pair_gemm.h) per channel, without a
// GEMM (one output row per group would leave the tile kernel 1/6 busy and
// its patch packing the whole cost: MobileNet-v3's 960-channel 5x5 convs ran
// 2.2 ms each through it).
//
// Each input channel is widened once (x - x_zero as int16) into a zero-padded
// plane, split by stride phase: phase (a, b) holds the padded rows ≡ a (mod
// stride_h) and columns ≡ b (mod stride_w), so every tap of every output
// position reads its phase plane at flat index (output row · plane width +
// output column) plus a per-tap offset. The outputs are computed 16 at a
// time over that flat grid (columns past the output width are computed and
// dropped), two taps per vpmaddwd, and requantized in registers.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/cpu/kernels/pair_conv.h"

namespace aic::cpu::kernels {

class PairDepthwiseConv {
 public:
  // Whether the shape is one this class runs: 1-D or 2-D, groups equal to
  // the input channels, output channels a multiple of them.
  static bool Covers(const PairConvShape& shape);

  // w: out_channels × 1 × kernel, int8 (w_signed) or uint8.
  PairDepthwiseConv(const PairConvShape& shape, const void* w, bool w_signed, PairConvQuant quant);

  // y = QLinearConv(x) for the whole batch, NCHW in and out.
  void Run(const void* x, void* y) const;
  // ConvInteger's int32 sums with x's zero point given here, or with `scale`
  // f32(sum)·scale (as PairConv::RunSums).
  void RunSums(const void* x, int32_t x_zero, void* y, const float* scale) const;

 private:
  void Convolve(const void* x, int32_t x_zero, const float* f32_scale, bool quantized, void* y) const;
  // The output channels of input channel c of one image: requantized bytes
  // (quantized), f32 (f32_scale) or int32.
  void Channel(const uint8_t* x_plane, int64_t c, int32_t x_zero, const float* f32_scale, bool quantized,
               uint8_t* y_image) const;

  PairConvShape s_;
  PairConvQuant q_;
  uint64_t id_ = 0;  // unique per object: whose padding a thread's planes hold
  int64_t multiplier_ = 1, taps_ = 0, tap_pairs_ = 0;
  int64_t plane_rows_ = 0, plane_cols_ = 0, plane_size_ = 0, grid_ = 0;
  std::vector<int32_t> weight_pairs_;  // [out_channels][tap_pairs]: (w[2t] - z, w[2t+1] - z) as two int16
  // int16 offset of each tap in the phase planes; an odd count's missing
  // last tap repeats the first (its weight is 0).
  std::vector<int64_t> tap_offsets_;
  // Per column phase with input columns: the first of them, how many, and
  // where they go (the phase plane's offset, the column in it).
  struct PhaseColumns {
    int64_t first, count, plane, column;
  };
  std::vector<PhaseColumns> phase_columns_;
};

}  // namespace aic::cpu::kernels

// Ungrouped stride-1 1-D convolution in plain NCW, direct: blocks of 4
// output channels by 24 positions in 12 AVX2 accumulators, each input
// channel and tap adding a broadcast weight times 3 loaded vectors. oneDNN
// 2.6 has no direct kernel for 1-D kernels this wide (11 taps: its jit:avx2
// declines and only ref:any takes the blocked layouts) and runs im2col +
// GEMM, slow at few channels: HiFiGAN's [1, 8, 16384] resblock convs, 11
// taps, took 1.2-1.9 ms (ONNX Runtime 0.66-0.77).
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

struct Conv1dGeometry {
  int64_t batch = 0, in_c = 0, out_c = 0, in_len = 0, out_len = 0;
  int64_t kernel = 0, dilation = 1, pad_left = 0;
};

// Whether this CPU runs the kernel (AVX2 and FMA).
bool Conv1dAvailable();

// w [out_c, in_c, kernel] rearranged for Conv1dF32: blocks of 4 output
// channels (the last zero-filled), within a block by input channel, tap, then
// the 4 channels.
std::vector<float> PackConv1dWeights(const float* w, const Conv1dGeometry& g);

// y[n, o, l] = b[o] + Σ_c Σ_t w[o, c, t]·x[n, c, l + t·dilation - pad_left],
// x zero outside [0, in_len); b may be null.
void Conv1dF32(const float* x, const float* packed_w, const float* b, float* y, const Conv1dGeometry& g);

}  // namespace aic::cpu::kernels

// The second half of a ConvTranspose whose kernel equals its stride and has
// no padding (FPN and DB-head upsampling): every input pixel owns one
// kh x kw patch of the output, so after the GEMM Y[o·kh·kw + a·kw + b, i·w + j]
// (one row per output channel and tap, the pixels contiguous) each patch
// element is copied to its place, the channel's bias added on the way.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct PatchScatterShape {
  int64_t batch = 1, channels = 0, kh = 1, kw = 1, h = 0, w = 0;
};

// out[n, o, i·kh + a, j·kw + b] = y[n, o, a, b, i, j] + bias[o] (bias null:
// nothing added). Threaded over (image, channel).
void ScatterPatches(const float* y, const float* bias, float* out, const PatchScatterShape& s);

}  // namespace aic::cpu::kernels

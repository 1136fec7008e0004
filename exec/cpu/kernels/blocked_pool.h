// MaxPool and AveragePool over a channel-blocked f32 tensor, the layouts
// convolutions write: [N, ceil(C/b), H, W, b] (oneDNN's nChw8c, nChw16c) or
// channels-last [N, H, W, C] (b = C). Each output position reduces its
// window's taps inside the input, all b channels of a block side by side.
// oneDNN 2.6's jit:avx2 pooling of those layouts took 3.4 ns an output (a
// 3x3 stride-1 MaxPool of [1, 192, 28, 28]: 0.51 ms; GoogLeNet's 13 pools
// 13% of its time).
#pragma once

#include <cstdint>

#include "exec/cpu/kernels/window_pool.h"

namespace aic::cpu::kernels {

// g.planes is N·ceil(C/b) (N for channels-last); the window's geometry as for
// WindowPoolF32, which requires EveryWindowTouchesInput(g) likewise.
void BlockedPoolF32(const float* x, float* y, const WindowPoolGeometry& g, int64_t block);

}  // namespace aic::cpu::kernels

// MaxPool and AveragePool over the two spatial axes of a plain NCHW f32
// tensor (1-D pooling as height 1): any kernel, stride, dilation and padding.
// Each output row reduces its window's input rows, then takes each output's
// window along the reduced row: in AVX-512 (else AVX2) registers for
// undilated strides 1 and 2 (a stride-2 window, the common downsampling
// pool, through even/odd deinterleaves; rows of one vector or less with the
// planes as the inner loop), else through a row buffer padded with the
// reduction's identity. oneDNN 2.6 pools a plain layout by transposing it to channel
// blocks internally: 1.2-1.3x ONNX Runtime's time on a [1, 64, 112, 112] 3x3
// stride-2 MaxPool (bench/OPS.md).
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct WindowPoolGeometry {
  int64_t planes = 0;  // N·C
  int64_t in_h = 1, in_w = 0, out_h = 1, out_w = 0;
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t dh = 1, dw = 1;            // dilations (1: none)
  int64_t pad_top = 0, pad_left = 0;  // the declared (or auto_pad's) leading pads
  // The declared trailing pads: AveragePool with count_include_pad counts
  // padded taps inside these (not what ceil_mode adds past them).
  int64_t pad_bottom = 0, pad_right = 0;
  bool is_max = true;
  bool count_include_pad = false;  // AveragePool only
};

// Taps k in [0, kernel) of a window starting at `start` whose position
// start + k·dilation lies in [lo, hi): inside the input ([0, in)), or, for
// an include-pad average's divisor, inside the declared pads.
int64_t TapsWithin(int64_t start, int64_t kernel, int64_t dilation, int64_t lo, int64_t hi);

// Whether every window of `g` has at least one tap inside the input (else
// MaxPool has no value and the exclude-pad average divides by zero); the
// kernel requires it.
bool EveryWindowTouchesInput(const WindowPoolGeometry& g);

// y[plane][oh][ow] = max or average over the window's taps inside the input.
void WindowPoolF32(const float* x, float* y, const WindowPoolGeometry& g);

}  // namespace aic::cpu::kernels

// Output row i·kh + a of a channel interleaves the kw rows Y[o, a, 0..kw, i, :]:
// each read contiguously, written at stride kw within one row that stays in
// L1. oneDNN 2.6's reorder expressing the same permutation ran 3-4x slower
// (its jit:uni kernel on six-dimensional strides), and a bias per GEMM row
// had only its reference kernel, which is why the bias is added here.
#include "exec/cpu/kernels/patch_scatter.h"

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// One output row: kw runs of w values interleaved, plus the bias.
AIC_KERNEL_CLONES void InterleaveRow(const float* y, int64_t run_stride, int64_t kw, int64_t w, float bias,
                                     float* out) {
  if (kw == 2) {  // the common 2x2 upsampling: a zip of two runs
    const float* a = y;
    const float* b = y + run_stride;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) {
      out[2 * j] = a[j] + bias;
      out[2 * j + 1] = b[j] + bias;
    }
    return;
  }
  for (int64_t t = 0; t < kw; ++t) {
    const float* a = y + t * run_stride;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) out[j * kw + t] = a[j] + bias;
  }
}

}  // namespace

void ScatterPatches(const float* y, const float* bias, float* out, const PatchScatterShape& s) {
  const int64_t hw = s.h * s.w, taps = s.kh * s.kw, ow = s.w * s.kw;
  ParallelFor(s.batch * s.channels, taps * hw, [&](int64_t nc) {
    const float b = bias != nullptr ? bias[nc % s.channels] : 0.0f;
    const float* yc = y + nc * taps * hw;
    float* oc = out + nc * taps * hw;
    for (int64_t i = 0; i < s.h; ++i) {
      for (int64_t a = 0; a < s.kh; ++a) {
        InterleaveRow(yc + a * s.kw * hw + i * s.w, hw, s.kw, s.w, b, oc + (i * s.kh + a) * ow);
      }
    }
  });
}

}  // namespace aic::cpu::kernels

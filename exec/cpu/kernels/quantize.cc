// Runs of `inner` elements share one channel's scale and zero point; each
// run is a vectorized loop, runs (or pieces of them) are spread over threads.
#include "exec/cpu/kernels/quantize.h"

#include <cmath>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/quantize_run.h"

namespace aic::cpu::kernels {

namespace {

// f(channel, first element, length) over outer x channels runs of `inner`
// elements; a run is cut into pieces when there are too few runs to share
// out (per-tensor quantization is one run).
template <typename F>
void ForEachRun(const QuantLayout& l, F&& f) {
  const int64_t runs = l.outer * l.channels;
  const int64_t pieces = PiecesPerRow(runs, l.inner);
  const int64_t piece = (l.inner + pieces - 1) / pieces;
  ParallelFor(runs * pieces, piece, [&](int64_t i) {
    int64_t r = i / pieces, begin = (i % pieces) * piece;
    if (begin < l.inner) f(r % l.channels, r * l.inner + begin, l.inner - begin < piece ? l.inner - begin : piece);
  });
}

}  // namespace

void QuantizeF32(const float* x, void* y, bool is_signed, const QuantLayout& l) {
  ForEachRun(l, [&](int64_t c, int64_t at, int64_t n) {
    if (is_signed) {
      QuantizeRunS8(x + at, static_cast<int8_t*>(y) + at, n, l.scale[c], l.zero_point[c]);
    } else {
      QuantizeRunU8(x + at, static_cast<uint8_t*>(y) + at, n, l.scale[c], l.zero_point[c]);
    }
  });
}

void DequantizeToF32(const void* x, bool is_signed, float* y, const QuantLayout& l) {
  ForEachRun(l, [&](int64_t c, int64_t at, int64_t n) {
    if (is_signed) {
      DequantizeRunS8(static_cast<const int8_t*>(x) + at, y + at, n, l.scale[c], l.zero_point[c]);
    } else {
      DequantizeRunU8(static_cast<const uint8_t*>(x) + at, y + at, n, l.scale[c], l.zero_point[c]);
    }
  });
}

}  // namespace aic::cpu::kernels

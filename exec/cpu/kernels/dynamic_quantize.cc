// Two passes: the range (min and max in vector lanes, then across lanes and
// pieces: both are exact, so the order cannot change the result), then the
// quantization. NaNs are skipped by the range and saturate to 0 (the
// reference's conversion of a NaN is not defined).
#include "exec/cpu/kernels/dynamic_quantize.h"

#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/quantize_run.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kPiece = 8192;

struct Range {
  float lo = 0, hi = 0;  // the reference starts both at 0
};

// The comparisons are written as the reference's std::min/std::max compare,
// so a NaN never replaces a bound.
Range Merge(Range a, Range b) {
  return {b.lo < a.lo ? b.lo : a.lo, b.hi > a.hi ? b.hi : a.hi};
}

// A NaN becomes 0, which the range holds already: the lanes' min and max
// then see no NaN and may combine in any order.
AIC_KERNEL_CLONES Range RangeOf(const float* x, int64_t n) {
  float lo = 0, hi = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] == x[i] ? x[i] : 0.0f;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  return {lo, hi};
}

}  // namespace

void DynamicQuantizeF32(const float* x, int64_t n, uint8_t* y, float* scale, uint8_t* zero_point) {
  Range r;
  int64_t pieces = (n + kPiece - 1) / kPiece;
  if (pieces <= 1 || n < kMinParallelWork || omp_get_max_threads() <= 1) {
    r = RangeOf(x, n);
  } else {
    std::vector<Range> part(static_cast<size_t>(pieces));
    ParallelFor(pieces, kPiece, [&](int64_t p) {
      int64_t begin = p * kPiece;
      part[static_cast<size_t>(p)] = RangeOf(x + begin, n - begin < kPiece ? n - begin : kPiece);
    });
    for (const Range& p : part) r = Merge(r, p);
  }
  const float s = (r.hi - r.lo) / 255.0f;
  float zero = 0.0f;
  if (s != 0.0f) {
    zero = std::nearbyint((0.0f - r.lo) / s);
    zero = zero >= 0.0f ? zero : 0.0f;
    zero = zero <= 255.0f ? zero : 255.0f;
  }
  *scale = s;
  *zero_point = static_cast<uint8_t>(zero);
  if (y == nullptr) return;
  if (s == 0.0f) {
    ParallelPieces(n, [&](int64_t begin, int64_t len) {
      for (int64_t i = 0; i < len; ++i) y[begin + i] = 0;
    });
    return;
  }
  ParallelPieces(n, [&](int64_t begin, int64_t len) { QuantizeRunU8(x + begin, y + begin, len, s, zero); });
}

}  // namespace aic::cpu::kernels

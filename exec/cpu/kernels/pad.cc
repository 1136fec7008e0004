#include "exec/cpu/kernels/pad.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

std::optional<PadPlan> MakePadPlan(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& pads,
                                   const std::string& mode, float value) {
  size_t rank = in_dims.size();
  if (pads.size() != 2 * rank || rank == 0) return std::nullopt;
  if (mode != "constant" && mode != "reflect" && mode != "edge") return std::nullopt;
  PadPlan p;
  p.in_dims = in_dims;
  p.value = value;
  for (size_t a = 0; a < rank; ++a) {
    int64_t n = in_dims[a], begin = pads[a], end = pads[a + rank];
    int64_t out = n + begin + end;
    if (out < 0 || n == 0) return std::nullopt;
    bool pads_here = begin > 0 || end > 0;
    if (mode == "reflect" && pads_here && (n < 2 || begin >= n || end >= n)) return std::nullopt;
    std::vector<int64_t> map(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      int64_t i = o - begin;
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          i = -1;
        } else if (mode == "edge") {
          i = i < 0 ? 0 : n - 1;
        } else {
          i = i < 0 ? -i : 2 * (n - 1) - i;
        }
      }
      map[static_cast<size_t>(o)] = i;
    }
    p.out_dims.push_back(out);
    p.maps.push_back(std::move(map));
  }
  return p;
}

void PadF32(const PadPlan& p, const float* x, float* y) {
  size_t rank = p.in_dims.size();
  int64_t inner_out = p.out_dims[rank - 1], inner_in = p.in_dims[rank - 1];
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < rank; ++a) rows *= p.out_dims[a];
  if (rows * inner_out == 0) return;
  const std::vector<int64_t>& last = p.maps[rank - 1];
  // The longest contiguous run of the innermost map: out [lo, hi) reads in
  // [last[lo], ...) as one copy. (Taking the first run read edge and
  // reflect rows element by element: their map starts 0, 0, 0, 1, ...)
  int64_t lo = 0, hi = 0;
  for (int64_t j = 0; j < inner_out;) {
    if (last[j] < 0) {
      ++j;
      continue;
    }
    int64_t k = j + 1;
    while (k < inner_out && last[k] == last[k - 1] + 1) ++k;
    if (k - j > hi - lo) lo = j, hi = k;
    j = k;
  }
  // Rows in chunks; within a chunk the outer index advances like an odometer
  // (no division per row).
  constexpr int64_t kRowsPerChunk = 64;
  int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  size_t outer = rank - 1;
  ParallelFor(chunks, kRowsPerChunk * inner_out, [&](int64_t chunk) {
    int64_t r0 = chunk * kRowsPerChunk, r1 = std::min(rows, r0 + kRowsPerChunk);
    std::vector<int64_t> idx(outer);
    for (size_t a = outer, rest = static_cast<size_t>(r0); a-- > 0;) {
      idx[a] = static_cast<int64_t>(rest % static_cast<size_t>(p.out_dims[a]));
      rest /= static_cast<size_t>(p.out_dims[a]);
    }
    for (int64_t r = r0; r < r1; ++r) {
      float* out = y + r * inner_out;
      int64_t offset = 0, stride = inner_in;
      bool outside = false;
      for (size_t a = outer; a-- > 0;) {
        int64_t i = p.maps[a][static_cast<size_t>(idx[a])];
        outside = outside || i < 0;
        offset += i * stride;
        stride *= p.in_dims[a];
      }
      if (outside) {
        std::fill(out, out + inner_out, p.value);
      } else {
        const float* in = x + offset;
        for (int64_t j = 0; j < lo; ++j) out[j] = last[j] < 0 ? p.value : in[last[j]];
        if (hi > lo) std::memcpy(out + lo, in + last[lo], static_cast<size_t>(hi - lo) * sizeof(float));
        for (int64_t j = hi; j < inner_out; ++j) out[j] = last[j] < 0 ? p.value : in[last[j]];
      }
      for (size_t a = outer; a-- > 0;) {  // next row
        if (++idx[a] < p.out_dims[a]) break;
        idx[a] = 0;
      }
    }
  });
}

}  // namespace aic::cpu::kernels

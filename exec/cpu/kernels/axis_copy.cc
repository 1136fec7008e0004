// Runs are copied whole when there are enough of them to share out; a few
// long runs (a channel concat of two [1,64,56,56] maps is two 800 KB runs)
// are cut into pieces so every thread copies.
#include "exec/cpu/kernels/axis_copy.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kPieceBytes = 64 * 1024;

// One run: an element or two as register moves, longer runs by memcpy. A
// concat of many one-column parts (skl2onnx's PolynomialFeatures: 91 parts
// of [256, 1]) is all 4-byte runs, where a memcpy call each took 6 ns.
inline void CopyRun(char* d, const char* s, int64_t bytes) {
  switch (bytes) {
    case 1: std::memcpy(d, s, 1); return;
    case 2: std::memcpy(d, s, 2); return;
    case 4: std::memcpy(d, s, 4); return;
    case 8: std::memcpy(d, s, 8); return;
    case 16: std::memcpy(d, s, 16); return;
    default: std::memcpy(d, s, static_cast<size_t>(bytes));
  }
}

// For each (outer o, part p): copy part_bytes[p] from src(o, p) to dst(o, p).
template <typename Src, typename Dst>
void CopyRuns(const AxisParts& parts, Src src, Dst dst) {
  auto count = static_cast<int64_t>(parts.part_bytes.size());
  int64_t runs = parts.outer * count;
  int64_t per_run = runs > 0 ? parts.row_bytes * parts.outer / runs : 0;
  int threads = omp_get_max_threads();
  if (parts.outer >= 4 * threads || threads <= 1) {
    // Whole rows (every part of an outer index) per task, several rows when
    // they are short: the loop walks o and p without dividing a run index,
    // which cost as much as a short run's memcpy (a last-axis Concat of two
    // [1,12,128,64] halves, 128-byte runs: 0.62x the time of one task per
    // run, alternating `aic-onnx bench` runs; f32 0.85x).
    int64_t rows_per_task = std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(1, parts.row_bytes));
    int64_t tasks = (parts.outer + rows_per_task - 1) / rows_per_task;
    ParallelFor(tasks, rows_per_task * parts.row_bytes / 4, [&](int64_t t) {
      int64_t end = std::min(parts.outer, (t + 1) * rows_per_task);
      for (int64_t o = t * rows_per_task; o < end; ++o) {
        for (int64_t p = 0; p < count; ++p) {
          char* d = dst(o, p);
          if (d != nullptr) CopyRun(d, src(o, p), parts.part_bytes[p]);
        }
      }
    });
    return;
  }
  if (runs >= 4 * threads || per_run <= kPieceBytes) {
    ParallelFor(runs, per_run / 4, [&](int64_t r) {
      int64_t o = r / count, p = r % count;
      char* d = dst(o, p);
      if (d != nullptr) CopyRun(d, src(o, p), parts.part_bytes[p]);
    });
    return;
  }
  int64_t pieces = (per_run + kPieceBytes - 1) / kPieceBytes;
  ParallelFor(runs * pieces, kPieceBytes / 4, [&](int64_t t) {
    int64_t r = t / pieces, piece = t % pieces;
    int64_t o = r / count, p = r % count;
    int64_t bytes = parts.part_bytes[p];
    int64_t begin = piece * ((bytes + pieces - 1) / pieces);
    int64_t end = begin + (bytes + pieces - 1) / pieces;
    if (end > bytes) end = bytes;
    char* d = dst(o, p);
    if (d != nullptr && begin < end) std::memcpy(d + begin, src(o, p) + begin, static_cast<size_t>(end - begin));
  });
}
}  // namespace

void ConcatParts(const AxisParts& parts, const void* const* in, void* out) {
  char* base = static_cast<char*>(out);
  CopyRuns(
      parts, [&](int64_t o, int64_t p) { return static_cast<const char*>(in[p]) + o * parts.part_bytes[p]; },
      [&](int64_t o, int64_t p) { return base + o * parts.row_bytes + parts.part_offset[p]; });
}

void SplitParts(const AxisParts& parts, const void* in, void* const* out) {
  const char* base = static_cast<const char*>(in);
  CopyRuns(
      parts, [&](int64_t o, int64_t p) { return base + o * parts.row_bytes + parts.part_offset[p]; },
      [&](int64_t o, int64_t p) {
        return out[p] == nullptr ? nullptr : static_cast<char*>(out[p]) + o * parts.part_bytes[p];
      });
}

}  // namespace aic::cpu::kernels

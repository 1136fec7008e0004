// How our kernels use threads: OpenMP, the runtime oneDNN runs on, so the
// count set by SetCpuThreads (--threads) governs both; work below a size
// threshold stays on the calling thread (waking a worker costs microseconds,
// more than a small kernel takes). AIC_KERNEL_CLONES compiles a hot loop for
// AVX-512, AVX2 and baseline x86-64 and picks one at load time, so the build
// needs no -march and the binary runs on any x86-64.
#pragma once

#include <omp.h>

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AIC_KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// For loops that need AVX-512's DQ/BW/VL parts (a float to int64 conversion
// is one instruction with DQ, a scalar loop without). Not the default: the
// x86-64-v4 clones of all kernels made a step-2 Slice twice as slow.
#define AIC_KERNEL_CLONES_V4 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define AIC_KERNEL_CLONES
#define AIC_KERNEL_CLONES_V4
#endif

namespace aic::cpu::kernels {

// Elements (or comparable units of work) below which a kernel runs serially.
// Small, because what costs is a worker that fell asleep: when its spin was
// about 10 µs (threading.cc; ~30 ms since), a serial step longer than that
// made the next oneDNN primitive (which always runs on every thread) pay its
// wake-up. Measured with that short spin; with
// 2^18 here, the many serial 30K-150K element steps of a QDQ model cost more
// than the second thread gained: bert_small int8 ran 10.8 ms on 2 threads
// against 4.2 on one, mobilenet_v3_large int8 16 against 7.4. Measured
// (`aic-onnx bench M --threads 2`, medians, one sitting; the 2^18 column from
// run_zoo.py the same hour):
//   threshold       2^18   2^16   2^14   2^12
//   bert int8       10.8    7.3    2.9    2.7 ms
//   vit_tiny int8   25      17     10.2   9.3
//   mobilenet int8  16      13.4   10.0   9.5
//   mobilenet fp32   3.8    3.0    3.8    3.3
inline constexpr int64_t kMinParallelWork = int64_t{1} << 12;

// f(i) for i in [0, items); split across threads when items * work_per_item
// is worth it.
template <typename F>
void ParallelFor(int64_t items, int64_t work_per_item, F&& f) {
  if (items <= 1 || items * work_per_item < kMinParallelWork || omp_get_max_threads() <= 1) {
    for (int64_t i = 0; i < items; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < items; ++i) f(i);
}

// f(begin, length) over [0, n) cut into pieces of 8192 elements, split across
// threads when n is large: the driver of the elementwise row kernels.
template <typename F>
void ParallelPieces(int64_t n, F&& f) {
  constexpr int64_t kPiece = 8192;
  ParallelFor((n + kPiece - 1) / kPiece, kPiece, [&](int64_t p) {
    int64_t begin = p * kPiece;
    f(begin, n - begin < kPiece ? n - begin : kPiece);
  });
}

// The number of pieces to cut `rows` rows of `work_per_row` into so every
// thread gets some when the work is big enough (1 when it is not).
inline int64_t PiecesPerRow(int64_t rows, int64_t work_per_row) {
  int threads = omp_get_max_threads();
  if (threads <= 1 || rows * work_per_row < kMinParallelWork || rows >= 4 * threads) return 1;
  int64_t want = (4 * threads + rows - 1) / rows;
  int64_t most = work_per_row / 1024;  // pieces of at least 1K elements
  return most < 1 ? 1 : (want < most ? want : most);
}

}  // namespace aic::cpu::kernels

// Large unary passes: y = f(x) for the elementwise ops oneDNN's eltwise ran
// at 1.1-1.26x ONNX Runtime's time on [8, 512, 768] (12 MiB each way) on a
// Zen 4 (bench/OPS.md): ReLU, LeakyRelu, Abs, Neg, Clip, each keeping NaN.
// Streamed (streaming_stores.h says why a store may be) only where input and
// output together exceed what a 32 MiB last-level cache holds: at 12 MiB
// each way both stay in it from one run to the next (and for the op after
// it), and streaming the output to memory halved the 2-thread speed (0.45 ms
// against 0.22 stored plainly).
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

enum class LargeUnaryKind { kRelu, kLeakyRelu, kAbs, kNeg, kClip };
struct LargeUnary {
  LargeUnaryKind kind = LargeUnaryKind::kRelu;
  float a = 0, b = 0;  // kLeakyRelu: the slope below 0 (a); kClip: the bounds [a, b]
};

// Outputs for which the lowering takes the pass (smaller ones stay with
// oneDNN, whose eltwise is as fast there), and from which it streams.
inline constexpr int64_t kLargeUnaryMinBytes = int64_t{4} << 20;
inline constexpr int64_t kStreamingUnaryMinBytes = int64_t{16} << 20;

// Whether this CPU runs the pass (AVX-512F, or AVX2 with FMA).
bool HaveLargeUnary();

// Whether a pass over n floats streams its output: from
// kStreamingUnaryMinBytes of it (below, a streamed 12 MiB output ran the
// 2-thread pass at its 1-thread speed, 0.45 ms against 0.23 stored plainly).
bool LargeUnaryStreams(int64_t n);

// y[i] = f(x[i]), i < n, over all threads; y may be x. Streaming stores
// where LargeUnaryStreams(n).
void LargeUnaryF32(const LargeUnary& op, const float* x, float* y, int64_t n);

// The same on the calling thread, stored plainly: one run of a larger pass
// (a half tensor's, kernels::ForEachHalfRun). Any length, any alignment.
void UnaryRunF32(const LargeUnary& op, const float* x, float* y, int64_t n);

}  // namespace aic::cpu::kernels

// Same-shaped f32 Add/Sub/Mul/Div/Max/Min whose operands and output are too
// large for the caches together, written with streaming (non-temporal)
// stores. A plain store to a line not in cache first reads it (the
// write-allocate): on this machine a [8, 512, 768] Add (38 MB moved, the L3
// holds 32) took 1.2-1.3 ms with plain AVX-512 stores and 0.67-0.73 ms
// streaming (oneDNN 2.6's binary 1.1-1.4, ONNX Runtime's 0.93). Where the
// output would stay in cache, streaming it to memory is slower: Gather rows
// of a few hot embedding rows into 12 MB took 0.33 ms copied, 0.47 streamed.
#pragma once

#include <cstdint>
#include <string>

namespace aic::cpu::kernels {

enum class StreamingOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

// The op for ONNX op type `op`; false for another op.
bool StreamingOpOf(const std::string& op, StreamingOp* out);

// Whether this CPU runs the kernels below (AVX-512F, or AVX2 with FMA).
bool HaveStreamingStores();

// Outputs from which a binary op streams: with its two operands, 24 MiB or
// more moved, what a 32 MiB last-level cache shared by the cores does not
// keep; the next op reads the result back from memory either way.
inline constexpr int64_t kStreamingMinBytes = int64_t{8} << 20;

// y[i] = a[i] op b[i], i < n, over all threads; y may be a or b.
void StreamingBinaryF32(StreamingOp op, const float* a, const float* b, float* y, int64_t n);

}  // namespace aic::cpu::kernels

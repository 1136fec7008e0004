// RotaryEmbedding (RoPE) on f32: within each head vector of `head` floats the
// first `rot` features form rot/2 pairs (x1, x2), either the two halves of
// those features or (interleaved) neighbours, and each pair is rotated by its
// token's angle: (x1, x2) -> (x1·cos − x2·sin, x1·sin + x2·cos); the other
// head − rot features are copied.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

struct RotaryShape {
  int64_t batch = 0, seq = 0, heads = 0, head = 0;
  int64_t rot = 0;           // rotated features per head: even, at most head
  bool interleaved = false;  // pairs (2k, 2k+1) rather than (k, k + rot/2)
  // true: x is [batch, heads, seq, head]; false: [batch, seq, heads·head].
  bool heads_first = true;
};

// x, y: the shape's elements (y may equal x). cos, sin: rows of rot/2
// floats; token (b, s) reads row positions[b·seq + s] when positions is
// given (each already checked to be a row of the caches), else row b·seq + s.
// Head vectors are spread over threads.
void RotaryEmbeddingF32(const float* x, const float* cos, const float* sin, const int64_t* positions, float* y,
                        const RotaryShape& shape);

// The same over float16 x and y (their bits), f32 caches: each head vector
// widened, rotated, rounded back to half; what Cast -> the f32 kernel ->
// Cast computes, without the two f32 tensors between.
void RotaryEmbeddingHalf(const uint16_t* x, const float* cos, const float* sin, const int64_t* positions, uint16_t* y,
                         const RotaryShape& shape);

}  // namespace aic::cpu::kernels

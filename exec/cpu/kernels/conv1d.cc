#include "exec/cpu/kernels/conv1d.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kChannels = 4;     // output channels per block
constexpr int64_t kPositions = 24;   // three 8-float vectors
constexpr int64_t kChunk = 64 * kPositions;  // positions per task

}  // namespace

bool Conv1dAvailable() { return avx2::HaveAvx2Fma(); }

std::vector<float> PackConv1dWeights(const float* w, const Conv1dGeometry& g) {
  const int64_t blocks = (g.out_c + kChannels - 1) / kChannels;
  std::vector<float> p(static_cast<size_t>(blocks * g.in_c * g.kernel * kChannels), 0.0f);
  for (int64_t o = 0; o < g.out_c; ++o) {
    for (int64_t c = 0; c < g.in_c; ++c) {
      for (int64_t t = 0; t < g.kernel; ++t) {
        p[static_cast<size_t>((((o / kChannels) * g.in_c + c) * g.kernel + t) * kChannels + o % kChannels)] =
            w[(o * g.in_c + c) * g.kernel + t];
      }
    }
  }
  return p;
}

#ifdef AIC_HAVE_AVX2_MATH

namespace {

// One block: 4 channels (from `wb`) by 24 positions starting at `xp`'s
// column 0 of each padded input row (`stride` floats apart), into out[4][24].
// Twelve named accumulators: as an array, GCC kept them in memory.
AIC_AVX2 void Block(const float* xp, int64_t stride, const float* wb, const Conv1dGeometry& g, float* out) {
  __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
  __m256 a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
  const int64_t kernel = g.kernel, dilation = g.dilation;
  for (int64_t c = 0; c < g.in_c; ++c) {
    const float* xr = xp + c * stride;
    const float* wt = wb + c * kernel * kChannels;
    for (int64_t t = 0; t < kernel; ++t, wt += kChannels) {
      const float* xt = xr + t * dilation;
      const __m256 v0 = _mm256_loadu_ps(xt), v1 = _mm256_loadu_ps(xt + 8), v2 = _mm256_loadu_ps(xt + 16);
      // Output channel j of the block: its weight for (c, t) times the 24 positions.
#define AIC_CONV1D_CHANNEL(j)                        \
  {                                                  \
    const __m256 w = _mm256_broadcast_ss(wt + j);    \
    a##j##0 = _mm256_fmadd_ps(w, v0, a##j##0);       \
    a##j##1 = _mm256_fmadd_ps(w, v1, a##j##1);       \
    a##j##2 = _mm256_fmadd_ps(w, v2, a##j##2);       \
  }
      AIC_CONV1D_CHANNEL(0)
      AIC_CONV1D_CHANNEL(1)
      AIC_CONV1D_CHANNEL(2)
      AIC_CONV1D_CHANNEL(3)
#undef AIC_CONV1D_CHANNEL
    }
  }
  _mm256_storeu_ps(out, a00);
  _mm256_storeu_ps(out + 8, a01);
  _mm256_storeu_ps(out + 16, a02);
  _mm256_storeu_ps(out + kPositions, a10);
  _mm256_storeu_ps(out + kPositions + 8, a11);
  _mm256_storeu_ps(out + kPositions + 16, a12);
  _mm256_storeu_ps(out + 2 * kPositions, a20);
  _mm256_storeu_ps(out + 2 * kPositions + 8, a21);
  _mm256_storeu_ps(out + 2 * kPositions + 16, a22);
  _mm256_storeu_ps(out + 3 * kPositions, a30);
  _mm256_storeu_ps(out + 3 * kPositions + 8, a31);
  _mm256_storeu_ps(out + 3 * kPositions + 16, a32);
}

AIC_AVX2 void Run(const float* x, const float* packed_w, const float* b, float* y, const Conv1dGeometry& g) {
  const int64_t blocks = (g.out_c + kChannels - 1) / kChannels;
  const int64_t span = (g.kernel - 1) * g.dilation;
  const int64_t padded_out = (g.out_len + kPositions - 1) / kPositions * kPositions;
  const int64_t stride = padded_out + span;  // a padded input row: every load of every block in range
  std::vector<float> xp(static_cast<size_t>(g.in_c * stride));
  const int64_t chunks = (g.out_len + kChunk - 1) / kChunk;
  for (int64_t n = 0; n < g.batch; ++n) {
    const float* xn = x + n * g.in_c * g.in_len;
    float* yn = y + n * g.out_c * g.out_len;
    // xp[c][j] = x[c][j - pad_left], zero outside.
    for (int64_t c = 0; c < g.in_c; ++c) {
      float* row = xp.data() + c * stride;
      std::fill(row, row + stride, 0.0f);
      const int64_t first = std::max<int64_t>(0, g.pad_left), src = std::max<int64_t>(0, -g.pad_left);
      const int64_t count = std::min(g.in_len - src, stride - first);
      if (count > 0) std::memcpy(row + first, xn + c * g.in_len + src, static_cast<size_t>(count) * sizeof(float));
    }
    ParallelFor(blocks * chunks, g.in_c * g.kernel * kChunk * kChannels, [&](int64_t item) {
      const int64_t blk = item / chunks, chunk = item % chunks;
      const float* wb = packed_w + blk * g.in_c * g.kernel * kChannels;
      alignas(32) float out[kChannels * kPositions];
      const int64_t end = std::min(g.out_len, (chunk + 1) * kChunk);
      for (int64_t l = chunk * kChunk; l < end; l += kPositions) {
        Block(xp.data() + l, stride, wb, g, out);
        const int64_t valid = std::min(kPositions, g.out_len - l);
        for (int64_t j = 0; j < kChannels; ++j) {
          const int64_t o = blk * kChannels + j;
          if (o >= g.out_c) break;
          const float bias = b != nullptr ? b[o] : 0.0f;
          float* dst = yn + o * g.out_len + l;
          for (int64_t p = 0; p < valid; ++p) dst[p] = out[j * kPositions + p] + bias;
        }
      }
    });
  }
}

}  // namespace

void Conv1dF32(const float* x, const float* packed_w, const float* b, float* y, const Conv1dGeometry& g) {
  Run(x, packed_w, b, y, g);
}

#else

void Conv1dF32(const float*, const float*, const float*, float*, const Conv1dGeometry&) {}

#endif

}  // namespace aic::cpu::kernels

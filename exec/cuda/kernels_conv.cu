// Convolution without cuDNN as an implicit GEMM (per group: out[k, col] =
// Σ_r W[k, r] · im2col(x)[r, col] with r = (c, ky, kx) and col = (n, oy, ox),
// the im2col operand gathered into shared memory tile by tile, never stored)
// and 2-D pooling. cuDNN remains the fast path.
#include <cuda_runtime.h>

#include <cfloat>

#include "exec/cuda/kernels.h"

namespace aic::cuda {

namespace {

constexpr int kThreads = 256;

constexpr int kTile = 32;   // output channels x output columns per block
constexpr int kSlice = 16;  // reduction step

// 16x16 threads, each computing 2x2 outputs of a 32x32 tile.
__global__ void ConvImplicitGemmKernel(ConvDesc d, const float* __restrict__ x, const float* __restrict__ w,
                                       float* __restrict__ y) {
  __shared__ float as[kSlice][kTile];  // weights [r][k]
  __shared__ float bs[kSlice][kTile];  // im2col [r][col]
  const int64_t g = blockIdx.z, cg = d.c / d.groups, kg = d.k / d.groups;
  const int64_t red = cg * d.kh * d.kw, cols = d.n * d.oh * d.ow;
  const int64_t k0 = int64_t{blockIdx.y} * kTile, col0 = int64_t{blockIdx.x} * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  float acc[2][2] = {{0, 0}, {0, 0}};
  for (int64_t r0 = 0; r0 < red; r0 += kSlice) {
    for (int i = tid; i < kSlice * kTile; i += 256) {
      int rr = i / kTile, jj = i % kTile;
      int64_t r = r0 + rr, k = k0 + jj, col = col0 + jj;
      as[rr][jj] = (r < red && k < kg) ? w[(g * kg + k) * red + r] : 0.0f;
      float v = 0.0f;
      if (r < red && col < cols) {
        int64_t kx = r % d.kw, ky = (r / d.kw) % d.kh, c = r / (d.kw * d.kh);
        int64_t ox = col % d.ow, oy = (col / d.ow) % d.oh, n = col / (d.ow * d.oh);
        int64_t iy = oy * d.sh - d.ph + ky * d.dh, ix = ox * d.sw - d.pw + kx * d.dw;
        if (iy >= 0 && iy < d.h && ix >= 0 && ix < d.w) v = x[((n * d.c + g * cg + c) * d.h + iy) * d.w + ix];
      }
      bs[rr][jj] = v;
    }
    __syncthreads();
    for (int rr = 0; rr < kSlice; ++rr) {
      float a0 = as[rr][ty * 2], a1 = as[rr][ty * 2 + 1], b0 = bs[rr][tx * 2], b1 = bs[rr][tx * 2 + 1];
      acc[0][0] += a0 * b0;
      acc[0][1] += a0 * b1;
      acc[1][0] += a1 * b0;
      acc[1][1] += a1 * b1;
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      int64_t k = k0 + ty * 2 + i, col = col0 + tx * 2 + j;
      if (k >= kg || col >= cols) continue;
      int64_t ox = col % d.ow, oy = (col / d.ow) % d.oh, n = col / (d.ow * d.oh);
      y[((n * d.k + g * kg + k) * d.oh + oy) * d.ow + ox] = acc[i][j];
    }
  }
}

__global__ void PoolKernel(PoolDesc d, const float* __restrict__ x, float* __restrict__ y) {
  int64_t total = d.n * d.c * d.oh * d.ow;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t ox = i % d.ow, oy = (i / d.ow) % d.oh, nc = i / (d.ow * d.oh);
    const float* xc = x + nc * d.h * d.w;
    float acc = d.max ? -FLT_MAX : 0.0f;
    int64_t cnt = 0;
    for (int64_t ky = 0; ky < d.kh; ++ky) {
      int64_t iy = oy * d.sh - d.ph + ky;
      for (int64_t kx = 0; kx < d.kw; ++kx) {
        int64_t ix = ox * d.sw - d.pw + kx;
        bool inside = iy >= 0 && iy < d.h && ix >= 0 && ix < d.w;
        if (inside) {
          float v = xc[iy * d.w + ix];
          acc = d.max ? fmaxf(acc, v) : acc + v;
          ++cnt;
        } else if (d.count_include_pad && iy < d.h + d.ph && ix < d.w + d.pw) {
          ++cnt;
        }
      }
    }
    y[i] = d.max ? acc : acc / static_cast<float>(cnt > 0 ? cnt : 1);
  }
}

int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

}  // namespace

int LaunchConvImplicitGemm(const ConvDesc& d, const float* x, const float* w, float* y, Stream stream) {
  int64_t cols = d.n * d.oh * d.ow, kg = d.k / d.groups;
  if (cols == 0 || kg == 0) return 0;
  dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((kg + kTile - 1) / kTile),
            static_cast<unsigned>(d.groups));
  ConvImplicitGemmKernel<<<grid, dim3(16, 16), 0, stream>>>(d, x, w, y);
  return static_cast<int>(cudaGetLastError());
}

int LaunchPool(const PoolDesc& d, const float* x, float* y, Stream stream) {
  int64_t total = d.n * d.c * d.oh * d.ow;
  if (total == 0) return 0;
  PoolKernel<<<Blocks(total), kThreads, 0, stream>>>(d, x, y);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace aic::cuda

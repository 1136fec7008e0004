// Row kernels: softmax and layer normalization (one block per row, two-pass
// with block reductions in shared memory) and reductions (one warp per
// output element).
#include <cuda_runtime.h>

#include <cfloat>

#include "exec/cuda/kernels.h"

namespace aic::cuda {

namespace {

constexpr int kRowThreads = 256;

// Threads for a row of n: whole warps, no more than the row needs (short attention rows).
unsigned RowThreads(int64_t n) {
  int64_t t = (n + 31) / 32 * 32;
  return static_cast<unsigned>(t < 32 ? 32 : (t > kRowThreads ? kRowThreads : t));
}

__device__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float WarpMin(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide sum or max; every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float v, float* shared) {
  v = kMax ? WarpMax(v) : WarpSum(v);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) / 32;
  float r = threadIdx.x < warps ? shared[threadIdx.x] : (kMax ? -FLT_MAX : 0.0f);
  if (warp == 0) {
    r = kMax ? WarpMax(r) : WarpSum(r);
    if (lane == 0) shared[0] = r;
  }
  __syncthreads();
  return shared[0];
}

// One block per (outer, inner) row of length n, elements `inner` apart.
__global__ void SoftmaxKernel(SoftmaxDesc d, const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float shared[32];
  int64_t row = blockIdx.x;
  int64_t o = row / d.inner, i = row % d.inner;
  const float* x = in + o * d.n * d.inner + i;
  float* y = out + o * d.n * d.inner + i;
  float m = -FLT_MAX;
  for (int64_t j = threadIdx.x; j < d.n; j += blockDim.x) m = fmaxf(m, x[j * d.inner]);
  m = BlockReduce<true>(m, shared);
  float s = 0;
  for (int64_t j = threadIdx.x; j < d.n; j += blockDim.x) s += expf(x[j * d.inner] - m);
  s = BlockReduce<false>(s, shared);
  if (d.log) {
    float ls = logf(s);
    for (int64_t j = threadIdx.x; j < d.n; j += blockDim.x) y[j * d.inner] = x[j * d.inner] - m - ls;
  } else {
    float inv = 1.0f / s;
    for (int64_t j = threadIdx.x; j < d.n; j += blockDim.x) y[j * d.inner] = expf(x[j * d.inner] - m) * inv;
  }
}

__global__ void LayerNormKernel(LayerNormDesc d, const float* __restrict__ in, const float* __restrict__ scale,
                                const float* __restrict__ bias, float* __restrict__ out) {
  __shared__ float shared[32];
  const float* x = in + blockIdx.x * d.cols;
  float* y = out + blockIdx.x * d.cols;
  float s = 0;
  for (int64_t j = threadIdx.x; j < d.cols; j += blockDim.x) s += x[j];
  float mean = BlockReduce<false>(s, shared) / static_cast<float>(d.cols);
  float v = 0;
  for (int64_t j = threadIdx.x; j < d.cols; j += blockDim.x) {
    float c = x[j] - mean;
    v += c * c;
  }
  float inv = rsqrtf(BlockReduce<false>(v, shared) / static_cast<float>(d.cols) + d.epsilon);
  for (int64_t j = threadIdx.x; j < d.cols; j += blockDim.x) {
    float r = (x[j] - mean) * inv * scale[j];
    y[j] = d.has_bias ? r + bias[j] : r;
  }
}

// One warp per output element.
__global__ void ReduceKernel(ReduceDesc d, const float* __restrict__ in, float* __restrict__ out) {
  int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= d.out_count) return;
  int64_t base = 0, rem = warp;
  for (int k = d.out_rank - 1; k >= 0; --k) {
    base += (rem % d.out_dims[k]) * d.out_in_strides[k];
    rem /= d.out_dims[k];
  }
  bool is_max = d.op == ReduceOp::kMax, is_min = d.op == ReduceOp::kMin;
  float acc = is_max ? -INFINITY : (is_min ? INFINITY : 0.0f);
  for (int64_t r = lane; r < d.red_count; r += 32) {
    int64_t off = base, q = r;
    for (int k = d.red_rank - 1; k >= 0; --k) {
      off += (q % d.red_dims[k]) * d.red_strides[k];
      q /= d.red_dims[k];
    }
    float v = in[off];
    acc = is_max ? fmaxf(acc, v) : (is_min ? fminf(acc, v) : acc + v);
  }
  acc = is_max ? WarpMax(acc) : (is_min ? WarpMin(acc) : WarpSum(acc));
  if (lane == 0) out[warp] = d.op == ReduceOp::kMean ? acc / static_cast<float>(d.red_count) : acc;
}

}  // namespace

int LaunchSoftmax(const SoftmaxDesc& d, const float* in, float* out, Stream stream) {
  int64_t rows = d.outer * d.inner;
  if (rows == 0 || d.n == 0) return 0;
  SoftmaxKernel<<<static_cast<unsigned>(rows), RowThreads(d.n), 0, stream>>>(d, in, out);
  return static_cast<int>(cudaGetLastError());
}

int LaunchLayerNorm(const LayerNormDesc& d, const float* in, const float* scale, const float* bias, float* out,
                    Stream stream) {
  if (d.rows == 0 || d.cols == 0) return 0;
  LayerNormKernel<<<static_cast<unsigned>(d.rows), RowThreads(d.cols), 0, stream>>>(d, in, scale, bias, out);
  return static_cast<int>(cudaGetLastError());
}

int LaunchReduce(const ReduceDesc& d, const float* in, float* out, Stream stream) {
  if (d.out_count == 0) return 0;
  int64_t threads = d.out_count * 32;
  ReduceKernel<<<static_cast<unsigned>((threads + kRowThreads - 1) / kRowThreads), kRowThreads, 0, stream>>>(d, in,
                                                                                                             out);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace aic::cuda

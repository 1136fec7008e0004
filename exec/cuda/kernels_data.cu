// Elementwise programs over one broadcast driver, strided copies (transpose,
// slice, concat, expand) and gather: the memory-bound kernels, each a grid-
// stride loop over output elements with the index math of kernels.h.
#include <cuda_runtime.h>

#include "exec/cuda/elt_ops.h"
#include "exec/cuda/kernels.h"

namespace aic::cuda {

namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

__global__ void EltwiseKernel(EltProgram p, const float* __restrict__ in0, const float* __restrict__ in1,
                              const float* __restrict__ in2, const float* __restrict__ in3, float* out) {
  const float* ins[kMaxEltInputs] = {in0, in1, in2, in3};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < p.count; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t off[kMaxEltInputs] = {0, 0, 0, 0};
    int64_t rem = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      int64_t idx = rem % p.dims[d];
      rem /= p.dims[d];
      for (int j = 0; j < p.n_inputs; ++j) off[j] += idx * p.strides[j][d];
    }
    out[i] = EltApply(p, [&](int j) { return ins[j][off[j]]; });
  }
}

template <typename T>
__global__ void StridedCopyKernel(StridedCopy c, const T* __restrict__ in, T* __restrict__ out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < c.count; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rem = i, src = c.in_offset, dst = c.out_offset;
    for (int d = c.rank - 1; d >= 0; --d) {
      int64_t idx = rem % c.dims[d];
      rem /= c.dims[d];
      src += idx * c.in_strides[d];
      dst += idx * c.out_strides[d];
    }
    out[dst] = in[src];
  }
}

template <typename T, typename I>
__global__ void GatherKernel(GatherDesc g, const T* __restrict__ data, const I* __restrict__ idx, T* out) {
  int64_t total = g.outer * g.n_indices * g.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t in = i % g.inner;
    int64_t j = (i / g.inner) % g.n_indices;
    int64_t o = i / (g.inner * g.n_indices);
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += g.axis_dim;
    // Out-of-range indices are an error in ONNX; a kernel cannot return one,
    // so they read row 0 (docs/CUDA.md).
    if (k < 0 || k >= g.axis_dim) k = 0;
    out[i] = data[(o * g.axis_dim + k) * g.inner + in];
  }
}

template <typename T>
int CopyAs(const StridedCopy& c, const void* in, void* out, Stream s) {
  StridedCopyKernel<T><<<Blocks(c.count), kThreads, 0, s>>>(c, static_cast<const T*>(in), static_cast<T*>(out));
  return static_cast<int>(cudaGetLastError());
}

template <typename T>
int GatherAs(const GatherDesc& g, const void* data, const void* idx, void* out, Stream s) {
  int64_t total = g.outer * g.n_indices * g.inner;
  if (g.indices_int64) {
    GatherKernel<T, int64_t><<<Blocks(total), kThreads, 0, s>>>(g, static_cast<const T*>(data),
                                                                static_cast<const int64_t*>(idx), static_cast<T*>(out));
  } else {
    GatherKernel<T, int32_t><<<Blocks(total), kThreads, 0, s>>>(g, static_cast<const T*>(data),
                                                                static_cast<const int32_t*>(idx), static_cast<T*>(out));
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int LaunchEltwise(const EltProgram& p, const float* const* inputs, float* out, Stream stream) {
  if (p.count == 0) return 0;
  const float* in[kMaxEltInputs] = {nullptr, nullptr, nullptr, nullptr};
  for (int j = 0; j < p.n_inputs; ++j) in[j] = inputs[j];
  EltwiseKernel<<<Blocks(p.count), kThreads, 0, stream>>>(p, in[0], in[1], in[2], in[3], out);
  return static_cast<int>(cudaGetLastError());
}

int LaunchStridedCopy(const StridedCopy& c, const void* in, void* out, Stream stream) {
  if (c.count == 0) return 0;
  switch (c.elem_size) {
    case 1:
      return CopyAs<uint8_t>(c, in, out, stream);
    case 2:
      return CopyAs<uint16_t>(c, in, out, stream);
    case 4:
      return CopyAs<uint32_t>(c, in, out, stream);
    case 8:
      return CopyAs<uint64_t>(c, in, out, stream);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

int LaunchGather(const GatherDesc& g, const void* data, const void* indices, void* out, Stream stream) {
  if (g.outer * g.n_indices * g.inner == 0) return 0;
  switch (g.elem_size) {
    case 1:
      return GatherAs<uint8_t>(g, data, indices, out, stream);
    case 2:
      return GatherAs<uint16_t>(g, data, indices, out, stream);
    case 4:
      return GatherAs<uint32_t>(g, data, indices, out, stream);
    case 8:
      return GatherAs<uint64_t>(g, data, indices, out, stream);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace aic::cuda

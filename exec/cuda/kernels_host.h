// Host versions of every device kernel, over the same descriptors: the
// emulation path of Emulate() (plan.h) and the tests' oracle for the index
// math the lowering computes. Written for obviousness, not speed.
#pragma once

#include "exec/cuda/kernels.h"

namespace aic::cuda::host {

void Eltwise(const EltProgram& p, const float* const* inputs, float* out);
void StridedCopyRun(const StridedCopy& c, const void* in, void* out);
void Softmax(const SoftmaxDesc& d, const float* in, float* out);
void LayerNorm(const LayerNormDesc& d, const float* in, const float* scale, const float* bias, float* out);
void Reduce(const ReduceDesc& d, const float* in, float* out);
void Gather(const GatherDesc& d, const void* data, const void* indices, void* out);
void ConvDirect(const ConvDesc& d, const float* x, const float* w, float* y);
// The device kernel's formulation (reduction index r, column index col), for tests against ConvDirect.
void ConvImplicitGemm(const ConvDesc& d, const float* x, const float* w, float* y);
void Pool(const PoolDesc& d, const float* x, float* y);

}  // namespace aic::cuda::host

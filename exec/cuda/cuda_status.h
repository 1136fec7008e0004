// Every CUDA, cuBLASLt and cuDNN call of the backend goes through these
// checks, which turn an error code into an absl::Status naming the call, so a
// failing device call is a clean error at the command line, never an abort.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace aic::cuda {

// `code` is a cudaError_t, cublasStatus_t or cudnnStatus_t; 0 is success in all three.
absl::Status CudaStatus(int code, const char* what);
absl::Status CublasStatus(int code, const char* what);
absl::Status CudnnStatus(int code, const char* what);

// OK when a CUDA device can be used; else FailedPrecondition "no CUDA device: <why>".
absl::Status ProbeDevice();

}  // namespace aic::cuda

#define AIC_CUDA_CHECK(call) AIC_RETURN_IF_ERROR(::aic::cuda::CudaStatus(static_cast<int>(call), #call))
#define AIC_CUBLAS_CHECK(call) AIC_RETURN_IF_ERROR(::aic::cuda::CublasStatus(static_cast<int>(call), #call))
#define AIC_CUDNN_CHECK(call) AIC_RETURN_IF_ERROR(::aic::cuda::CudnnStatus(static_cast<int>(call), #call))

#include "exec/cuda/cuda_status.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#ifdef AIC_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace aic::cuda {

absl::Status CudaStatus(int code, const char* what) {
  if (code == 0) return absl::OkStatus();
  auto err = static_cast<cudaError_t>(code);
  return absl::InternalError(
      absl::StrCat("CUDA error in ", what, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

absl::Status CublasStatus(int code, const char* what) {
  if (code == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("cuBLAS error in ", what, ": ", cublasLtGetStatusName(static_cast<cublasStatus_t>(code))));
}

absl::Status CudnnStatus(int code, const char* what) {
  if (code == 0) return absl::OkStatus();
#ifdef AIC_HAVE_CUDNN
  return absl::InternalError(
      absl::StrCat("cuDNN error in ", what, ": ", cudnnGetErrorString(static_cast<cudnnStatus_t>(code))));
#else
  return absl::InternalError(absl::StrCat("cuDNN error in ", what, ": code ", code));
#endif
}

absl::Status ProbeDevice() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it, so that it does not surface at an unrelated later check
    return absl::FailedPreconditionError(absl::StrCat("no CUDA device: ", cudaGetErrorString(err)));
  }
  if (count == 0) return absl::FailedPreconditionError("no CUDA device: none found");
  return absl::OkStatus();
}

}  // namespace aic::cuda

// The CUDA executor as a backend (exec/common/executor.h), registered by the
// aic-onnx-cuda companion binary (cli/main.cc).
#pragma once

#include "exec/common/executor.h"

namespace aic::cuda {

exec::Backend CudaBackend();

}  // namespace aic::cuda

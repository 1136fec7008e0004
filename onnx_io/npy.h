// NumPy .npy files (format versions 1-3, little-endian, C order), the
// exchange format of `aic-onnx run --input/--out`.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace aic {

absl::StatusOr<Tensor> ReadNpy(const std::string& path);
absl::StatusOr<Tensor> ParseNpy(const void* data, size_t size);
// Writes atomically; bool as |b1, fp16 as <f2, strings as numpy's fixed-width
// unicode (<U<n>, read back too); bf16, float8 and the 4-bit types refused
// (numpy has no dtype for them: `aic-onnx run` writes those as TensorProto .pb).
absl::Status WriteNpy(const Tensor& t, const std::string& path);
std::string SerializeNpy(const Tensor& t);

}  // namespace aic

// NumPy .npy files (format versions 1-3, little-endian, C order), the
// exchange format of `aic-onnx run --input/--out`.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace aic {

absl::StatusOr<Tensor> ReadNpy(const std::string& path);
absl::StatusOr<Tensor> ParseNpy(const void* data, size_t size);
// Writes atomically; bool as |b1, fp16 as <f2, bf16 refused (numpy has no bf16).
absl::Status WriteNpy(const Tensor& t, const std::string& path);
std::string SerializeNpy(const Tensor& t);

}  // namespace aic

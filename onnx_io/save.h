// Saving a Model as a standard .onnx file, atomically (temporary file in the
// same folder, then rename), so a reader never sees a half-written model.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/model.h"

namespace aic {

struct SaveOptions {
  enum class ExternalData {
    kAuto,    // external only when the model would pass protobuf's 2 GB limit
    kAlways,  // `--external-data`
    kNever,
  };
  ExternalData external_data = ExternalData::kAuto;
  // File name (relative to the model's folder) for external tensors; default
  // "<model file name>.data".
  std::string external_file;
  // Tensors smaller than this stay inline even when saving externally.
  size_t min_external_bytes = 1024;
};

absl::Status SaveModel(const Model& model, const std::string& path, const SaveOptions& options = {});

// One tensor as a TensorProto file (the backend suite's input_K.pb form),
// atomically: every dtype, including those numpy has no dtype for.
absl::Status SaveTensorProto(const Tensor& t, const std::string& name, const std::string& path);

// The serialized ModelProto with every tensor inline (fails past 2 GB).
absl::StatusOr<std::string> SerializeModel(const Model& model);

}  // namespace aic

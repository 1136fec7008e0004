// Loading .onnx files into a Model.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic {

// Loads `path`. The file is memory-mapped for parsing; external-data tensors
// stay mapped (borrowed, never copied); inline raw_data bytes move from the
// parsed message into the model. Errors (InvalidArgument/NotFound) name the
// file and say what is wrong; the graph is not verified here (see Verify()).
absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path);

// Parses a serialized ModelProto. External data, if any, resolves against
// `base_dir` (empty: external data is refused).
absl::StatusOr<std::unique_ptr<Model>> LoadModelFromBytes(const void* data, size_t size,
                                                          const std::string& base_dir = "");

// Reads a serialized TensorProto file (the backend suite's input_*.pb).
absl::StatusOr<Tensor> LoadTensorProtoFile(const std::string& path);

// Reads a value file of the backend suite as the given type: TensorProto for
// tensors, SequenceProto for sequences, OptionalProto for optionals.
absl::StatusOr<RuntimeValue> LoadValueProtoFile(const std::string& path, const TypeInfo& type);

}  // namespace aic

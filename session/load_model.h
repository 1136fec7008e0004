// How every entry point opens a model: load (a file, or serialized bytes from
// the Python API), verify, infer shapes (our OpDefs first, libonnx's
// inference for what they leave unknown). Errors carry the file name (or the
// name given for bytes), ready for the one-line message of exit code 2 or a
// Python ValueError.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "graph/model.h"

namespace aic::session {

struct LoadOptions {
  bool infer_shapes = true;
};

absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModel(const std::string& path, const LoadOptions& options = {});

// `name` stands for the file in messages; external data resolves against
// `base_dir` (empty: refused).
absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModelFromBytes(std::string_view bytes, const std::string& name,
                                                                  const std::string& base_dir,
                                                                  const LoadOptions& options = {});

// Shape inference with the libonnx fallback, on an already loaded model.
void InferShapesWithFallback(Model& model);

}  // namespace aic::session

// How every subcommand opens a model: load, verify, infer shapes (our OpDefs
// first, libonnx's inference for what they leave unknown). Errors carry the
// file name, ready for the one-line message of exit code 2.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "session/session.h"

namespace aic::cli {

struct LoadOptions {
  bool infer_shapes = true;
};

absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModel(const std::string& path,
                                                         const LoadOptions& options = {});

// A session over a loaded model for `run`, `bench` and friends; errors are
// prefixed with the file name, and a rewriter failure (the session then runs
// the graph as loaded) is a warning on stderr.
absl::StatusOr<std::unique_ptr<session::Session>> OpenSession(const std::string& path, std::unique_ptr<Model> model,
                                                              const session::SessionOptions& options);

// Shape inference with the libonnx fallback, on an already loaded model.
void InferShapesWithFallback(Model& model);

}  // namespace aic::cli

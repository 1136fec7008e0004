// How every subcommand opens a model: session/load_model.h (load, verify,
// infer shapes; errors name the file), and a session over it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "session/load_model.h"
#include "session/session.h"

namespace aic::cli {

using session::InferShapesWithFallback;
using session::LoadOptions;
using session::LoadVerifiedModel;

// A session over a loaded model for `run`, `bench` and friends; errors are
// prefixed with the file name, and a rewriter failure (the session then runs
// the graph as loaded) is a warning on stderr.
absl::StatusOr<std::unique_ptr<session::Session>> OpenSession(const std::string& path, std::unique_ptr<Model> model,
                                                              const session::SessionOptions& options);

}  // namespace aic::cli

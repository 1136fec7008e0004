// Feeding a model: graph inputs from files (--input NAME=FILE) or random data
// (--random), with concrete shapes for symbolic dims (--shape NAME=D,D).
// Shared by run, bench, report (calibration) and verify.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"
#include "session/test_inputs.h"

namespace aic::cli {

struct InputOptions {
  std::vector<std::string> files;   // "NAME=PATH" (.npy or TensorProto .pb)
  std::vector<std::string> shapes;  // "NAME=D,D,.."
  bool random = false;
  uint64_t seed = 0;
};

// One value per graph input that is not an initializer default.
absl::StatusOr<std::map<std::string, RuntimeValue>> BuildFeeds(const Model& model,
                                                               const InputOptions& options);

// RandomTensorFor, RandomFeeds, RandomFeedSets, FeedsFromDir, TestShapes and
// SanitizeFileName: session/test_inputs.h.
using session::FeedsFromDir;
using session::RandomTensorFor;
using session::SanitizeFileName;

}  // namespace aic::cli

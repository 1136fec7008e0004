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

// A random tensor for a graph input of the given type (normal floats, small
// non-negative integers, random bools); symbolic dims come from `fixed` or 1.
absl::StatusOr<Tensor> RandomTensorFor(const TypeInfo& type, const std::vector<int64_t>* fixed,
                                       uint64_t seed);

// Feeds from a folder: <name>.npy (names as SanitizeFileName writes them) or
// input_<i>.pb in graph input order (the ONNX test-data layout). An input
// with an initializer default may be left out; any other missing one is
// NotFound naming the folder and the input.
absl::StatusOr<std::map<std::string, RuntimeValue>> FeedsFromDir(const Model& m, const std::string& dir);

// Test shapes for verification, "NAME=D,D,.." for every graph input with a
// symbolic dim that `given` does not cover: a realistic size for each such
// dim rather than 1 (graph/realistic_size.h's RealisticDimSize). What it picks is
// printed with the result.
std::vector<std::string> RealisticShapes(const Model& model, const std::vector<std::string>& given);

// Output names as file names: characters other than A-Za-z0-9._- become '_'.
std::string SanitizeFileName(const std::string& name);

}  // namespace aic::cli

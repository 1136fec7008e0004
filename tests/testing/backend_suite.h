// Running the ONNX backend suite's node tests the way real models are
// stored: every fed operand after the first becomes an initializer (weights,
// biases, target shapes, slice bounds), so a backend's lowerings that need
// constant operands are exercised. Shared by the CPU and CUDA backends' tests.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::testing {

// Debian's libonnx-testdata; tests skip when it is absent.
inline constexpr char kBackendNodeSuite[] = "/usr/share/libonnx-testdata/data/node";

// The suite's test folders whose names match `pattern`, sorted.
std::vector<std::filesystem::path> SuiteTestsMatching(const std::regex& pattern);

// "" when `got` meets `want` by the ONNX rule (dtype and dims equal,
// |a-b| <= 1e-7 + 1e-3|b|, NaN where NaN; strings and bools exactly), else why not.
std::string OnnxMismatch(const Tensor& got, const Tensor& want);

using RunModelFn = std::function<absl::StatusOr<std::vector<RuntimeValue>>(
    const Model& model, const std::map<std::string, RuntimeValue>& feeds)>;

// Runs every data set of the test in `dir` through `run`, with fed inputs
// beyond the first made constants; "" when every output matches, else why not.
std::string RunSuiteTestWithConstantOperands(const std::filesystem::path& dir, const RunModelFn& run);

}  // namespace aic::testing

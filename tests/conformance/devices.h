// The executors the conformance runner can judge: one entry point that runs a
// loaded model on a named device, so that a new backend is one more branch
// here (and one more allow-list), not a new runner.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::conformance {

// The device names RunOnDevice accepts, in the order the docs list them.
const std::vector<std::string>& KnownDevices();
bool IsKnownDevice(const std::string& device);

// Runs `model` once on `device` with `feeds` and returns the graph outputs.
// "reference": the reference executor; "cpu": exec/cpu's compiled plan for
// the feeds' shapes (oneDNN or native kernels where they apply, reference
// kernels elsewhere). `coverage`, when given, is set for compiling devices to
// what ran the nodes: "fast" (no reference kernel), "mixed", "reference"
// (reference kernels only) or "folded" (computed at compile time).
absl::StatusOr<std::vector<RuntimeValue>> RunOnDevice(const std::string& device, const Model& model,
                                                      const std::map<std::string, RuntimeValue>& feeds,
                                                      std::string* coverage = nullptr);

}  // namespace aic::conformance

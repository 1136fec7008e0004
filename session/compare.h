// Checks that two models compute the same thing: both run through sessions
// at -O0 (each graph exactly as given) on the same feeds and the same
// backend, each output compared with |a - b| <= atol + rtol * |a| (NaN where
// NaN), max absolute and relative error reported per output. Used by `opt`'s
// verification and `aic-onnx verify`. The fast CPU backend by default: the
// reference interpreter only where the CPU backend cannot run `a`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::session {

struct OutputDiff {
  std::string name;
  double max_abs = 0;
  double max_rel = 0;
  bool ok = true;
  std::string problem;  // dtype/shape mismatch, ...
};

struct CompareReport {
  std::vector<OutputDiff> outputs;  // worst over all feeds, per output
  int runs = 0;
  std::string device;    // the backend both models ran on
  std::string fallback;  // why not the one asked for ("" when it was)
  bool ok() const {
    for (const auto& o : outputs) {
      if (!o.ok) return false;
    }
    return true;
  }
};

struct CompareOptions {
  double rtol = 1e-3;
  double atol = 1e-4;
  std::string device = "cpu";  // falls back to "reference" when `a` cannot run there
  int threads = 0;
};

// FailedPrecondition when `a` cannot run (no kernel, error on these feeds)
// on any backend: the caller reports verification as skipped. Errors from
// `b` are mismatches.
absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            const CompareOptions& options);

}  // namespace aic::session

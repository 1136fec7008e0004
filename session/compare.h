// Checks that two models compute the same thing: both run through the
// reference executor on the same feeds, each output compared with
// |a - b| <= atol + rtol * |b| (NaN where NaN), max absolute and relative
// error reported per output. Used by `opt --verify` and `aic-onnx verify`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::rewrite {

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
  bool ok() const {
    for (const auto& o : outputs) {
      if (!o.ok) return false;
    }
    return true;
  }
};

// FailedPrecondition when `a` cannot run (no kernel, error on these feeds):
// the caller reports verification as skipped. Errors from `b` are mismatches.
absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            double rtol, double atol);

// Bitwise equality of two tensors' dtypes, dims and contents (exact rules' check).
bool SameBits(const Tensor& a, const Tensor& b);

}  // namespace aic::rewrite

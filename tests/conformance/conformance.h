// Runs one test of the ONNX backend suite (a folder with model.onnx and
// test_data_set_*/{input,output}_N.pb) on one device (devices.h) and judges
// it the ONNX way: output dtype equal, shapes equal, |a−b| ≤ 1e-7 + 1e-3·|b|,
// NaN where NaN.
#pragma once

#include <string>

namespace aic::conformance {

struct TestResult {
  enum class Status { kPassed, kFailed, kSkipped };
  Status status = Status::kFailed;
  std::string reason;        // one line, for failures and skips
  std::string category;      // grouping key: "no kernel: Foo", "mismatch", "load", ...
  // Shape inference check: "match", "mismatch", or "unknown" (not fully static).
  std::string shape_check = "unknown";
  // Compiling devices: what ran the nodes (see RunOnDevice); "" otherwise.
  std::string coverage;
};

TestResult RunBackendTest(const std::string& test_dir, const std::string& device = "reference");

}  // namespace aic::conformance

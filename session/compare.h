// Checks that two models compute the same thing: both run through sessions
// at -O0 (each graph exactly as given) on the same feeds and the same
// backend, each output compared with |a - b| <= atol + rtol * max(|a|, peak/100)
// (NaN where NaN; peak: the largest finite |a| of that output, floating-point
// outputs only), max absolute and relative error reported per output. The
// floor keeps float rounding from failing the elements near zero of a
// large-valued output: DeepLab's logits peak near 6000, and one conv summed
// in another order moved its near-zero elements by 0.003 (5e-7 of the peak;
// ONNX Runtime's own graph optimizations move them by 0.07). Used by `opt`'s
// verification and `aic-onnx verify`. The fast CPU backend by default: the
// reference interpreter only where the CPU backend cannot run `a`.
#pragma once

#include <map>
#include <memory>
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

// Where two models part: both run once on the reference interpreter with
// every node's outputs observed, then A's values, in A's topological order,
// are compared with B's values of the same name (what `opt` keeps: graph
// outputs and the names of the values it did not rewrite away). The first
// beyond tolerance is the divergence; its producer in A and whether that
// node's inputs agreed in both say where to look. Polygraphy's
// `debug reduce` / `run --onnx-outputs mark all` answer the same question.
struct BisectReport {
  int compared = 0;          // values of A that B computes too
  bool diverged = false;
  std::string node;          // A's producer of the first diverging value ("Conv 'conv_3'")
  OutputDiff value;          // that value: name, how far off
  std::vector<std::string> agreeing_inputs;  // its inputs, equal in both
  std::vector<std::string> differing_inputs; // its inputs that already differ (constants: a changed weight)
  std::vector<std::string> unmatched_inputs; // its inputs B does not compute under that name
};

absl::StatusOr<BisectReport> BisectModels(const Model& a, const Model& b, const std::map<std::string, RuntimeValue>& feeds,
                                          const CompareOptions& options);

// A comparison whose original is known before its candidate: `a` starts
// compiling and running on the feeds when the comparison is made (in the
// background on the CPU backend, when the thread count is left to it), so
// that it runs while the candidate is still being optimized; Against(b) runs
// `b` and compares. `a` must outlive the comparison; Against once.
class Comparison {
 public:
  Comparison(const Model& a, std::vector<std::map<std::string, RuntimeValue>> feeds, const CompareOptions& options);
  ~Comparison();
  Comparison(const Comparison&) = delete;
  Comparison& operator=(const Comparison&) = delete;

  // As CompareModels(a, b, feeds, options).
  absl::StatusOr<CompareReport> Against(const Model& b);

 private:
  struct Original;  // a's side and the thread computing it
  const Model& a_;
  const std::vector<std::map<std::string, RuntimeValue>> feeds_;
  const CompareOptions options_;
  bool side_by_side_ = false;
  int threads_ = 0;
  std::unique_ptr<Original> original_;
};

// FailedPrecondition when `a` cannot run (no kernel, error on these feeds)
// on any backend: the caller reports verification as skipped. Errors from
// `b` are mismatches.
absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            const CompareOptions& options);

}  // namespace aic::session

// What `opt` does, as one library call for the command line and the Python
// API: check the shapes to fix, optimize the model in place with the rewriter,
// write its inferred shapes as value_info, and verify the result against the
// model as loaded on test inputs (given ones, or random ones at the test
// shapes asked for, the fixed shapes, else a realistic size for each symbolic
// dim), both through sessions on the fast CPU executor (session/compare.h).
// Printing, saving and exit codes stay with the callers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"
#include "rewrite/optimize.h"
#include "session/compare.h"
#include "session/test_inputs.h"

namespace aic::session {

struct OptimizeJob {
  rewrite::OptimizeOptions optimize;
  bool write_shapes = true;  // every inferred shape as value_info (what viewers read)
  // Verification: `verify_runs` random input sets (0: none), at
  // `verify_shapes` where given; `verify_feeds`, when not empty, replace the
  // random sets (described as `verify_feeds_source`).
  int verify_runs = 2;
  InputShapes verify_shapes;
  std::vector<std::map<std::string, RuntimeValue>> verify_feeds;
  std::string verify_feeds_source;
  double rtol = 1e-3;
  double atol = 1e-4;
  // Unless the caller chose rtol/atol: a model that quantizes activations
  // (QuantizeLinear or DynamicQuantizeLinear of a computed value) is
  // compared at 1e-2 / 1e-2, the low-precision contract: a rule that
  // reassociates float arithmetic upstream of a quantizer may move a value
  // across a rounding boundary, one quantization step.
  bool tolerance_given = false;
  // Told each step as it starts ("optimizing", "verifying ..."), for a
  // progress line; may be empty.
  std::function<void(const std::string&)> progress;
};

struct OptimizeOutcome {
  rewrite::OptimizeStats stats;
  // Why the rewriter left the model as loaded ("" when it ran).
  std::string unchanged_reason;
  std::map<std::string, int64_t> ops_before;  // op type (domain.op outside ai.onnx) -> count
  std::map<std::string, int64_t> ops_after;
  bool verify_wanted = false;   // verify_runs > 0 or feeds given
  std::string verify_inputs;    // "x=1,3,224,224" or the feeds' source
  InputShapes verify_shapes;    // the shapes random verification ran at (a nearby size where the first failed)
  std::string verify_skipped;   // why verification could not run ("" when it ran)
  CompareReport verify;         // its result, when it ran
  double verify_rtol = 0;       // the tolerance it compared at (OptimizeJob::tolerance_given)
  double verify_atol = 0;
};

// Reads the model again as loaded (the CLI re-reads the file, the Python API
// re-parses its bytes): the model given back when the rewriter fails and no
// copy was kept for verification (that copy shares the loaded weights).
using ModelLoader = std::function<absl::StatusOr<std::unique_ptr<Model>>()>;

// Optimizes `model` (loaded without shape inference; Optimize infers) in
// place. InvalidArgument for shapes to fix that contradict the model; the
// loader's errors as they are. A rewriter failure is not an error: the model
// is reloaded and `unchanged_reason` says why.
absl::StatusOr<OptimizeOutcome> OptimizeAndVerify(std::unique_ptr<Model>& model, const ModelLoader& reload,
                                                  const OptimizeJob& job);

// The outcome as the JSON object of `opt --stats` (and the Python API's stats).
// `approximations`, when not empty, is the JSON object of what `opt --apply`
// did (analysis/approximate.h), written as its "approximations" field.
std::string OptimizeOutcomeJson(const OptimizeOutcome& outcome, const std::string& version,
                                const std::string& input, const std::string& output,
                                const std::string& approximations = "");

std::map<std::string, int64_t> OpTypeCounts(const Graph& g);

// The per-op-type table `opt` prints (and its --html page shows): every op
// type of either count, most frequent first.
struct OpTableRow {
  std::string op;
  int64_t before = 0;
  int64_t after = 0;
};
std::vector<OpTableRow> OpTableRows(const std::map<std::string, int64_t>& before,
                                    const std::map<std::string, int64_t>& after);

}  // namespace aic::session

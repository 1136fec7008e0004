// Session: the one pipeline from a loaded model to results. Create() takes
// the model, infers shapes, runs the rewriter with the rules the chosen
// backend can execute (the portable rules plus the ai.aic fused ops and
// aliases the backend declares), and makes the backend's executor, which
// compiles once per input-shape signature. Run() checks the feeds against
// the model's declared inputs up front (names, dtypes, ranks, fixed dims) and
// runs. `run`, `bench`, `verify`, `report --calib` and `opt`'s verification
// all go through here, so what `opt` writes and what the executors run come
// from the same rules.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/common/executor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"
#include "rewrite/optimize.h"

namespace aic::session {

using exec::Feeds;

struct SessionOptions {
  std::string device = "cpu";  // a registered backend: reference, cpu (cuda in aic-onnx-cuda)
  int threads = 0;             // 0: the core count
  // -O level of the rewriter; unset: the backend's default (0 for the
  // reference oracle, 2 for the fast backends). 0 runs the graph as loaded.
  std::optional<int> opt_level;
  // Refuse feeds that contradict the declared inputs (on by default, as in
  // ONNX Runtime). The conformance runner turns it off: some ONNX backend-suite
  // models declare shapes their own test data does not have (CastLike's
  // `like`), and the suite judges outputs only.
  bool check_feeds = true;
};

// A graph input or output as a caller sees it (ONNX Runtime's NodeArg).
struct IoInfo {
  std::string name;
  TypeInfo type;
};

class Session {
 public:
  // The model is the session's from here on; Create() never changes what it
  // computes. InvalidArgument for an unknown device.
  static absl::StatusOr<std::unique_ptr<Session>> Create(std::unique_ptr<Model> model,
                                                         const SessionOptions& options = {});
  // The same on a copy of `model`.
  static absl::StatusOr<std::unique_ptr<Session>> Create(const Model& model, const SessionOptions& options = {});
  ~Session();

  // InvalidArgument naming the input, what the model declares and what was
  // given, for a missing, unknown, wrongly typed or wrongly shaped feed.
  absl::Status CheckFeeds(const Feeds& feeds) const;
  // Compiles for the feeds' shapes (after CheckFeeds) and describes the plan.
  absl::StatusOr<exec::PlanSummary> Prepare(const Feeds& feeds);
  absl::StatusOr<std::vector<RuntimeValue>> Run(const Feeds& feeds, const exec::RunOptions& options = {});
  std::string ProfileReport(const Feeds& feeds) const { return executor_->ProfileReport(feeds); }

  const std::vector<IoInfo>& inputs() const { return inputs_; }   // without initializer defaults
  const std::vector<IoInfo>& outputs() const { return outputs_; }
  // The graph the backend runs (after the rewriter).
  const Model& model() const { return *model_; }
  const exec::Backend& backend() const { return backend_; }
  int opt_level() const { return opt_level_; }
  const rewrite::OptimizeStats& optimize_stats() const { return optimize_stats_; }
  // Why the rewriter was skipped ("" when it ran): the session then runs the
  // graph as loaded, which is always correct, only slower.
  const std::string& optimize_error() const { return optimize_error_; }
  // One line: "cpu, -O2: 169 -> 121 nodes; rules: fuse_gelu 6, ..." (what
  // the rewriter did for this backend), for `run --plan` and `bench --plan`.
  std::string Describe() const;

 private:
  Session() = default;

  std::unique_ptr<Model> model_;
  exec::Backend backend_;
  int opt_level_ = 0;
  rewrite::OptimizeStats optimize_stats_;
  std::string optimize_error_;
  std::vector<IoInfo> inputs_;
  std::vector<IoInfo> outputs_;
  std::vector<IoInfo> overridable_;  // graph inputs with an initializer default
  bool check_feeds_ = true;
  std::unique_ptr<exec::Executor> executor_;  // after model_: it refers to it
};

// The backends this process can run, by name ("reference", "cpu", and "cuda"
// where the CUDA backend is linked in and registered).
std::vector<std::string> DeviceNames();
const exec::Backend* FindBackend(const std::string& name);
// For the CUDA companion binary: adds a backend linked into it.
void RegisterBackend(exec::Backend backend);

// The rewriter's options for a backend at an -O level: the portable rules
// plus the ai.aic ops the backend runs.
rewrite::OptimizeOptions OptimizeOptionsFor(const exec::Backend& backend, int level);

}  // namespace aic::session

// The one executor interface every backend implements (reference, cpu,
// cuda), and the description of a backend a session picks by name: what it
// is called, which ops of our own domain it runs (so the rewriter may emit
// them for it), and how to make its executor for a model. The session
// (session/session.h) is the only code that chooses among backends; the
// CLI, the conformance runner and the Python binding go through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::exec {

using Feeds = std::map<std::string, RuntimeValue>;

// What a compiled plan looks like, in the terms every backend shares.
struct PlanSummary {
  int steps = 0;
  int compute_steps = 0;         // steps running one of the backend's own kernels (not copies, views or fallbacks)
  int fallback_steps = 0;        // nodes run by their reference kernel
  int fused_nodes = 0;           // nodes folded into another step
  size_t arena_bytes = 0;        // planned activation memory
  size_t activation_bytes = 0;   // every activation as if none were reused
  int64_t macs = 0;              // multiply-accumulates of one run
  int threads = 1;               // what the plan runs on
  std::vector<std::string> fallback_ops;
  int slow_impl_steps = 0;       // library primitives on a reference/naive implementation
  std::vector<std::string> slow_impls;  // "kind impl" per such step
  std::string text;              // one line per step, for `bench --plan`
};

// The fields every backend's plan statistics share, copied by name.
template <typename Stats>
PlanSummary CommonSummary(const Stats& st, std::string text) {
  PlanSummary s;
  s.steps = st.steps;
  s.fallback_steps = st.fallback_steps;
  s.fused_nodes = st.fused_nodes;
  s.arena_bytes = st.arena_bytes;
  s.fallback_ops = st.fallback_ops;
  s.text = std::move(text);
  return s;
}

// Called after each node with its outputs (the reference backend only).
using NodeObserver = std::function<void(const Node&, const std::vector<RuntimeValue>&)>;

struct RunOptions {
  const NodeObserver* observer = nullptr;
  // Observe the nodes of If/Loop/Scan bodies too, each time a body runs
  // (the node is the model's own, so its owner() tells which body).
  bool observe_subgraphs = false;
  bool profile = false;  // time each step (for ProfileReport)
};

// What a compiled backend answers when asked for intermediate values.
inline absl::Status RequireNoObserver(const RunOptions& options) {
  if (options.observer == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError("intermediate values are only observable on --device reference");
}

// One backend's executor for one model. Plans are compiled per input-shape
// signature on first use and cached. The model must outlive the executor.
class Executor {
 public:
  virtual ~Executor() = default;
  // Compiles for the shapes of `feeds` now (if not done yet) and describes the plan.
  virtual absl::StatusOr<PlanSummary> Prepare(const Feeds& feeds) = 0;
  // Feeds are checked by the session before they get here (names, dtypes, ranks, fixed dims).
  virtual absl::StatusOr<std::vector<RuntimeValue>> Run(const Feeds& feeds, const RunOptions& options = {}) = 0;
  // Time per step over the runs made with options.profile ("" when the backend cannot profile).
  virtual std::string ProfileReport(const Feeds& feeds) const { return ""; }
};

struct BackendOptions {
  int threads = 0;  // 0: the core count
};

struct Backend {
  std::string name;         // "reference", "cpu", "cuda": what --device takes
  std::string description;  // one line for --help
  // The ops of domain ai.aic it runs: fused ops and aliases of newer standard
  // ops (ops/fused/standard_aliases.h). The session's rewriter emits no other.
  std::set<std::string> aic_ops;
  // The standard QOperator ops (QLinearConv) it runs as int8: the session's
  // rewriter turns QDQ patterns into them (rewrite/rules/quantized_rules.cc).
  std::set<std::string> qoperator_ops;
  // The -O level a session uses when the user gives none: the reference
  // interpreter is the oracle and runs the model as written (0); fast backends
  // run what the optimizer makes (2).
  int default_opt_level = 2;
  std::function<absl::StatusOr<std::unique_ptr<Executor>>(const Model& model, const BackendOptions& options)>
      create;
};

}  // namespace aic::exec

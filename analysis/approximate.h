// `opt --apply`: the approximate transformations (approximate_edits.h) applied
// one candidate at a time, each measured before it is kept. The model with
// the candidate (and every candidate kept before it) runs on the calibration
// samples on the fast CPU executor, and its outputs are compared with the
// original model's; past the error budget the candidate is refused and the
// model stays as it was. Kept candidates are also timed against the model
// before them (paired runs, alternating, medians), so each line says what
// the step saved in parameters, MACs and time, and what it cost in error; a
// step that made the model slower is refused too, unless asked to keep it.
// The order is merge-linear, then prune-dead, then low-rank (a pruned layer
// is factorized at its new width). Merges and prunes go largest saving
// first; low-rank candidates (one or, with RankChoice::automatic, several
// ranks a layer) are measured alone first and applied in order of MACs
// saved per error, at most one rank a layer, so the budget goes to the
// layers that give most for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/approximate_edits.h"
#include "analysis/calibration.h"
#include "graph/model.h"
#include "support/json.h"

namespace aic::analysis {

struct ApproximateOptions {
  bool low_rank = false;
  RankChoice rank;
  bool merge_linear = false;
  bool prune_dead = false;
  // prune-dead also removes units active on at most this share of positions.
  double min_activation = 0;
  // A candidate is kept while every output's relative error (‖y − y₀‖₂ /
  // ‖y₀‖₂ over all samples; integer outputs: the share of elements that
  // differ) stays at or under this. A float error under 1e-6 (the order of a
  // sum's rounding) counts as none.
  double max_error = 1e-2;
  CalibrationData calibration;
  bool measure_latency = true;
  // With 8 samples or more, this share of them (every 4th) is held out: not
  // decided on, the result's error on them is reported (and a note when it
  // is past the budget: the samples decided on did not stand for the data).
  double holdout_share = 0.25;
  // Keep a step within the error budget even when it measured more than 3%
  // slower than the model before it (a smaller file matters more than time).
  bool keep_slower = false;
  int threads = 0;  // for the measuring sessions; 0: the core count
  ProgressFn progress;
};

struct ApproximateStep {
  std::string kind, where, detail;
  int64_t params_before = 0, params_after = 0;
  int64_t macs_before = -1, macs_after = -1;
  bool kept = false;
  double error = 0;           // the model with this step and those kept before, vs the original
  std::string worst_output;   // the output that error is from
  std::string refused;        // why not kept ("" when kept)
  double latency_before_ms = -1;  // kept steps, when measured
  double latency_after_ms = -1;
};

struct ApproximateResult {
  std::vector<ApproximateStep> steps;
  std::string data;  // "8 random samples (generated, not real data)", "12 samples from calib/"
  bool random_data = false;
  int64_t samples = 0;  // decided on
  double max_error = 0;
  double final_error = 0;  // on the samples decided on
  std::string final_worst_output;
  int64_t holdout_samples = 0;
  double holdout_error = -1;  // the result on the held-out samples (-1: none, or nothing kept)
  std::string holdout_worst_output;
  double latency_original_ms = -1;
  double latency_final_ms = -1;
  int threads = 0;
  std::vector<std::string> notes;
  int kept() const {
    int k = 0;
    for (const ApproximateStep& s : steps) k += s.kept ? 1 : 0;
    return k;
  }
};

// Adds one `--apply` spec to `options`: "low-rank" (automatic rank),
// "low-rank=E" (an energy share in (0, 1)), "low-rank=R" (a rank >= 1),
// "prune-dead", "merge-linear". InvalidArgument naming the spec and what is
// expected ("shrink: expected low-rank[=E|R], ...").
absl::Status AddApplySpec(const std::string& spec, ApproximateOptions& options);

// Applies what `options` asks for to `model` (replaced by the result),
// measuring against `original` (the model as loaded: the same inputs and
// outputs). InvalidArgument when the calibration samples cannot be read or
// the original cannot run on them.
absl::StatusOr<ApproximateResult> ApplyApproximations(const Model& original, std::unique_ptr<Model>& model,
                                                      const ApproximateOptions& options);

// The lines `opt` prints.
std::string FormatApproximations(const ApproximateResult& result);
// As the "approximations" object of `opt --stats`.
void WriteApproximationsJson(JsonWriter& json, const ApproximateResult& result);

}  // namespace aic::analysis

// The approximate transformations of `opt --apply`, each as a list of
// candidates found on a model: what it would change, what it saves, and the
// edit itself. Nothing here decides whether a candidate is kept: the driver
// (approximate.h) measures the edited model's outputs against the original
// and refuses what is past the error budget.
//   low-rank      a linear layer's M [out, in] becomes two factors of rank r
//                 from its SVD (M ≈ U_r·Σ_r·V_rᵀ), only where r < mn/(m+n)
//                 so parameters and MACs fall (approximate_low_rank.cc)
//   merge-linear  two linears with only a bias between them become one:
//                 M₂(M₁x + b₁) + b₂ = (M₂M₁)x + (M₂b₁ + b₂), where
//                 h > mn/(m+n) (approximate_merge_linear.cc)
//   prune-dead    units that never pass a ReLU (or are active on at most a
//                 given share of positions) leave the layer producing them
//                 and every layer reading them (approximate_prune_dead.cc)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analysis/linear_sites.h"
#include "graph/model.h"

namespace aic::analysis {

struct ApproximateCandidate {
  std::string kind;    // "low-rank", "merge-linear", "prune-dead"
  std::string key;     // identity across edits of the model (its weights' names)
  // Candidates of one group are alternatives (ranks of one layer): at most
  // one is kept. Empty: the candidate is its own group.
  std::string group;
  std::string where;   // the sites, as DescribeSite names them
  std::string detail;  // "rank 48 (99.0% energy)", "12 of 256 units"
  int64_t params_before = 0;
  int64_t params_after = 0;
  int64_t macs_before = -1;  // per run at the measured shapes; -1 unknown
  int64_t macs_after = -1;
  // Makes the edit on the model the candidate was found on, or a clone of it
  // (same node order).
  std::function<absl::Status(Model&)> apply;
};

// Positions each node's output is computed at, per run (output elements /
// output features), by node index in its graph; -1 where the shapes are not
// known.
using SitePositions = std::vector<int64_t>;

struct RankChoice {
  double energy = 0.99;  // keep this share of Σσᵢ²
  int64_t rank = 0;      // > 0: this rank (capped at min(m, n))
  // Offer each layer at the ranks keeping each of kAutomaticEnergies (the
  // driver keeps the one that saves most for the error it costs).
  bool automatic = false;
};
inline constexpr double kAutomaticEnergies[] = {0.8, 0.9, 0.95, 0.99};

// The candidates of one graph of the model (the main graph or a body; see
// GraphsOf), `positions` its nodes'. Apply closures find their graph by its
// key and their layer by names (a weight's, a value's; sibling bodies may
// use the same names), so a candidate stays valid in a clone of the model
// and after other edits reorder the nodes.
std::vector<ApproximateCandidate> LowRankCandidates(const ModelGraph& where, const RankChoice& choice,
                                                    const SitePositions& positions);

std::vector<ApproximateCandidate> MergeLinearCandidates(const ModelGraph& where, const SitePositions& positions);

// Per ReLU-like node (by its output's name): for each unit along its unit
// axis, the share of positions where the output was not 0 on the
// calibration data.
struct UnitActivity {
  std::string graph;  // its graph's key (ModelGraph)
  std::string value;
  int64_t axis = -1;
  int64_t positions = 0;  // per unit, over all samples
  std::vector<double> active_share;
};
// Units seen at fewer positions than this are not called dead: a squeeze-
// and-excitation block's units see one position a sample, and a unit that
// stayed off on a handful of samples says little.
inline constexpr int64_t kMinPositionsToPrune = 32;
// Nodes whose output prune-dead can remove units of: a Relu, or a Clip with
// a lower bound of 0, fed by a linear site (directly or through an Add of a
// per-unit constant) and read only by linear sites (directly or through
// channel-wise pooling). With the unit axis (1 after a Conv, else the last).
struct PrunableUnits {
  std::string graph;  // its graph's key (ModelGraph)
  std::string value;  // the ReLU-like node's output
  int64_t axis = -1;
  int64_t width = 0;
};
std::vector<PrunableUnits> FindPrunableUnits(const ModelGraph& where);

// Units active on at most `max_active_share` of positions (0: never) go, at
// nodes whose units were seen at kMinPositionsToPrune positions or more.
std::vector<ApproximateCandidate> PruneDeadCandidates(const ModelGraph& where, const std::vector<UnitActivity>& activity,
                                                      double max_active_share, const SitePositions& positions);

}  // namespace aic::analysis

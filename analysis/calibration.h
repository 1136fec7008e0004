// Calibration runs: the reference executor on sample inputs, watching every
// elementwise op that clamps a range (ReLU, Clip, HardSigmoid...) to measure
// how much of its output is active and which units (channels / features) are
// dead or almost never active. A model the executor cannot run leaves the
// report static, with a note saying why.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/logical_graph.h"
#include "analysis/report.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::analysis {

using Feeds = std::map<std::string, RuntimeValue>;

struct CalibrationData {
  int64_t samples = 0;
  // Builds sample i's feeds (lazily: samples may be large).
  std::function<absl::StatusOr<Feeds>(int64_t)> feed;
  bool random = false;
  std::string source;  // what the user asked for: "random:8", "calib/"
};

using ProgressFn = std::function<void(const std::string&)>;

// Whether calibration measures node n: an elementwise op that clamps a range
// (ReLU, Clip, HardSigmoid...) on floating-point data. Other collapses (Abs's
// sign, pooling, rounding) have no "inactive" state to count.
bool IsMeasured(const ReportNode& n);

// Runs the samples and fills report.nodes[*].activation and report.calibration.
// Never fails: what goes wrong becomes report.calibration.note.
void RunCalibration(const Model& model, const LogicalGraph& lg, const CalibrationData& data,
                    double rare_threshold, const ProgressFn& progress, Report& report);

}  // namespace aic::analysis

// analysis::Analyze: the whole `aic-onnx report` pipeline on a loaded model:
// shape inference, constant folding of weight plumbing, logical nodes with
// their traits and costs, structure (collapse points, chains, patterns, merge
// candidates), weight spectra, optional calibration runs, and the
// optimization candidates with their measured values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/calibration.h"
#include "analysis/report.h"
#include "graph/model.h"

namespace aic::analysis {

struct AnalysisOptions {
  std::string model_path;  // shown in the report
  // Spectral energy a low-rank candidate keeps (--energy).
  double energy = 0.99;
  bool spectra = true;
  // Weights whose shorter side exceeds this are not decomposed (time bound:
  // an SVD costs O(m·n·min(m,n))); the report says so.
  int64_t max_svd_dim = 4096;
  // A unit active on at most this share of calibration positions is "rarely active".
  double rare_threshold = 0.01;
  std::optional<CalibrationData> calibration;
  ProgressFn progress;  // null: silent
};

// Fixes graph inputs' symbolic dims to concrete ones ("x" -> {1, 3, 224, 224})
// before analysis, so that costs and peak memory are numbers.
absl::Status FixInputShapes(Model& model,
                            const std::map<std::string, std::vector<int64_t>>& shapes);

// Analyzes `model` (shape inference runs here and updates value types).
absl::StatusOr<Report> Analyze(Model& model, const AnalysisOptions& options);

}  // namespace aic::analysis

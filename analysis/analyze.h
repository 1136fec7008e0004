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
  // --shape: graph input name -> dims. Each symbolic dim of those inputs takes
  // the size given (the same symbol on other inputs too); the rest their
  // default (graph/realistic_size.h). The report says which.
  std::map<std::string, std::vector<int64_t>> input_shapes;

  ProgressFn progress;  // null: silent
};

// Analyzes `model` at the sizes of options.input_shapes (shape inference
// runs here and leaves the value types at those sizes).
absl::StatusOr<Report> Analyze(Model& model, const AnalysisOptions& options);

}  // namespace aic::analysis

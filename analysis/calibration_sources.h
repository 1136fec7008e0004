// Where calibration samples come from, for `report --calib` and the Python
// API: a folder of tensors (one sample in it, or one per subfolder) or random
// data that follows what the graph does with each input (session/input_kinds.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/calibration.h"
#include "graph/model.h"

namespace aic::analysis {

// The folder's samples: files named after the graph inputs (NAME.npy / NAME.pb,
// or input_K.pb / input_K.npy for the K-th input), in DIR itself (one sample)
// or in each subdirectory of DIR (one per subdirectory, in name order).
// InvalidArgument naming the folder when there is none.
absl::StatusOr<CalibrationData> CalibrationFromDir(const Model& model, const std::string& dir);

// N random samples: floats normal, token ids uniform over their embedding
// table, other integer and boolean inputs (masks) ones. `model` must outlive
// the data.
// The N of a "random:N" calibration spec; 0 for any other spec (a folder).
// InvalidArgument "expects a positive N, got 'SPEC'" for a bad or missing N
// (callers put the flag's name in front).
absl::StatusOr<int64_t> RandomSampleCount(const std::string& spec);

// `shapes` (graph input name -> dims) sizes the inputs it names; other
// symbolic dims are 1.
CalibrationData RandomCalibration(const Model& model, int64_t n, uint64_t seed,
                                  const std::map<std::string, std::vector<int64_t>>& shapes = {});

// N random samples at the shapes `opt` verifies at (session::TestShapes of
// `given`: a realistic size per symbolic dim, not 1), the source saying them:
// "random:8 at x=1,3,224,224". What `opt --apply` measures on without --calib.
CalibrationData RandomCalibrationAtTestShapes(const Model& model, int64_t n, uint64_t seed,
                                              const std::map<std::string, std::vector<int64_t>>& given);

}  // namespace aic::analysis

// Scaler and Normalizer decoded from their attributes, and their per-row
// arithmetic (in double, as the reference kernels compute), shared by
// preprocessing.cc and the CPU lowering (exec/cpu/ops_native_ml.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

// y = (x − offset[f]) · scale[f]; both expanded to one value per feature.
struct ScalerModel {
  std::vector<double> scale;
  std::vector<double> offset;
};
absl::StatusOr<ScalerModel> DecodeScaler(const Node& node, int64_t features);

template <typename T>
double ScaleFeature(const ScalerModel& m, T x, int64_t f) {
  return (static_cast<double>(x) - m.offset[static_cast<size_t>(f)]) * m.scale[static_cast<size_t>(f)];
}

enum class NormKind : uint8_t { kMax, kL1, kL2 };
absl::StatusOr<NormKind> DecodeNormalizer(const Node& node);

// Divides the row by its max (sign included, as ORT does), L1 or L2 norm;
// a zero divisor leaves it as it is.
void NormalizeRow(NormKind norm, double* row, int64_t n);

}  // namespace aic

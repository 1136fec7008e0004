// Operand decoding shared by the ai.onnx.ml classifiers, regressors and
// preprocessors, so that each attribute family is read in one place: class
// labels (int64 or string), float lists that opset 3 may give as double
// tensors (*_as_tensor), the X [N, F] (or [F]) feature matrix every model op
// reads, and the output types they infer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"

namespace aic {

// classlabels_ints / classlabels_int64s or classlabels_strings: exactly one
// is set (an empty list counts as unset).
struct ClassLabels {
  bool strings = false;
  std::vector<int64_t> ints;
  std::vector<std::string> names;

  int64_t size() const { return strings ? static_cast<int64_t>(names.size()) : static_cast<int64_t>(ints.size()); }
  DType dtype() const { return strings ? DType::kString : DType::kInt64; }
  // The [N] label tensor naming class picks[i] for row i.
  Tensor Pick(const std::vector<int64_t>& picks) const;
};
absl::StatusOr<ClassLabels> DecodeClassLabels(const Node& node, const char* ints_attr);

// The float list `name`, or the double tensor `name`_as_tensor (opset 3's
// spelling for double models); empty when neither is set, an error when both are.
absl::StatusOr<std::vector<double>> FloatsOrTensor(const Node& node, const std::string& name);

// The feature matrix X: [N, F], or [F] read as one row, as doubles.
struct FeatureRows {
  int64_t rows = 0;
  int64_t features = 0;
  std::vector<double> x;  // rows × features, row-major
  const double* row(int64_t r) const { return x.data() + r * features; }
};
// X must be a float, double, int32 or int64 tensor of rank 1 or 2.
absl::StatusOr<FeatureRows> ReadFeatureRows(const KernelContext& ctx, size_t input = 0);

// Inference for X: the same dtype and rank rules as ReadFeatureRows, and the
// output's row count (X's first dim, 1 for a rank-1 X, fresh when unknown).
absl::Status CheckFeatureInput(const OpContext& ctx, size_t input = 0);
Dim RowsDim(const OpContext& ctx, size_t input = 0);
// X's feature count when its last dim is known.
std::optional<int64_t> StaticFeatures(const OpContext& ctx, size_t input = 0);

// A float tensor of `values` (model outputs are float whatever X is).
Tensor FloatTensor(const std::vector<double>& values, std::vector<int64_t> dims);

// The four X dtypes every ai.onnx.ml model op accepts.
bool IsMlNumeric(DType t);

}  // namespace aic

// LinearRegressor and LinearClassifier decoded from their attributes, and
// one row's arithmetic: the scores (in double, each target's sum in feature
// order from its intercept) and how they finish (ONNX Runtime's rules: a
// single score is transformed only by PROBIT; a classifier with one score
// row and two labels reports [1 − s, s] with label 1 where s > 0). The
// reference kernels (linear_models.cc) and the CPU lowering
// (exec/cpu/ops_native_ml.cc) share all of it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/post_transform.h"

namespace aic {

// W [targets, F] and b [targets] with the post transform.
struct LinearModel {
  std::vector<double> coefficients;
  std::vector<double> intercepts;  // empty: zero
  int64_t targets = 0;
  int64_t features = 0;
  PostTransform post = PostTransform::kNone;
};

absl::StatusOr<LinearModel> DecodeLinearRegressor(const Node& node);

// y[t] = b[t] + Σ_j x[j]·W[t, j], j ascending. Four targets' sums advance
// together in registers (each rounds the same way; the chains overlap).
template <typename T>
void LinearScoreRow(const LinearModel& m, const T* x, double* y) {
  const int64_t k = m.targets, f = m.features;
  const double* w = m.coefficients.data();
  auto bias = [&](int64_t t) { return m.intercepts.empty() ? 0.0 : m.intercepts[static_cast<size_t>(t)]; };
  int64_t t = 0;
  for (; t + 4 <= k; t += 4) {
    double a0 = bias(t), a1 = bias(t + 1), a2 = bias(t + 2), a3 = bias(t + 3);
    const double *w0 = w + t * f, *w1 = w0 + f, *w2 = w1 + f, *w3 = w2 + f;
    for (int64_t j = 0; j < f; ++j) {
      const double xj = static_cast<double>(x[j]);
      a0 += xj * w0[j];
      a1 += xj * w1[j];
      a2 += xj * w2[j];
      a3 += xj * w3[j];
    }
    y[t] = a0;
    y[t + 1] = a1;
    y[t + 2] = a2;
    y[t + 3] = a3;
  }
  for (; t < k; ++t) {
    double a = bias(t);
    for (int64_t j = 0; j < f; ++j) a += static_cast<double>(x[j]) * w[t * f + j];
    y[t] = a;
  }
}

// The regressor's post transform on one row of scores, in place.
void FinishLinearRegressorRow(const LinearModel& m, double* y);

struct LinearClassifierModel {
  LinearModel linear;
  ClassLabels labels;
  int64_t columns() const { return linear.targets == 1 ? 2 : linear.targets; }
};

absl::StatusOr<LinearClassifierModel> DecodeLinearClassifier(const Node& node);

// One row: `scores` (linear.targets) become `z` (columns()); returns the
// picked class index.
int64_t FinishLinearClassifierRow(const LinearClassifierModel& m, const double* scores, double* z);

}  // namespace aic

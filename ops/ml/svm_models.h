// SVMRegressor and SVMClassifier decoded from their attributes, and one
// row's arithmetic: the kernel against every support vector (or, for a
// liblinear model without support vectors, one dot product per class), the
// pairwise votes, Platt probabilities and their coupling. The reference
// kernels (svm.cc) and the CPU lowering (exec/cpu/ops_native_ml.cc) share
// all of it, so both give the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/post_transform.h"

namespace aic {

enum class SvmKernelType : uint8_t { kLinear, kPoly, kRbf, kSigmoid };

// The parts both ops share: kernel, support vectors (or none), rho.
struct SvmModel {
  SvmKernelType kernel = SvmKernelType::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;
  // Support vectors feature-major, [features][vectors]: one feature of
  // every vector side by side, so a row's kernel values vectorize across
  // vectors while each keeps its sum in feature order.
  std::vector<double> support_by_feature;
  int64_t vectors = 0;  // 0: a liblinear model
  int64_t features = 0;
  std::vector<double> coefficients;
  std::vector<double> rho;
  PostTransform post = PostTransform::kNone;
};

struct SvmRegressorModel {
  SvmModel svm;
  bool one_class = false;
};

absl::StatusOr<SvmRegressorModel> DecodeSvmRegressor(const Node& node);

struct SvmClassifierModel {
  SvmModel svm;
  ClassLabels labels;
  std::vector<int64_t> per_class;  // support vectors of each class
  std::vector<int64_t> first;      // index of each class's first support vector
  std::vector<double> prob_a, prob_b;
  bool weights_positive = true;
  int64_t classes() const { return labels.size(); }
  int64_t pairs() const { return classes() * (classes() - 1) / 2; }
  bool proba() const { return !prob_a.empty(); }
  // Z's columns: pair scores (2 for one pair), probabilities, or class scores.
  int64_t columns() const {
    if (svm.vectors > 0 && !proba()) return classes() > 2 ? pairs() : 2;
    return classes();
  }
};

absl::StatusOr<SvmClassifierModel> DecodeSvmClassifier(const Node& node);

// Working memory of one row (kernel values, pair scores, votes), reused
// from row to row.
struct SvmScratch {
  std::vector<double> kernels, scores;
  std::vector<int64_t> votes;
  std::vector<float> pairwise, probabilities;
};

// K(x, svᵥ) for every support vector v into k[vectors]: the squared
// distance (RBF) or dot product summed over features in order, then the
// kernel's function. A faster evaluation of the same may stand in for it
// (exec/cpu/kernels/svm_kernel.h).
void SvmKernelRow(const SvmModel& m, const double* x, double* k);
using SvmKernelRowFn = void (*)(const SvmModel& m, const double* x, double* k);

// One row of x (the model's feature count): the regressor's output.
double SvmRegressRow(const SvmRegressorModel& m, const double* x, SvmScratch& scratch,
                     SvmKernelRowFn kernel_row = SvmKernelRow);
// One row: fills z (columns()) and returns the picked class index.
int64_t SvmClassifyRow(const SvmClassifierModel& m, const double* x, double* z, SvmScratch& scratch,
                       SvmKernelRowFn kernel_row = SvmKernelRow);

}  // namespace aic

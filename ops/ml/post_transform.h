// The score post-transforms of the ai.onnx.ml classifiers and regressors
// (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT), in one place for the
// linear, SVM and tree ops. The formulas are ONNX Runtime's, since models
// converted from scikit-learn are judged by it: PROBIT uses the same
// closed-form erf⁻¹ approximation (off by ~1e-3 from the exact inverse),
// SOFTMAX_ZERO treats |s| ≤ 1e-7 as zero, and a classifier with one score
// column expands it to two the way ORT does (ExpandBinaryScore).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace aic {

enum class PostTransform : uint8_t { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// From the classic ops' string attribute ("NONE", "SOFTMAX", ...).
absl::StatusOr<PostTransform> ParsePostTransform(const std::string& name);
// From TreeEnsemble-5's integer attribute: 0 NONE, 1 SOFTMAX, 2 LOGISTIC,
// 3 SOFTMAX_ZERO, 4 PROBIT (the ONNX numbering).
absl::StatusOr<PostTransform> PostTransformFromInt(int64_t value);
const char* PostTransformName(PostTransform p);

// 1 / (1 + e⁻ˣ), written to stay exact in both tails.
double MlLogistic(double x);
// √2 · erf⁻¹(2p − 1) with ORT's approximation of erf⁻¹; NaN outside [0, 1].
double MlProbit(double p);

// Transforms one row of n scores in place: SOFTMAX and SOFTMAX_ZERO
// normalise over the row, LOGISTIC and PROBIT act on each score.
void ApplyPostTransform(PostTransform p, double* scores, int64_t n);

// A binary classifier that computes one score s writes two columns. With
// PROBIT: [probit(s), NaN] (ORT leaves the second column unwritten); with
// LOGISTIC: [σ(−s), σ(s)]; otherwise [1 − s, s] (kComplement, s a
// probability) or [−s, s] (kNegation, s a signed margin).
enum class SecondColumn : uint8_t { kComplement, kNegation };
void ExpandBinaryScore(PostTransform p, SecondColumn how, double s, double* out2);

}  // namespace aic

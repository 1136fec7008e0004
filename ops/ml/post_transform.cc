#include "ops/ml/post_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace aic {

absl::StatusOr<PostTransform> ParsePostTransform(const std::string& name) {
  if (name == "NONE") return PostTransform::kNone;
  if (name == "SOFTMAX") return PostTransform::kSoftmax;
  if (name == "LOGISTIC") return PostTransform::kLogistic;
  if (name == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (name == "PROBIT") return PostTransform::kProbit;
  return absl::InvalidArgumentError(
      absl::StrCat("post_transform '", name, "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT"));
}

absl::StatusOr<PostTransform> PostTransformFromInt(int64_t value) {
  switch (value) {
    case 0: return PostTransform::kNone;
    case 1: return PostTransform::kSoftmax;
    case 2: return PostTransform::kLogistic;
    case 3: return PostTransform::kSoftmaxZero;
    case 4: return PostTransform::kProbit;
    default: return absl::InvalidArgumentError(absl::StrCat("post_transform ", value, " is not one of 0..4"));
  }
}

const char* PostTransformName(PostTransform p) {
  switch (p) {
    case PostTransform::kNone: return "NONE";
    case PostTransform::kSoftmax: return "SOFTMAX";
    case PostTransform::kLogistic: return "LOGISTIC";
    case PostTransform::kSoftmaxZero: return "SOFTMAX_ZERO";
    case PostTransform::kProbit: return "PROBIT";
  }
  return "?";
}

double MlLogistic(double x) {
  const double v = 1 / (1 + std::exp(-std::abs(x)));
  return x < 0 ? 1 - v : v;
}

double MlProbit(double p) {
  // Winitzki's erf⁻¹ with a = 0.147, as ORT (and onnx.reference) compute it.
  constexpr double kA = 0.147;
  constexpr double kPi = 3.14159265358979323846;
  double x = 2 * p - 1;
  const double sign = x < 0 ? -1.0 : 1.0;
  x = (1 - x) * (1 + x);
  const double ln = std::log(x);
  const double v = 2 / (kPi * kA) + 0.5 * ln;
  const double v2 = 1 / kA * ln;
  const double v3 = -v + std::sqrt(v * v - v2);
  return std::sqrt(2.0) * sign * std::sqrt(v3);
}

void ApplyPostTransform(PostTransform p, double* scores, int64_t n) {
  switch (p) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) scores[i] = MlLogistic(scores[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) scores[i] = MlProbit(scores[i]);
      return;
    case PostTransform::kSoftmax:
    case PostTransform::kSoftmaxZero: {
      // SOFTMAX_ZERO leaves (near-)zero scores at zero: a class no tree voted
      // for keeps probability 0 instead of e⁰ / Σ.
      const bool keep_zero = p == PostTransform::kSoftmaxZero;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, scores[i]);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const bool zero = keep_zero && std::abs(scores[i]) <= 1e-7;
        scores[i] = zero ? 0.0 : std::exp(scores[i] - mx);
        sum += scores[i];
      }
      // An all-zero SOFTMAX_ZERO row stays zero (ORT divides 0 by 0 there).
      if (sum > 0) {
        for (int64_t i = 0; i < n; ++i) scores[i] /= sum;
      }
      return;
    }
  }
}

void ExpandBinaryScore(PostTransform p, SecondColumn how, double s, double* out2) {
  if (p == PostTransform::kProbit) {
    out2[0] = MlProbit(s);
    out2[1] = std::numeric_limits<double>::quiet_NaN();
  } else if (p == PostTransform::kLogistic) {
    out2[0] = MlLogistic(-s);
    out2[1] = MlLogistic(s);
  } else {
    out2[0] = how == SecondColumn::kComplement ? 1 - s : -s;
    out2[1] = s;
  }
}

}  // namespace aic

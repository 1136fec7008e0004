// The classifier follows libsvm as ONNX Runtime implements it: one
// classifier per class pair (i, j), i < j, whose score votes for i when
// positive; the label is the class with most votes (the lowest on a tie).
// With prob_a / prob_b each pair score becomes a probability by Platt's
// sigmoid and the pairwise probabilities are coupled into one distribution
// (Wu, Lin and Weng's method 2), computed in float with ORT's stopping
// rule, since its tolerance (0.005 / classes) is coarser than the
// differences a double computation would make visible.
#include "ops/ml/svm_models.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace aic {

namespace {

std::vector<double> Doubles(const Node& node, const char* name) {
  const std::vector<float> v = node.GetFloats(name);
  return std::vector<double>(v.begin(), v.end());
}

absl::StatusOr<SvmModel> DecodeSvm(const Node& node, int64_t vectors) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  SvmModel m;
  AIC_ASSIGN_OR_RETURN(m.post, ParsePostTransform(node.GetString("post_transform", "NONE")));
  const std::string type = node.GetString("kernel_type", "LINEAR");
  if (type == "LINEAR") m.kernel = SvmKernelType::kLinear;
  else if (type == "POLY") m.kernel = SvmKernelType::kPoly;
  else if (type == "RBF") m.kernel = SvmKernelType::kRbf;
  else if (type == "SIGMOID") m.kernel = SvmKernelType::kSigmoid;
  else return fail("kernel_type '", type, "' is not one of LINEAR, POLY, RBF, SIGMOID");
  const std::vector<double> params = Doubles(node, "kernel_params");
  if (!params.empty() && params.size() != 3) return fail("kernel_params must be [gamma, coef0, degree]");
  if (!params.empty()) {
    m.gamma = params[0];
    m.coef0 = params[1];
    m.degree = params[2];
  }
  const std::vector<double> support = Doubles(node, "support_vectors");
  m.coefficients = Doubles(node, "coefficients");
  m.rho = Doubles(node, "rho");
  if (m.coefficients.empty()) return fail("coefficients are required");
  if (m.rho.empty()) return fail("rho is required");
  m.vectors = vectors;
  if (vectors < 0) return fail("the model has ", vectors, " support vectors");
  if (vectors > 0) {
    if (support.empty() || support.size() % static_cast<size_t>(vectors) != 0) {
      return fail(support.size(), " support_vectors values do not split into ", vectors, " vectors");
    }
    m.features = static_cast<int64_t>(support.size()) / vectors;
    m.support_by_feature.resize(support.size());
    for (int64_t v = 0; v < vectors; ++v) {
      for (int64_t f = 0; f < m.features; ++f) {
        m.support_by_feature[static_cast<size_t>(f * vectors + v)] = support[static_cast<size_t>(v * m.features + f)];
      }
    }
  } else {
    m.kernel = SvmKernelType::kLinear;  // liblinear: plain dot products
  }
  return m;
}

double Dot(const double* a, const double* b, int64_t n) {
  double dot = 0;
  for (int64_t i = 0; i < n; ++i) dot += a[i] * b[i];
  return dot;
}

// Wu-Lin-Weng pairwise coupling in float, operation for operation as ORT:
// r[i·k + j] = P(i | i or j); p gets the class probabilities.
void CoupleProbabilities(int64_t k, const std::vector<float>& r, float* p) {
  const size_t n = static_cast<size_t>(k);
  std::vector<float> q(n * n, 0.f), qp(n, 0.f);
  const float eps = 0.005f / static_cast<float>(k);
  for (size_t i = 0; i < n; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (size_t j = 0; j < i; ++j) {
      q[i * n + i] += r[j * n + i] * r[j * n + i];
      q[i * n + j] = q[j * n + i];
    }
    for (size_t j = i + 1; j < n; ++j) {
      q[i * n + i] += r[j * n + i] * r[j * n + i];
      q[i * n + j] = -r[j * n + i] * r[i * n + j];
    }
  }
  for (int loop = 0; loop < 100; ++loop) {
    float pqp = 0;
    for (size_t i = 0; i < n; ++i) {
      qp[i] = 0;
      for (size_t j = 0; j < n; ++j) qp[i] += q[i * n + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0;
    for (size_t i = 0; i < n; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (size_t i = 0; i < n; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * n + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * n + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (size_t j = 0; j < n; ++j) {
        qp[j] = (qp[j] + diff * q[i * n + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

}  // namespace

void SvmKernelRow(const SvmModel& m, const double* x, double* k) {
  const int64_t nv = m.vectors;
  std::fill(k, k + nv, 0.0);
  for (int64_t f = 0; f < m.features; ++f) {
    const double xf = x[f];
    const double* s = m.support_by_feature.data() + f * nv;
    if (m.kernel == SvmKernelType::kRbf) {
      for (int64_t v = 0; v < nv; ++v) {
        const double d = xf - s[v];
        k[v] += d * d;
      }
    } else {
      for (int64_t v = 0; v < nv; ++v) k[v] += xf * s[v];
    }
  }
  switch (m.kernel) {
    case SvmKernelType::kRbf:
      for (int64_t v = 0; v < nv; ++v) k[v] = std::exp(-m.gamma * k[v]);
      break;
    case SvmKernelType::kPoly:
      for (int64_t v = 0; v < nv; ++v) k[v] = std::pow(m.gamma * k[v] + m.coef0, m.degree);
      break;
    case SvmKernelType::kSigmoid:
      for (int64_t v = 0; v < nv; ++v) k[v] = std::tanh(m.gamma * k[v] + m.coef0);
      break;
    case SvmKernelType::kLinear:
      break;
  }
}

absl::StatusOr<SvmRegressorModel> DecodeSvmRegressor(const Node& node) {
  SvmRegressorModel r;
  AIC_ASSIGN_OR_RETURN(r.svm, DecodeSvm(node, node.GetInt("n_supports", 0)));
  SvmModel& m = r.svm;
  if (m.vectors > 0 && static_cast<int64_t>(m.coefficients.size()) != m.vectors) {
    return absl::InvalidArgumentError(absl::StrCat(m.coefficients.size(), " coefficients for ", m.vectors, " support vectors"));
  }
  if (m.vectors == 0) m.features = static_cast<int64_t>(m.coefficients.size());
  r.one_class = node.GetInt("one_class", 0) != 0;
  return r;
}

absl::StatusOr<SvmClassifierModel> DecodeSvmClassifier(const Node& node) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  SvmClassifierModel m;
  AIC_ASSIGN_OR_RETURN(m.labels, DecodeClassLabels(node, "classlabels_ints"));
  m.per_class = node.GetInts("vectors_per_class");
  int64_t vectors = 0;
  for (int64_t v : m.per_class) {
    if (v < 0) return fail("vectors_per_class has a negative count");
    m.first.push_back(vectors);
    vectors += v;
  }
  const int64_t n = m.classes();
  if (vectors > 0 && static_cast<int64_t>(m.per_class.size()) != n) {
    return fail(m.per_class.size(), " vectors_per_class entries for ", n, " classes");
  }
  AIC_ASSIGN_OR_RETURN(m.svm, DecodeSvm(node, vectors));
  m.prob_a = Doubles(node, "prob_a");
  m.prob_b = Doubles(node, "prob_b");
  if (m.prob_a.size() != m.prob_b.size()) return fail("prob_a and prob_b differ in length");
  const size_t coef = m.svm.coefficients.size();
  if (vectors > 0) {
    if (n < 2) return fail("a support vector classifier needs at least 2 classes");
    if (static_cast<int64_t>(coef) != (n - 1) * vectors) {
      return fail(coef, " coefficients, expected (classes - 1) × vectors = ", (n - 1) * vectors);
    }
    if (static_cast<int64_t>(m.svm.rho.size()) < m.pairs()) return fail(m.svm.rho.size(), " rho for ", m.pairs(), " class pairs");
    if (m.proba() && static_cast<int64_t>(m.prob_a.size()) != m.pairs()) {
      return fail(m.prob_a.size(), " prob_a for ", m.pairs(), " class pairs");
    }
  } else {
    if (n == 0 || coef % static_cast<size_t>(n) != 0) return fail(coef, " coefficients do not split into ", n, " classes");
    m.svm.features = static_cast<int64_t>(coef) / n;
  }
  for (double w : m.svm.coefficients) m.weights_positive = m.weights_positive && w >= 0;
  return m;
}

double SvmRegressRow(const SvmRegressorModel& r, const double* x, SvmScratch& scratch, SvmKernelRowFn kernel_row) {
  const SvmModel& m = r.svm;
  double s = m.rho[0];
  if (m.vectors == 0) {
    s += Dot(x, m.coefficients.data(), m.features);
  } else {
    scratch.kernels.resize(static_cast<size_t>(m.vectors));
    kernel_row(m, x, scratch.kernels.data());
    for (int64_t v = 0; v < m.vectors; ++v) s += m.coefficients[static_cast<size_t>(v)] * scratch.kernels[static_cast<size_t>(v)];
  }
  // A one-class SVM reports inlier (+1) or outlier (-1); a single score is
  // transformed only by PROBIT, as everywhere in ORT.
  if (r.one_class) return s > 0 ? 1.0 : -1.0;
  if (m.post == PostTransform::kProbit) return MlProbit(s);
  return s;
}

int64_t SvmClassifyRow(const SvmClassifierModel& m, const double* x, double* z, SvmScratch& scratch,
                       SvmKernelRowFn kernel_row) {
  const SvmModel& s = m.svm;
  const int64_t n = m.classes();
  if (s.vectors == 0) {
    // liblinear: one score per class, all offset by rho[0] (as ORT and onnx.reference do).
    for (int64_t c = 0; c < n; ++c) z[c] = Dot(x, s.coefficients.data() + c * s.features, s.features) + s.rho[0];
    int64_t best = std::max_element(z, z + n) - z;  // the first of equal scores
    // ORT's binary rule on raw scores: class 1 once the top score is past 0.5
    // (all weights positive, a probability-like score) or past 0 (a margin).
    if (n == 2 && !m.proba() && (m.weights_positive ? z[best] >= 0.5 : z[best] > 0)) best = 1;
    if (n >= 2) ApplyPostTransform(s.post, z, n);
    else if (s.post == PostTransform::kProbit) z[0] = MlProbit(z[0]);
    return best;
  }
  std::vector<double>& kernels = scratch.kernels;
  kernels.resize(static_cast<size_t>(s.vectors));
  kernel_row(s, x, kernels.data());
  std::vector<double>& scores = scratch.scores;
  scores.clear();
  std::vector<int64_t>& votes = scratch.votes;
  votes.assign(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n - 1; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      // Coefficients are [classes - 1, vectors]: class i's vectors against j
      // sit in row j - 1, class j's against i in row i.
      double sum = 0;
      for (int64_t v = m.first[i]; v < m.first[i] + m.per_class[i]; ++v) sum += s.coefficients[static_cast<size_t>((j - 1) * s.vectors + v)] * kernels[static_cast<size_t>(v)];
      for (int64_t v = m.first[j]; v < m.first[j] + m.per_class[j]; ++v) sum += s.coefficients[static_cast<size_t>(i * s.vectors + v)] * kernels[static_cast<size_t>(v)];
      sum += s.rho[scores.size()];
      scores.push_back(sum);
      ++votes[static_cast<size_t>(sum > 0 ? i : j)];
    }
  }
  const int64_t best = std::max_element(votes.begin(), votes.end()) - votes.begin();
  if (m.proba()) {
    // Platt: P(i | i or j) = 1 − σ(a·s + b), kept inside [1e-7, 1 − 1e-7].
    std::vector<float>& r = scratch.pairwise;
    r.assign(static_cast<size_t>(n * n), 0.f);
    size_t pair = 0;
    for (int64_t i = 0; i < n - 1; ++i) {
      for (int64_t j = i + 1; j < n; ++j, ++pair) {
        const float v = static_cast<float>(scores[pair]) * static_cast<float>(m.prob_a[pair]) + static_cast<float>(m.prob_b[pair]);
        float p = 1 - static_cast<float>(MlLogistic(v));
        p = std::min(std::max(p, 1.0e-7f), 1 - 1.0e-7f);
        r[static_cast<size_t>(i * n + j)] = p;
        r[static_cast<size_t>(j * n + i)] = 1 - p;
      }
    }
    std::vector<float>& p = scratch.probabilities;
    p.resize(static_cast<size_t>(n));
    CoupleProbabilities(n, r, p.data());
    for (int64_t c = 0; c < n; ++c) z[c] = p[static_cast<size_t>(c)];
    ApplyPostTransform(s.post, z, n);
  } else if (n == 2) {
    // One pair: its margin as [−s, s], or [1 − s, s] under a transform.
    ExpandBinaryScore(s.post, s.post == PostTransform::kNone ? SecondColumn::kNegation : SecondColumn::kComplement,
                      scores[0], z);
  } else {
    std::copy(scores.begin(), scores.end(), z);
    ApplyPostTransform(s.post, z, m.pairs());
  }
  return best;
}

}  // namespace aic

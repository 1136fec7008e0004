// Support vector machines of ai.onnx.ml: SVMRegressor (one score per row,
// or ±1 for a one-class SVM) and SVMClassifier. Both evaluate a kernel
// (LINEAR, POLY, RBF, SIGMOID) against the support vectors, or, without
// support vectors, are liblinear models (one coefficient row per class).
//
// The classifier follows libsvm as ONNX Runtime implements it: one
// classifier per class pair (i, j), i < j, whose score votes for i when
// positive; the label is the class with most votes (the lowest on a tie).
// With prob_a / prob_b each pair score becomes a probability by Platt's
// sigmoid and the pairwise probabilities are coupled into one distribution
// (Wu, Lin and Weng's method 2), computed in float with ORT's stopping
// rule, since its tolerance (0.005 / classes) is coarser than the
// differences a double computation would make visible.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

enum class KernelType : uint8_t { kLinear, kPoly, kRbf, kSigmoid };

struct SvmKernel {
  KernelType type = KernelType::kLinear;
  double gamma = 0, coef0 = 0, degree = 0;

  double operator()(const double* a, const double* b, int64_t n) const {
    if (type == KernelType::kRbf) {
      double d2 = 0;
      for (int64_t i = 0; i < n; ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
      return std::exp(-gamma * d2);
    }
    double dot = 0;
    for (int64_t i = 0; i < n; ++i) dot += a[i] * b[i];
    if (type == KernelType::kPoly) return std::pow(gamma * dot + coef0, degree);
    if (type == KernelType::kSigmoid) return std::tanh(gamma * dot + coef0);
    return dot;
  }
};

// The parts both ops share: kernel, support vectors (or none), rho.
struct SvmModel {
  SvmKernel kernel;
  std::vector<double> support_vectors;  // vectors × features
  int64_t vectors = 0;                  // 0: a liblinear model
  int64_t features = 0;
  std::vector<double> coefficients;
  std::vector<double> rho;
  PostTransform post = PostTransform::kNone;
};

std::vector<double> Doubles(const Node& node, const char* name) {
  const std::vector<float> v = node.GetFloats(name);
  return std::vector<double>(v.begin(), v.end());
}

absl::StatusOr<SvmModel> DecodeSvm(const Node& node, int64_t vectors) {
  auto fail = [](auto... args) { return absl::InvalidArgumentError(absl::StrCat(args...)); };
  SvmModel m;
  AIC_ASSIGN_OR_RETURN(m.post, ParsePostTransform(node.GetString("post_transform", "NONE")));
  const std::string type = node.GetString("kernel_type", "LINEAR");
  if (type == "LINEAR") m.kernel.type = KernelType::kLinear;
  else if (type == "POLY") m.kernel.type = KernelType::kPoly;
  else if (type == "RBF") m.kernel.type = KernelType::kRbf;
  else if (type == "SIGMOID") m.kernel.type = KernelType::kSigmoid;
  else return fail("kernel_type '", type, "' is not one of LINEAR, POLY, RBF, SIGMOID");
  const std::vector<double> params = Doubles(node, "kernel_params");
  if (!params.empty() && params.size() != 3) return fail("kernel_params must be [gamma, coef0, degree]");
  if (!params.empty()) m.kernel = {m.kernel.type, params[0], params[1], params[2]};
  m.support_vectors = Doubles(node, "support_vectors");
  m.coefficients = Doubles(node, "coefficients");
  m.rho = Doubles(node, "rho");
  if (m.coefficients.empty()) return fail("coefficients are required");
  if (m.rho.empty()) return fail("rho is required");
  m.vectors = vectors;
  if (vectors < 0) return fail("the model has ", vectors, " support vectors");
  if (vectors > 0) {
    if (m.support_vectors.empty() || m.support_vectors.size() % static_cast<size_t>(vectors) != 0) {
      return fail(m.support_vectors.size(), " support_vectors values do not split into ", vectors, " vectors");
    }
    m.features = static_cast<int64_t>(m.support_vectors.size()) / vectors;
  } else {
    m.kernel.type = KernelType::kLinear;  // liblinear: plain dot products
  }
  return m;
}

absl::StatusOr<FeatureRows> ReadSvmRows(const KernelContext& ctx, const SvmModel& m) {
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  if (x.features != m.features) return ctx.Error("X has ", x.features, " features, the model ", m.features);
  return x;
}

absl::Status CheckStaticFeatures(const OpContext& ctx, const SvmModel& m) {
  if (std::optional<int64_t> f = StaticFeatures(ctx); f && *f != m.features) {
    return ctx.Error("X has ", *f, " features, the model ", m.features);
  }
  return absl::OkStatus();
}

Traits SvmTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = ctx.node().op_type;
  t.meaning = ctx.node().op_type == "SVMClassifier"
                  ? "pairwise scores Σ αᵢ·K(x, svᵢ) + ρ, label by votes"
                  : "y = Σ αᵢ·K(x, svᵢ) + ρ";
  t.linearity = ctx.node().GetString("kernel_type", "LINEAR") == "LINEAR" ? Linearity::kAffine : Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.trainable = true;
  t.effect_detail = ShapeChange(ctx);
  return t;
}

// One kernel evaluation (≈ 2·F flops) per support vector, or a dot product
// per coefficient row for liblinear models.
Cost SvmCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& x = ctx.input_shape(0);
  const int64_t sv = static_cast<int64_t>(ctx.node().GetFloats("support_vectors").size());
  const int64_t coef = static_cast<int64_t>(ctx.node().GetFloats("coefficients").size());
  c.params = sv + coef;
  if (!x.IsStatic() || x.rank() < 1) return c;
  c.macs = (x.rank() == 2 ? x[0].value() : 1) * (sv > 0 ? sv + coef : coef);
  c.flops = 2 * c.macs;
  return c;
}

// ---- SVMRegressor ----

absl::StatusOr<SvmModel> DecodeRegressor(const Node& node) {
  AIC_ASSIGN_OR_RETURN(SvmModel m, DecodeSvm(node, node.GetInt("n_supports", 0)));
  if (m.vectors > 0 && static_cast<int64_t>(m.coefficients.size()) != m.vectors) {
    return absl::InvalidArgumentError(absl::StrCat(m.coefficients.size(), " coefficients for ", m.vectors, " support vectors"));
  }
  if (m.vectors == 0) m.features = static_cast<int64_t>(m.coefficients.size());
  return m;
}

absl::Status InferSvmRegressor(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<SvmModel> m = DecodeRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_RETURN_IF_ERROR(CheckStaticFeatures(ctx, *m));
  ctx.set_output(0, DType::kFloat, Shape({RowsDim(ctx), Dim(1)}));
  return absl::OkStatus();
}

absl::Status SvmRegressorKernel(KernelContext& ctx) {
  absl::StatusOr<SvmModel> m = DecodeRegressor(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadSvmRows(ctx, *m));
  const bool one_class = ctx.node().GetInt("one_class", 0) != 0;
  std::vector<double> y(static_cast<size_t>(x.rows));
  for (int64_t r = 0; r < x.rows; ++r) {
    double s = m->rho[0];
    if (m->vectors == 0) {
      s += m->kernel(x.row(r), m->coefficients.data(), m->features);
    } else {
      for (int64_t v = 0; v < m->vectors; ++v) {
        s += m->coefficients[static_cast<size_t>(v)] * m->kernel(x.row(r), m->support_vectors.data() + v * m->features, m->features);
      }
    }
    // A one-class SVM reports inlier (+1) or outlier (-1); a single score is
    // transformed only by PROBIT, as everywhere in ORT.
    if (one_class) s = s > 0 ? 1.0 : -1.0;
    else if (m->post == PostTransform::kProbit) s = MlProbit(s);
    y[static_cast<size_t>(r)] = s;
  }
  ctx.set_output(0, FloatTensor(y, {x.rows, 1}));
  return absl::OkStatus();
}

// ---- SVMClassifier ----

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

absl::StatusOr<SvmClassifierModel> DecodeClassifier(const Node& node) {
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
    if (coef % static_cast<size_t>(n) != 0) return fail(coef, " coefficients do not split into ", n, " classes");
    m.svm.features = static_cast<int64_t>(coef) / n;
  }
  for (double w : m.svm.coefficients) m.weights_positive = m.weights_positive && w >= 0;
  return m;
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

// One row: fills z (columns()) and returns the picked class.
int64_t ClassifyRow(const SvmClassifierModel& m, const double* x, double* z) {
  const SvmModel& s = m.svm;
  const int64_t n = m.classes();
  if (s.vectors == 0) {
    // liblinear: one score per class, all offset by rho[0] (as ORT and onnx.reference do).
    for (int64_t c = 0; c < n; ++c) z[c] = s.kernel(x, s.coefficients.data() + c * s.features, s.features) + s.rho[0];
    int64_t best = std::max_element(z, z + n) - z;  // the first of equal scores
    // ORT's binary rule on raw scores: class 1 once the top score is past 0.5
    // (all weights positive, a probability-like score) or past 0 (a margin).
    if (n == 2 && !m.proba() && (m.weights_positive ? z[best] >= 0.5 : z[best] > 0)) best = 1;
    if (n >= 2) ApplyPostTransform(s.post, z, n);
    else if (s.post == PostTransform::kProbit) z[0] = MlProbit(z[0]);
    return best;
  }
  std::vector<double> kernels(static_cast<size_t>(s.vectors));
  for (int64_t v = 0; v < s.vectors; ++v) kernels[static_cast<size_t>(v)] = s.kernel(x, s.support_vectors.data() + v * s.features, s.features);
  std::vector<double> scores;
  std::vector<int64_t> votes(static_cast<size_t>(n), 0);
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
    std::vector<float> r(static_cast<size_t>(n * n), 0.f);
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
    std::vector<float> p(static_cast<size_t>(n));
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

absl::Status InferSvmClassifier(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  absl::StatusOr<SvmClassifierModel> m = DecodeClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_RETURN_IF_ERROR(CheckStaticFeatures(ctx, m->svm));
  const Dim rows = RowsDim(ctx);
  ctx.set_output(0, m->labels.dtype(), Shape({rows}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kFloat, Shape({rows, Dim(m->columns())}));
  return absl::OkStatus();
}

absl::Status SvmClassifierKernel(KernelContext& ctx) {
  absl::StatusOr<SvmClassifierModel> m = DecodeClassifier(ctx.node());
  if (!m.ok()) return ctx.Error(m.status().message());
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadSvmRows(ctx, m->svm));
  const int64_t cols = m->columns();
  std::vector<double> z(static_cast<size_t>(x.rows * cols));
  std::vector<int64_t> picks(static_cast<size_t>(x.rows));
  for (int64_t r = 0; r < x.rows; ++r) picks[static_cast<size_t>(r)] = ClassifyRow(*m, x.row(r), z.data() + r * cols);
  ctx.set_output(0, m->labels.Pick(picks));
  if (ctx.num_outputs() > 1) ctx.set_output(1, FloatTensor(z, {x.rows, cols}));
  return absl::OkStatus();
}

}  // namespace

void RegisterSvmOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "SVMRegressor",
      .since_version = 1,
      .infer = InferSvmRegressor,
      .traits = SvmTraits,
      .cost = SvmCost,
      .kernel = SvmRegressorKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "SVMClassifier",
      .since_version = 1,
      .infer = InferSvmClassifier,
      .traits = SvmTraits,
      .cost = SvmCost,
      .kernel = SvmClassifierKernel,
  });
}

}  // namespace aic

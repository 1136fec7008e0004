// Parses RNN activation names and alpha/beta lists; evaluates them in double.
#include "ops/rnn/rnn_activation.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace aic {

namespace {

struct Known {
  const char* name;
  int num_params;  // how many of alpha, beta it consumes
  double alpha, beta;  // defaults when the lists run short
};

// Defaults follow the standalone ONNX ops of the same name.
constexpr Known kKnown[] = {
    {"Relu", 0, 0, 0},           {"Tanh", 0, 0, 0},          {"Sigmoid", 0, 0, 0},
    {"Affine", 2, 1.0, 0.0},     {"LeakyRelu", 1, 0.01, 0},  {"ThresholdedRelu", 1, 1.0, 0},
    {"ScaledTanh", 2, 1.0, 1.0}, {"HardSigmoid", 2, 0.2, 0.5}, {"Elu", 1, 1.0, 0},
    {"Softsign", 0, 0, 0},       {"Softplus", 0, 0, 0},
};

bool EqualsIgnoreCase(const std::string& a, const char* b) {
  std::string lb(b);
  if (a.size() != lb.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(lb[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

double RnnActivation::operator()(double x) const {
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "Tanh") return std::tanh(x);
  if (name == "Relu") return std::max(x, 0.0);
  if (name == "Affine") return alpha * x + beta;
  if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
  if (name == "ThresholdedRelu") return x > alpha ? x : 0.0;
  if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
  if (name == "HardSigmoid") return std::min(std::max(alpha * x + beta, 0.0), 1.0);
  if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
  if (name == "Softsign") return x / (1 + std::fabs(x));
  if (name == "Softplus") return std::log1p(std::exp(x));
  return x;  // unreachable: ParseRnnActivations accepts only known names
}

absl::StatusOr<std::vector<RnnActivation>> ParseRnnActivations(
    const Node& node, const std::vector<std::string>& defaults, int num_directions) {
  std::vector<std::string> names;
  if (const Attribute* a = node.FindAttr("activations")) names = a->strings;
  const size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int d = 0; d < num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && num_directions == 2) {
    // One direction's list given for a bidirectional op: both use it.
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = std::move(twice);
  }
  if (names.size() != per_dir * static_cast<size_t>(num_directions)) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": expected ",
                                                   per_dir * num_directions, " activations, got ",
                                                   names.size()));
  }
  std::vector<float> alphas = node.GetFloats("activation_alpha");
  std::vector<float> betas = node.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<RnnActivation> out;
  for (const std::string& n : names) {
    const Known* k = nullptr;
    for (const Known& c : kKnown) {
      if (EqualsIgnoreCase(n, c.name)) k = &c;
    }
    if (k == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.Describe(), ": unknown activation '", n, "'"));
    }
    RnnActivation act{k->name, k->alpha, k->beta};
    if (k->num_params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (k->num_params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    out.push_back(act);
  }
  return out;
}

}  // namespace aic

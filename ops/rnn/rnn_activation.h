// The activation functions that RNN, GRU and LSTM name by string in their
// `activations` attribute, with the alpha/beta values they consume from
// `activation_alpha` / `activation_beta` (in order, only by the functions that
// take them).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

struct RnnActivation {
  std::string name;  // "Sigmoid", "Tanh", "Relu", "Affine", ...
  double alpha = 0;
  double beta = 0;
  double operator()(double x) const;
};

// The node's activations, `per_direction` of them for each of `num_directions`,
// defaults filled in. `defaults` lists one direction's default names.
absl::StatusOr<std::vector<RnnActivation>> ParseRnnActivations(
    const Node& node, const std::vector<std::string>& defaults, int num_directions);

}  // namespace aic

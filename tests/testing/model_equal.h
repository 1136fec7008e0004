// Structural equality of two models, for round-trip tests: same metadata,
// opsets, functions, and graphs with the same nodes (op, domain, name, input
// and output names, attribute values), initializers bitwise equal, and the
// same declared types. Returns "" when equal, else the first difference.
#pragma once

#include <string>

#include "graph/model.h"

namespace aic::testing {

std::string DiffModels(const Model& a, const Model& b);
std::string DiffGraphs(const Graph& a, const Graph& b, const std::string& where);

}  // namespace aic::testing

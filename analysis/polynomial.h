// Costs as polynomials in a model's symbolic dims ("4.09 G·batch",
// "1.57 M·batch·sequence + 8.19 k·batch·sequence²"), found by measuring:
// FitPolynomials evaluates a cost function at integer points and
// interpolates, one symbol at a time to find each symbol's degree, then on
// the tensor grid of those degrees, and keeps the result only when it also
// predicts a point off the grid. Nothing here knows about ONNX: the
// measurement is a callback (analysis/symbolic_cost.h gives it a model).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace aic::analysis {

struct Monomial {
  std::vector<int> exponents;  // one per symbol
  double coefficient = 0;
};

struct Polynomial {
  std::vector<std::string> symbols;
  std::vector<Monomial> terms;  // nonzero coefficients, highest total degree first

  double Evaluate(const std::vector<int64_t>& values) const;
  bool IsConstant() const;
  // "1.57 M·batch·sequence + 768·batch·sequence²"; "0" when empty. Coefficients
  // of 10^4 and more in Short()'s k/M/G form (3 significant digits), smaller
  // integers as integers; `exact` (if given) says whether no coefficient was
  // rounded in print.
  std::string ToString(bool* exact = nullptr) const;
};

// Sizes tried for one symbol: step·(2, 3, 4, ...). Step 1 first; a symbol
// whose cost is not polynomial there (strided windows: floor((H-k)/s)) is
// retried on multiples of 32, where the floors of stride-2 chains are exact,
// then of 320 (a waveform front end's strides), and the result says so.
struct SymbolDomain {
  int64_t step = 1;
};

struct PolynomialFit {
  bool ok = false;      // some quantity has an expression
  std::string why_not;  // when !ok: which symbol, and what failed
  std::vector<std::string> symbols;
  std::vector<SymbolDomain> domains;
  std::vector<int> degrees;           // per symbol
  // One per measured quantity, in the callback's order; `valid[q]` says
  // whether quantity q is a polynomial (of degree ≤ max_degree per symbol,
  // checked off the grid). A peak of live memory is a maximum of
  // polynomials and often is not one: it is dropped, the others kept.
  std::vector<Polynomial> quantities;
  std::vector<bool> valid;
  int evaluations = 0;
  // "sequence ≥ 2", "height a multiple of 32": where the expressions are exact.
  std::string domain_note;
};

// The callback measures every quantity at one point (one size per symbol);
// it returns the same number of quantities each time, or an error where the
// model cannot be analysed at that point. `max_degree` bounds each symbol's
// degree (attention is quadratic in its sequence).
using MeasureFn = std::function<absl::StatusOr<std::vector<double>>(const std::vector<int64_t>&)>;
PolynomialFit FitPolynomials(const std::vector<std::string>& symbols, const MeasureFn& measure,
                             int max_degree = 3);

}  // namespace aic::analysis

#include "analysis/polynomial.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/format.h"

namespace aic::analysis {

double Polynomial::Evaluate(const std::vector<int64_t>& values) const {
  long double sum = 0;
  for (const Monomial& m : terms) {
    long double t = m.coefficient;
    for (size_t i = 0; i < m.exponents.size(); ++i) {
      for (int e = 0; e < m.exponents[i]; ++e) t *= static_cast<long double>(values[i]);
    }
    sum += t;
  }
  return static_cast<double>(sum);
}

bool Polynomial::IsConstant() const {
  for (const Monomial& m : terms) {
    for (int e : m.exponents) {
      if (e != 0) return false;
    }
  }
  return true;
}

namespace {

// `exact` turns false when the printed form rounds c.
std::string Coefficient(double c, bool& exact) {
  double a = std::fabs(c);
  if (a == std::round(a) && a < 1e4) return std::to_string(static_cast<int64_t>(c));
  if (a >= 1e4) {
    exact = false;
    return Short(static_cast<int64_t>(std::llround(c)));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", c);
  exact &= std::strtod(buf, nullptr) == c;
  return buf;
}

const char* Power(int e) {
  switch (e) {
    case 2: return "²";
    case 3: return "³";
    case 4: return "⁴";
    case 5: return "⁵";
    case 6: return "⁶";
    default: return "";
  }
}

}  // namespace

std::string Polynomial::ToString(bool* exact) const {
  bool all_exact = true;
  if (exact != nullptr) *exact = true;
  if (terms.empty()) return "0";
  std::string out;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Monomial& m = terms[t];
    std::vector<std::string> factors;
    for (size_t i = 0; i < m.exponents.size(); ++i) {
      if (m.exponents[i] > 0) factors.push_back(absl::StrCat(symbols[i], Power(m.exponents[i])));
    }
    double c = m.coefficient;
    if (t > 0) {
      out += c < 0 ? " − " : " + ";
    } else if (c < 0) {
      out += "−";
    }
    c = std::fabs(c);
    std::string coef = Coefficient(c, all_exact);
    if (factors.empty()) {
      out += coef;
    } else if (coef == "1") {
      out += absl::StrJoin(factors, "·");
    } else {
      absl::StrAppend(&out, coef, "·", absl::StrJoin(factors, "·"));
    }
  }
  if (exact != nullptr) *exact = all_exact;
  return out;
}

namespace {

// Solves the Vandermonde system V·c = f for the monomial coefficients of the
// polynomial through (x[k], f[k]), in long double (degree ≤ 3 on at most
// 4 sizes per solve: well within its 64-bit mantissa at any size tried).
std::vector<long double> SolveVandermonde(const std::vector<long double>& x,
                                          std::vector<long double> f) {
  const size_t n = x.size();
  std::vector<std::vector<long double>> a(n, std::vector<long double>(n));
  for (size_t r = 0; r < n; ++r) {
    long double p = 1;
    for (size_t c = 0; c < n; ++c, p *= x[r]) a[r][c] = p;
  }
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    std::swap(a[col], a[pivot]);
    std::swap(f[col], f[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      long double k = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= k * a[col][c];
      f[r] -= k * f[col];
    }
  }
  for (size_t r = 0; r < n; ++r) f[r] /= a[r][r];
  return f;
}

long double EvaluateUnivariate(const std::vector<long double>& coef, long double x) {
  long double sum = 0;
  for (size_t k = coef.size(); k-- > 0;) sum = sum * x + coef[k];
  return sum;
}

// Measured costs are integers (or sums of them): a prediction is right when
// it rounds to the measurement.
bool Agrees(long double predicted, double measured) {
  if (!std::isfinite(predicted) || !std::isfinite(measured)) return false;
  return std::fabs(predicted - static_cast<long double>(measured)) <=
         0.5L + 1e-9L * std::fabs(static_cast<long double>(measured));
}

constexpr int kNoDegree = -1;

// Lattices a symbol's sizes are tried on, in order: 1, then multiples of 32
// (image sides: the floors of five stride-2 stages are exact there), then of
// 320 (a waveform's front end striding 5 and six times 2, as wav2vec2's).
constexpr int64_t kSteps[] = {1, 32, 320};

class Fitter {
 public:
  Fitter(const std::vector<std::string>& symbols, const MeasureFn& measure, int max_degree)
      : symbols_(symbols), measure_(measure), max_degree_(max_degree) {}

  PolynomialFit Run() {
    PolynomialFit fit;
    fit.symbols = symbols_;
    const size_t s = symbols_.size();
    steps_.assign(s, 1);
    if (!Measure(Base()).ok()) {
      // Nothing works at sizes 2, 3, ...: an image model's sides, a
      // waveform. Every symbol starts on a coarser lattice; each goes back
      // to a finer one below where that fits as many quantities.
      bool measurable = false;
      for (int64_t step : kSteps) {
        steps_.assign(s, step);
        if ((measurable = Measure(Base()).ok())) break;
      }
      if (!measurable) {
        return Fail(fit, absl::StrCat("not analysable at ", PointText(Base()),
                                      last_error_.empty() ? "" : ": ", last_error_));
      }
    }
    // Per symbol, the step that fits more quantities (step 1 on a tie).
    for (size_t i = 0; i < s; ++i) {
      std::vector<std::pair<int64_t, std::vector<int>>> tries;
      for (int64_t step : kSteps) {
        steps_[i] = step;
        if (!Measure(Base()).ok()) continue;
        tries.push_back({step, ProbeDegrees(i)});
        if (Fitted(tries.back().second) == quantities_) break;  // all fit: no need to try more
      }
      if (tries.empty()) {
        return Fail(fit, absl::StrCat("not analysable for any size of ", symbols_[i],
                                      last_error_.empty() ? "" : ": ", last_error_));
      }
      auto best = std::max_element(tries.begin(), tries.end(), [&](const auto& a, const auto& b) {
        return Fitted(a.second) < Fitted(b.second);
      });
      steps_[i] = best->first;
    }
    // Each quantity's degree per symbol, probed once every step is chosen
    // (an earlier symbol's probes saw the later ones on their first step).
    std::vector<std::vector<int>> degree(s);
    for (size_t i = 0; i < s; ++i) degree[i] = ProbeDegrees(i);
    fit.valid.assign(static_cast<size_t>(std::max<int64_t>(quantities_, 0)), true);
    degrees_.assign(s, 0);
    for (size_t q = 0; q < fit.valid.size(); ++q) {
      for (size_t i = 0; i < s; ++i) {
        if (degree[i].empty() || degree[i][q] == kNoDegree) fit.valid[q] = false;
      }
      if (!fit.valid[q]) continue;
      for (size_t i = 0; i < s; ++i) degrees_[i] = std::max(degrees_[i], degree[i][q]);
    }
    if (std::find(fit.valid.begin(), fit.valid.end(), true) == fit.valid.end()) {
      return Fail(fit, absl::StrCat("no cost is a polynomial of degree ≤ ", max_degree_,
                                    " in the symbols", last_error_.empty() ? "" : " (",
                                    last_error_, last_error_.empty() ? "" : ")"));
    }
    if (!FitGrid(fit)) return fit;
    // Points off the grid in every symbol at once check the cross terms: one
    // just past the grid, one far out (a cost periodic in a size, or one
    // that changes form past the probes, misses it).
    for (int far : {0, 1}) {
      std::vector<int64_t> check(s);
      for (size_t i = 0; i < s; ++i) check[i] = Node(i, far ? 3 * degrees_[i] + 7 : degrees_[i] + 1);
      auto measured = Measure(check);
      if (!measured.ok()) {
        if (far) break;  // the far point may be past what the model takes
        return Fail(fit, absl::StrCat("not analysable at ", PointText(check), ": ",
                                      measured.status().message()));
      }
      for (size_t q = 0; q < fit.quantities.size(); ++q) {
        if (fit.valid[q] && !Agrees(fit.quantities[q].Evaluate(check), (*measured)[q])) {
          fit.valid[q] = false;
        }
      }
    }
    fit.ok = std::find(fit.valid.begin(), fit.valid.end(), true) != fit.valid.end();
    if (!fit.ok) {
      return Fail(fit, "the fitted expressions miss the costs measured off the grid");
    }
    fit.degrees = degrees_;
    for (size_t i = 0; i < s; ++i) fit.domains.push_back({steps_[i]});
    std::vector<std::string> where;
    for (size_t i = 0; i < s; ++i) {
      where.push_back(steps_[i] == 1 ? absl::StrCat(symbols_[i], " ≥ 2")
                                     : absl::StrCat(symbols_[i], " a multiple of ", steps_[i]));
    }
    // The costs' formulas are polynomials on those lattices; a maximum over
    // nodes (peak memory) may change form past the largest size measured.
    std::vector<int64_t> largest(s, 0);
    for (const auto& [point, value] : cache_) {
      if (!value.ok()) continue;
      for (size_t i = 0; i < s; ++i) largest[i] = std::max(largest[i], point[i]);
    }
    std::vector<std::string> upto;
    for (size_t i = 0; i < s; ++i) upto.push_back(absl::StrCat(symbols_[i], "=", largest[i]));
    fit.domain_note = absl::StrCat(absl::StrJoin(where, ", "), "; measured up to ", absl::StrJoin(upto, ", "));
    fit.evaluations = static_cast<int>(cache_.size());
    return fit;
  }

 private:
  int64_t Node(size_t i, int k) const { return steps_[i] * (2 + k); }
  std::vector<int64_t> Base() const {
    std::vector<int64_t> p(symbols_.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = Node(i, 0);
    return p;
  }
  std::string PointText(const std::vector<int64_t>& p) const {
    std::vector<std::string> parts;
    for (size_t i = 0; i < p.size(); ++i) parts.push_back(absl::StrCat(symbols_[i], "=", p[i]));
    return absl::StrJoin(parts, ", ");
  }
  static int64_t Fitted(const std::vector<int>& degrees) {
    return std::count_if(degrees.begin(), degrees.end(), [](int d) { return d != kNoDegree; });
  }

  const absl::StatusOr<std::vector<double>>& Measure(const std::vector<int64_t>& point) {
    auto it = cache_.find(point);
    if (it == cache_.end()) {
      // A bound on the work (each size re-analyses the whole graph): many
      // symbols or a slow model give up with a reason, not a hang.
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      absl::StatusOr<std::vector<double>> v =
          cache_.size() >= kMaxEvaluations || seconds > kMaxSeconds
              ? absl::ResourceExhaustedError(absl::StrCat("gave up after ", cache_.size(), " sizes (",
                                                          static_cast<int>(seconds), " s)"))
              : measure_(point);
      if (v.ok() && quantities_ >= 0 && static_cast<int64_t>(v->size()) != quantities_) {
        v = absl::InternalError("a different set of quantities at this size");
      }
      if (v.ok()) quantities_ = static_cast<int64_t>(v->size());
      if (!v.ok()) last_error_ = absl::StrCat(PointText(point), ": ", v.status().message());
      it = cache_.emplace(point, std::move(v)).first;
    }
    return it->second;
  }

  // Per quantity, the smallest degree d ≤ max_degree whose interpolant
  // through d+1 sizes of symbol i (the others at their base) predicts the
  // next two sizes; kNoDegree where none does (or a size cannot be measured).
  std::vector<int> ProbeDegrees(size_t i) {
    std::vector<int> degree(static_cast<size_t>(std::max<int64_t>(quantities_, 0)), kNoDegree);
    std::vector<std::vector<long double>> interpolant(degree.size());
    std::vector<long double> xs;
    std::vector<std::vector<double>> values;
    for (int k = 0; k <= max_degree_ + 2; ++k) {
      std::vector<int64_t> p = Base();
      p[i] = Node(i, k);
      const auto& v = Measure(p);
      if (!v.ok()) break;
      if (degree.size() != v->size()) {
        degree.assign(v->size(), kNoDegree);
        interpolant.assign(v->size(), {});
      }
      xs.push_back(static_cast<long double>(p[i]));
      values.push_back(*v);
      if (k < 2) continue;
      const int d = k - 2;  // fit through points 0..d, predict points d+1 and d+2
      bool open = false;
      for (size_t q = 0; q < degree.size(); ++q) {
        if (degree[q] != kNoDegree) continue;
        std::vector<long double> f;
        for (int j = 0; j <= d; ++j) f.push_back(values[j][q]);
        std::vector<long double> c =
            SolveVandermonde(std::vector<long double>(xs.begin(), xs.begin() + d + 1), f);
        if (Agrees(EvaluateUnivariate(c, xs[k - 1]), values[k - 1][q]) &&
            Agrees(EvaluateUnivariate(c, xs[k]), values[k][q])) {
          degree[q] = d;
          interpolant[q] = std::move(c);
        } else {
          open = true;
        }
      }
      if (!open) break;
    }
    // A size far out: a cost periodic in the size (n mod 7) looks like a
    // polynomial over a few neighbouring sizes.
    int highest = 0;
    for (int d : degree) highest = std::max(highest, d);
    std::vector<int64_t> far = Base();
    far[i] = Node(i, 3 * highest + 7);
    const auto& v = Measure(far);
    for (size_t q = 0; v.ok() && q < degree.size(); ++q) {  // past what the model takes: no check
      if (degree[q] == kNoDegree) continue;
      if (!Agrees(EvaluateUnivariate(interpolant[q], static_cast<long double>(far[i])), (*v)[q])) {
        degree[q] = kNoDegree;
      }
    }
    return degree;
  }

  // Interpolates every valid quantity on the grid of (degree+1) sizes per
  // symbol: the coefficient tensor is V₁⁻¹ ⊗ … ⊗ Vₛ⁻¹ applied to the
  // measured values, one axis at a time.
  bool FitGrid(PolynomialFit& fit) {
    const size_t s = symbols_.size();
    std::vector<size_t> extent(s), stride(s);
    size_t total = 1;
    for (size_t i = s; i-- > 0;) {
      extent[i] = static_cast<size_t>(degrees_[i] + 1);
      stride[i] = total;
      total *= extent[i];
    }
    std::vector<std::vector<long double>> grid;  // [point][quantity]
    for (size_t flat = 0; flat < total; ++flat) {
      std::vector<int64_t> p(s);
      for (size_t i = 0; i < s; ++i) p[i] = Node(i, static_cast<int>(flat / stride[i] % extent[i]));
      const auto& v = Measure(p);
      if (!v.ok()) {
        Fail(fit, absl::StrCat("not analysable at ", PointText(p), ": ", v.status().message()));
        return false;
      }
      grid.emplace_back(v->begin(), v->end());
    }
    const size_t nq = grid.empty() ? 0 : grid[0].size();
    for (size_t i = 0; i < s; ++i) {
      std::vector<long double> xs;
      for (size_t k = 0; k < extent[i]; ++k) xs.push_back(Node(i, static_cast<int>(k)));
      for (size_t flat = 0; flat < total; ++flat) {
        if (flat / stride[i] % extent[i] != 0) continue;  // one fiber per start
        for (size_t q = 0; q < nq; ++q) {
          if (!fit.valid[q]) continue;
          std::vector<long double> f;
          for (size_t k = 0; k < extent[i]; ++k) f.push_back(grid[flat + k * stride[i]][q]);
          std::vector<long double> c = SolveVandermonde(xs, f);
          for (size_t k = 0; k < extent[i]; ++k) grid[flat + k * stride[i]][q] = c[k];
        }
      }
    }
    fit.quantities.assign(nq, Polynomial{symbols_, {}});
    for (size_t q = 0; q < nq; ++q) {
      if (!fit.valid[q]) continue;
      for (size_t flat = 0; flat < total; ++flat) {
        long double c = grid[flat][q];
        long double r = std::round(c);
        if (std::fabs(c - r) <= 1e-6L * std::max<long double>(1, std::fabs(c))) c = r;
        if (c == 0) continue;
        Monomial m;
        for (size_t i = 0; i < s; ++i) m.exponents.push_back(static_cast<int>(flat / stride[i] % extent[i]));
        m.coefficient = static_cast<double>(c);
        fit.quantities[q].terms.push_back(std::move(m));
      }
      auto degree = [](const Monomial& m) { return std::accumulate(m.exponents.begin(), m.exponents.end(), 0); };
      std::stable_sort(fit.quantities[q].terms.begin(), fit.quantities[q].terms.end(),
                       [&](const Monomial& a, const Monomial& b) { return degree(a) > degree(b); });
    }
    return true;
  }

  PolynomialFit Fail(PolynomialFit& fit, std::string why) {
    fit.ok = false;
    fit.why_not = std::move(why);
    fit.quantities.clear();
    fit.valid.clear();
    fit.evaluations = static_cast<int>(cache_.size());
    return fit;
  }

  static constexpr size_t kMaxEvaluations = 400;
  static constexpr double kMaxSeconds = 30;
  const std::vector<std::string>& symbols_;
  const MeasureFn& measure_;
  const int max_degree_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<int64_t> steps_;
  std::vector<int> degrees_;
  int64_t quantities_ = -1;
  std::string last_error_;
  std::map<std::vector<int64_t>, absl::StatusOr<std::vector<double>>> cache_;
};

}  // namespace

PolynomialFit FitPolynomials(const std::vector<std::string>& symbols, const MeasureFn& measure,
                             int max_degree) {
  return Fitter(symbols, measure, max_degree).Run();
}

}  // namespace aic::analysis

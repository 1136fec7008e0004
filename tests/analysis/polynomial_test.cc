// FitPolynomials on cost functions with known answers: degrees found per
// symbol, cross terms, the fallback to multiples of 32 for floor arithmetic,
// refusal of what is not a polynomial, and the printed form.
#include "analysis/polynomial.h"

#include <gtest/gtest.h>

#include <cmath>

namespace aic::analysis {
namespace {

TEST(FitPolynomials, FindsDegreesAndCrossTerms) {
  // Attention-like: 3 + 5·batch + 7·batch·sequence², and a constant.
  int calls = 0;
  MeasureFn f = [&](const std::vector<int64_t>& x) -> absl::StatusOr<std::vector<double>> {
    ++calls;
    double b = static_cast<double>(x[0]), s = static_cast<double>(x[1]);
    return std::vector<double>{3 + 5 * b + 7 * b * s * s, 42};
  };
  PolynomialFit fit = FitPolynomials({"batch", "sequence"}, f);
  ASSERT_TRUE(fit.ok) << fit.why_not;
  EXPECT_EQ(fit.degrees, (std::vector<int>{1, 2}));
  EXPECT_EQ(fit.quantities[0].ToString(), "7·batch·sequence² + 5·batch + 3");
  EXPECT_EQ(fit.quantities[1].ToString(), "42");
  EXPECT_TRUE(fit.quantities[1].IsConstant());
  EXPECT_EQ(fit.quantities[0].Evaluate({1, 128}), 3 + 5 + 7 * 128.0 * 128.0);
  EXPECT_EQ(fit.domain_note.substr(0, fit.domain_note.find(';')), "batch ≥ 2, sequence ≥ 2");
  EXPECT_EQ(fit.evaluations, calls);  // every size measured once
  EXPECT_LE(calls, 16);
}

TEST(FitPolynomials, StridedSidesFitOnMultiplesOf32) {
  // A stride-2 conv's output pixels: floor((H - 1) / 2 + 1)·floor((W - 1) / 2 + 1)·C,
  // and nothing works below 16 (the kernel does not fit).
  MeasureFn f = [](const std::vector<int64_t>& x) -> absl::StatusOr<std::vector<double>> {
    if (x[1] < 16 || x[2] < 16) return absl::InvalidArgumentError("kernel larger than input");
    double ho = std::floor((x[1] - 1) / 2.0) + 1, wo = std::floor((x[2] - 1) / 2.0) + 1;
    return std::vector<double>{static_cast<double>(x[0]) * ho * wo * 64};
  };
  PolynomialFit fit = FitPolynomials({"batch", "height", "width"}, f);
  ASSERT_TRUE(fit.ok) << fit.why_not;
  EXPECT_EQ(fit.domains[0].step, 1);
  EXPECT_EQ(fit.domains[1].step, 32);
  EXPECT_EQ(fit.domains[2].step, 32);
  EXPECT_EQ(fit.quantities[0].ToString(), "16·batch·height·width");
  EXPECT_EQ(fit.domain_note.substr(0, fit.domain_note.find(';')),
            "batch ≥ 2, height a multiple of 32, width a multiple of 32");
}

TEST(FitPolynomials, RefusesWhatIsNotAPolynomial) {
  MeasureFn f = [](const std::vector<int64_t>& x) -> absl::StatusOr<std::vector<double>> {
    return std::vector<double>{std::exp2(static_cast<double>(x[0]))};
  };
  PolynomialFit fit = FitPolynomials({"n"}, f);
  EXPECT_FALSE(fit.ok);
  EXPECT_NE(fit.why_not.find("no cost is a polynomial of degree ≤ 3"), std::string::npos) << fit.why_not;
}

// A quantity that is no polynomial on any lattice tried (periodic in n,
// exponential) is dropped; the ones that are keep their expressions. One
// that is a polynomial only past small sizes (max(12, n²), like a peak of
// live memory that moves to another node as sizes grow) is fitted on the
// lattice where it is one, and that lattice is said.
TEST(FitPolynomials, DropsOnlyTheQuantitiesThatAreNotPolynomials) {
  MeasureFn f = [](const std::vector<int64_t>& x) -> absl::StatusOr<std::vector<double>> {
    double n = static_cast<double>(x[0]);
    return std::vector<double>{6 * n, std::fmod(n, 7.0) * n, std::exp2(n), std::max(12.0, n * n)};
  };
  PolynomialFit fit = FitPolynomials({"n"}, f);
  ASSERT_TRUE(fit.ok) << fit.why_not;
  EXPECT_EQ(fit.valid, (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(fit.quantities[0].ToString(), "6·n");
  EXPECT_EQ(fit.quantities[3].ToString(), "n²");
  EXPECT_EQ(fit.domain_note.substr(0, fit.domain_note.find(';')), "n a multiple of 32");
}

TEST(FitPolynomials, ReportsWhereTheModelCannotBeMeasured) {
  MeasureFn f = [](const std::vector<int64_t>&) -> absl::StatusOr<std::vector<double>> {
    return absl::InvalidArgumentError("Reshape 'r': cannot reshape");
  };
  PolynomialFit fit = FitPolynomials({"batch"}, f);
  EXPECT_FALSE(fit.ok);
  EXPECT_NE(fit.why_not.find("Reshape 'r': cannot reshape"), std::string::npos) << fit.why_not;
}

TEST(Polynomial, PrintsLargeCoefficientsShortAndSigns) {
  Polynomial p{{"batch", "sequence"}, {{{1, 1}, 1572864}, {{1, 0}, -768}, {{0, 0}, 1}}};
  bool exact = true;
  EXPECT_EQ(p.ToString(&exact), "1.57 M·batch·sequence − 768·batch + 1");
  EXPECT_FALSE(exact);  // 1572864 printed as 1.57 M
  Polynomial small{{"n"}, {{{1}, -6}, {{0}, 3}}};
  EXPECT_EQ(small.ToString(&exact), "−6·n + 3");
  EXPECT_TRUE(exact);
  Polynomial q{{"h"}, {{{2}, 0.0625}}};
  EXPECT_EQ(q.ToString(), "0.0625·h²");
  EXPECT_EQ(Polynomial{}.ToString(), "0");
}

}  // namespace
}  // namespace aic::analysis

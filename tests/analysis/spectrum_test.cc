// Weight spectra: LAPACK singular values against hand-known matrices, the
// rank measures, and the low-rank candidate's rank, error and pay-off.
#include "analysis/spectrum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace aic::analysis {
namespace {

Tensor Diagonal(const std::vector<float>& d, int64_t rows, int64_t cols) {
  Tensor t(DType::kFloat, {rows, cols});
  for (size_t i = 0; i < d.size(); ++i) t.mutable_data<float>()[i * cols + i] = d[i];
  return t;
}

// U·V with U [rows, r], V [r, cols] random: rank exactly r.
Tensor RankR(int64_t rows, int64_t cols, int64_t r, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> u(rows * r), v(r * cols);
  for (double& x : u) x = normal(rng);
  for (double& x : v) x = normal(rng);
  Tensor t(DType::kFloat, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < r; ++k) s += u[i * r + k] * v[k * cols + j];
      t.mutable_data<float>()[i * cols + j] = static_cast<float>(s);
    }
  }
  return t;
}

TEST(Spectrum, DiagonalSingularValuesSorted) {
  auto s = SingularValues(Diagonal({1, 4, 2}, 3, 5), 3, 5);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_NEAR((*s)[0], 4, 1e-12);
  EXPECT_NEAR((*s)[1], 2, 1e-12);
  EXPECT_NEAR((*s)[2], 1, 1e-12);
}

TEST(Spectrum, OrientationDoesNotMatter) {
  Tensor w = RankR(7, 4, 4, 1);
  auto a = SingularValues(w, 7, 4);
  auto b = SingularValues(w.WithDims({4, 7}), 4, 7);  // another view of the same bytes
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), b->size());
}

TEST(Spectrum, IdentityRanks) {
  Spectrum sp;
  sp.rows = sp.cols = 8;
  sp.singular_values = *SingularValues(Diagonal(std::vector<float>(8, 1.0f), 8, 8), 8, 8);
  ComputeRanks(sp, DTypeEpsilon(DType::kFloat));
  EXPECT_NEAR(sp.effective_rank, 8, 1e-9);
  EXPECT_NEAR(sp.stable_rank, 8, 1e-9);
  EXPECT_EQ(sp.numerical_rank, 8);
}

TEST(Spectrum, KnownRankIsTheNumericalRank) {
  for (int64_t r : {1, 5, 17}) {
    Spectrum sp;
    sp.rows = 64;
    sp.cols = 48;
    auto s = SingularValues(RankR(64, 48, r, 100 + r), 64, 48, &sp.method);
    ASSERT_TRUE(s.ok());
    sp.singular_values = *s;
    ComputeRanks(sp, DTypeEpsilon(DType::kFloat));
    EXPECT_EQ(sp.numerical_rank, r) << "rank " << r;
    EXPECT_EQ(sp.method, kGramMethod);
    EXPECT_LE(sp.effective_rank,
              static_cast<double>(r) + 0.01);  // rounding noise adds a little entropy
  }
}

TEST(Spectrum, RejectsBadViews) {
  EXPECT_FALSE(SingularValues(Diagonal({1}, 2, 2), 3, 2).ok());
  Tensor ints(DType::kInt32, {2, 2});
  EXPECT_FALSE(SingularValues(ints, 2, 2).ok());
}

TEST(LowRank, SmallestRankKeepingEnergy) {
  Spectrum sp;
  sp.rows = 100;
  sp.cols = 100;
  sp.singular_values = {10, 1, 0.5};                    // energy 100, 1, 0.25 of 101.25
  EXPECT_EQ(LowRankCandidate(sp, 0.99, 1000).rank, 2);  // 100/101.25 = 0.988 < 0.99
  EXPECT_EQ(LowRankCandidate(sp, 0.98, 1000).rank, 1);
}

TEST(LowRank, RankErrorAndPayOff) {
  Spectrum sp;
  sp.rows = 100;
  sp.cols = 50;
  sp.singular_values = {3, 2, 1, 0};  // energy 9, 4, 1: total 14
  LowRank lr = LowRankCandidate(sp, 0.9, 5000);
  EXPECT_EQ(lr.rank, 2);  // 13/14 = 0.93
  EXPECT_NEAR(lr.energy_kept, 13.0 / 14.0, 1e-12);
  EXPECT_NEAR(lr.relative_frobenius_error, std::sqrt(1.0 / 14.0), 1e-12);
  EXPECT_NEAR(lr.spectral_error, 1.0, 1e-12);
  EXPECT_NEAR(lr.break_even_rank, 5000.0 / 150.0, 1e-12);
  EXPECT_TRUE(lr.pays);
  EXPECT_EQ(lr.params_before, 5000);
  EXPECT_EQ(lr.params_after, 300);
  EXPECT_EQ(lr.macs_after, 300);
  // Energy 1.0 keeps every nonzero singular value, and a full-rank square
  // matrix never pays.
  sp.rows = sp.cols = 3;
  sp.singular_values = {3, 2, 1};
  LowRank full = LowRankCandidate(sp, 1.0, -1);
  EXPECT_EQ(full.rank, 3);
  EXPECT_FALSE(full.pays);
  EXPECT_EQ(full.macs_after, -1);
}

}  // namespace
}  // namespace aic::analysis

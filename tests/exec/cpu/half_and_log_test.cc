// The f16 conversions (support/half.h, shared by the reference and the CPU
// Cast kernels, F16C where the CPU has it) and LogApprox, against exact
// definitions: every half, every rounding midpoint, a dense grid of floats.
#include <cmath>
#include <cstring>
#include <vector>

#include "exec/cpu/kernels/cast.h"
#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/log.h"
#include "gtest/gtest.h"
#include "support/half.h"

namespace aic::cpu {
namespace {

// A half's value by its definition (sign, exponent, mantissa).
double HalfValue(uint16_t h) {
  int sign = (h & 0x8000) ? -1 : 1;
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(HalfTest, EveryHalfConvertsToItsExactValueAndBack) {
  for (uint32_t h = 0; h < 65536; ++h) {
    double want = HalfValue(static_cast<uint16_t>(h));
    float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      ASSERT_TRUE((FloatToHalf(got) & 0x7fff) >= 0x7c01) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << h;
    ASSERT_EQ(FloatToHalf(got), h) << h;
  }
}

TEST(HalfTest, RoundingIsToNearestEven) {
  // Midpoints between consecutive finite positive halves go to the even one;
  // a hair above goes up, a hair below goes down.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    double lo = HalfValue(static_cast<uint16_t>(h)), hi = HalfValue(static_cast<uint16_t>(h + 1));
    auto mid = static_cast<float>((lo + hi) / 2);
    uint16_t even = (h & 1) == 0 ? static_cast<uint16_t>(h) : static_cast<uint16_t>(h + 1);
    ASSERT_EQ(FloatToHalf(mid), even) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, INFINITY)), h + 1) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(FloatToHalf(-mid), even | 0x8000) << h;
  }
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);        // halfway past the largest half: inf
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(FloatToHalf(1e-8f), 0);                // below half the smallest subnormal
  EXPECT_EQ(FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(FloatToHalf(NAN) & 0x7fff, 0x7e00);
}

TEST(HalfTest, CastKernelsAgreeWithTheScalarConversions) {
  // The vectorized (or F16C) kernels on a grid of float bit patterns and on every half.
  std::vector<float> f;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65537) {
    auto b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, sizeof v);
    f.push_back(v);
  }
  std::vector<uint16_t> h(f.size());
  kernels::CastKernel(DType::kFloat, DType::kFloat16)(f.data(), h.data(), static_cast<int64_t>(f.size()));
  for (size_t i = 0; i < f.size(); ++i) {
    uint16_t want = FloatToHalf(f[i]);
    if (std::isnan(f[i])) {
      ASSERT_EQ(h[i] & 0x7c00, 0x7c00);
      ASSERT_NE(h[i] & 0x3ff, 0);
    } else {
      ASSERT_EQ(h[i], want) << f[i];
    }
  }
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> back(all.size());
  kernels::CastKernel(DType::kFloat16, DType::kFloat)(all.data(), back.data(), 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    float want = HalfToFloat(all[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(back[i]));
    } else {
      ASSERT_EQ(back[i], want) << i;
    }
  }
}

TEST(LogApproxTest, WithinTwoUlpOfDoubleLogEverywhere) {
  double worst_ulps = 0;
  for (uint32_t bits = 1; bits < 0x7f800000u; bits += 977) {  // every positive binade, subnormals included
    float x;
    std::memcpy(&x, &bits, sizeof x);
    double want = std::log(static_cast<double>(x));
    float got = kernels::LogApprox(x);
    float w = static_cast<float>(want);
    double ulp = std::fabs(std::nextafter(w, INFINITY) - w);
    worst_ulps = std::max(worst_ulps, std::fabs(static_cast<double>(got) - want) / ulp);
  }
  EXPECT_LE(worst_ulps, 2.0);
  EXPECT_EQ(kernels::LogApprox(1.0f), 0.0f);
  EXPECT_EQ(kernels::LogApprox(0.0f), -INFINITY);
  EXPECT_EQ(kernels::LogApprox(-0.0f), -INFINITY);
  EXPECT_EQ(kernels::LogApprox(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(kernels::LogApprox(-1.0f)));
  EXPECT_TRUE(std::isnan(kernels::LogApprox(-INFINITY)));
  EXPECT_TRUE(std::isnan(kernels::LogApprox(NAN)));
}

TEST(ExpApproxTest, WithinTwoUlpOfDoubleExpOverTheNormalRange) {
  double worst_ulps = 0;
  for (float x = -87.3f; x < 88.7f; x += 1.37e-4f) {
    double want = std::exp(static_cast<double>(x));
    float w = static_cast<float>(want);
    double ulp = std::fabs(std::nextafter(w, INFINITY) - w);
    worst_ulps = std::max(worst_ulps, std::fabs(static_cast<double>(kernels::ExpApprox(x)) - want) / ulp);
  }
  EXPECT_LE(worst_ulps, 2.0);
  EXPECT_EQ(kernels::ExpApprox(0.0f), 1.0f);
  EXPECT_EQ(kernels::ExpApprox(-200.0f), 0.0f);
  EXPECT_EQ(kernels::ExpApprox(-INFINITY), 0.0f);
  EXPECT_EQ(kernels::ExpApprox(89.0f), INFINITY);
  EXPECT_EQ(kernels::ExpApprox(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(kernels::ExpApprox(NAN)));
}

}  // namespace
}  // namespace aic::cpu

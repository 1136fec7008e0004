// QuantizeRunU8/S8 (exec/cpu/kernels/quantize_run.h) are bit-equal to
// saturate(nearbyint(f32(x / s)) + z): on random operands, on operands a few
// ulps either side of every half-integer quotient (where x * (1/s) and x / s
// can round apart: dropping the tie check fails here), in the AVX-512 and
// AVX2 forms, both by division and by the reciprocal with its tie check, on
// lengths that leave
// a tail, and on NaN, infinities, zero, huge quotients and scales whose
// reciprocal is not normal.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "exec/cpu/kernels/quantize_run.h"
#include "gtest/gtest.h"

namespace aic::cpu::kernels {
namespace {

template <typename Q>
Q Expected(float x, float scale, float zero) {
  const float lo = std::is_signed_v<Q> ? -128.0f : 0.0f, hi = std::is_signed_v<Q> ? 127.0f : 255.0f;
  float v = std::nearbyint(x / scale) + zero;
  if (!(v >= lo)) v = lo;  // NaN too
  if (v > hi) v = hi;
  return static_cast<Q>(v);
}

// Elements quantized differently from Expected, u8 with zero point 128 and
// s8 with zero point 0. Every way the pass can take is counted: the AVX-512
// and the AVX2 forms (on a CPU with AVX-512, ForceQuantizeWithoutAvx512 runs
// the AVX2 one), each by division and by the reciprocal (QuantizeByDivision).
int64_t Mismatches(const std::vector<float>& x, float scale) {
  int64_t n = static_cast<int64_t>(x.size()), bad = 0;
  std::vector<uint8_t> u(x.size());
  std::vector<int8_t> s(x.size());
  const bool avx2_before = ForceQuantizeWithoutAvx512(false);
  for (bool avx2 : {false, true}) {
    ForceQuantizeWithoutAvx512(avx2);
    for (int divide : {0, 1}) {
      ForceQuantizeByDivision(divide);
      QuantizeRunU8(x.data(), u.data(), n, scale, 128.0f);
      QuantizeRunS8(x.data(), s.data(), n, scale, 0.0f);
      for (int64_t i = 0; i < n; ++i) {
        bad += u[i] != Expected<uint8_t>(x[i], scale, 128.0f);
        bad += s[i] != Expected<int8_t>(x[i], scale, 0.0f);
      }
    }
  }
  ForceQuantizeByDivision(-1);
  ForceQuantizeWithoutAvx512(avx2_before);
  return bad;
}

TEST(QuantizeRunTest, EqualsTheDivisionOnRandomOperands) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> log_scale(-12.0f, 2.0f);
  for (int trial = 0; trial < 200; ++trial) {
    float scale = std::exp2(log_scale(rng));
    std::uniform_real_distribution<float> xs(-200 * scale, 200 * scale);
    std::vector<float> x(1000 + trial);  // tails of every length
    for (float& v : x) v = xs(rng);
    EXPECT_EQ(Mismatches(x, scale), 0) << "scale " << scale;
  }
}

TEST(QuantizeRunTest, EqualsTheDivisionNextToEveryTie) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  int64_t cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Scales with arbitrary mantissas (1/s inexact), as calibration writes them.
    float scale = mantissa(rng) * std::exp2(static_cast<float>(static_cast<int>(rng() % 16) - 12));
    std::vector<float> x;
    for (int k = -140; k <= 140; ++k) {
      float tie = (static_cast<float>(k) + 0.5f) * scale;
      float lo = tie, hi = tie;
      x.push_back(tie);
      for (int u = 0; u < 6; ++u) {
        lo = std::nextafter(lo, -std::numeric_limits<float>::infinity());
        hi = std::nextafter(hi, std::numeric_limits<float>::infinity());
        x.push_back(lo);
        x.push_back(hi);
      }
    }
    cases += static_cast<int64_t>(x.size());
    EXPECT_EQ(Mismatches(x, scale), 0) << "scale " << scale;
  }
  EXPECT_GT(cases, 1000000);
}

TEST(QuantizeRunTest, EqualsTheDivisionOnSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.0f, -0.0f, nan, inf,   -inf, 3e38f, -3e38f, 1e-40f, 7.5f,
                          -7.5f, 1e20f, 1048575.5f, -1048575.5f, 2.5f, -2.5f, 126.5f, 127.5f, -128.5f};
  while (x.size() < 48) x.push_back(x[x.size() % 18] * 0.37f);
  for (float scale : {0.1f, 1.0f, 1e-39f /* subnormal */, 3e-39f, 1e38f /* 1/s subnormal */, 0.0f}) {
    EXPECT_EQ(Mismatches(x, scale), 0) << "scale " << scale;
  }
}

}  // namespace
}  // namespace aic::cpu::kernels

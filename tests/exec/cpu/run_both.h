// Helpers of the CPU executor's tests: random tensors, and RunBoth, which
// runs a model on the fast executor and the reference executor, checks the
// outputs agree and that the plan took no reference fallback.
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"

namespace aic::cpu {

inline Tensor RandomF32(const std::vector<int64_t>& dims, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.mutable_span<float>()) v = dist(rng);
  return t;
}

template <typename T>
inline Tensor RandomInts(const std::vector<int64_t>& dims, uint32_t seed, int lo, int hi) {
  Tensor t(DTypeOf<T>::value, dims);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (T& v : t.mutable_span<T>()) v = static_cast<T>(dist(rng));
  return t;
}

inline Tensor RandomBool(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kBool, dims);
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t.mutable_raw_data());
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = rng() & 1;
  return t;
}

inline std::vector<Dim> D(const std::vector<int64_t>& dims) { return std::vector<Dim>(dims.begin(), dims.end()); }

inline void ExpectClose(const Tensor& got, const Tensor& want, double atol = 1e-5, double rtol = 1e-5) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (std::isnan(b)) {
      ASSERT_TRUE(std::isnan(a)) << "element " << i;
      continue;
    }
    if (a == b) continue;  // equal infinities too (their difference is NaN)
    ASSERT_LE(std::fabs(a - b), atol + rtol * std::fabs(b)) << "element " << i << ": " << a << " vs " << b;
  }
}

// How many times `what` occurs in a plan's description.
inline int CountOf(const std::string& plan, const std::string& what) {
  int n = 0;
  for (size_t at = plan.find(what); at != std::string::npos; at = plan.find(what, at + 1)) ++n;
  return n;
}

// Runs `model` on both executors; checks the outputs agree and returns the plan's description.
inline std::string RunBoth(const Model& model, const std::map<std::string, RuntimeValue>& feeds, int max_fallbacks = 0,
                    double atol = 1e-5, double rtol = 1e-5) {
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return "";
  CpuExecutor cpu(model);
  auto got = cpu.Run(feeds);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!got.ok()) return "";
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
    ExpectClose((*got)[i].tensor, (*want)[i].tensor, atol, rtol);
  }
  auto plan = cpu.PlanFor(feeds);
  EXPECT_TRUE(plan.ok());
  std::string desc = DescribePlan(**plan);
  EXPECT_LE(StatsOf(**plan).fallback_steps, max_fallbacks) << desc;
  EXPECT_EQ(StatsOf(**plan).slow_impl_steps, 0) << desc;
  return desc;
}

// QLinearConv and QLinearMatMul become int8 steps where their products are
// exact: oneDNN's where it has VNNI (ExactInt8Products), our pair kernels
// (kernels/pair_gemm.h) on other AVX2 CPUs; elsewhere they run the reference
// kernel, and tests of those steps skip.
#define AIC_SKIP_WITHOUT_EXACT_INT8()                                                          \
  if (!ExactInt8Products() && !kernels::PairGemmAvailable())                                  \
  GTEST_SKIP() << "neither VNNI nor AVX2: QLinearConv and QLinearMatMul run on the reference " \
                  "kernel here"

// Whether int8 steps are our pair kernels' (bit-exact, plain layouts) rather
// than oneDNN's (blocked layouts, ties one step apart).
inline bool PairInt8() { return !ExactInt8Products() && kernels::PairGemmAvailable(); }

// An int8 op's model on both executors, its 8-bit output compared with the
// reference's where the two may round a tie one step apart (oneDNN's
// requantization scales in f32 and adds the zero point before rounding):
// every element within 1 (a failure names the first that is not), off by
// one on at most 1% (recorded as the test property `property`: on the cases
// so far, none) and on none with the pair kernels, which round as the
// reference does; saturated on at most 30% (60% with a zero y zero point,
// which clamps the negative half: the case exercises requantization), and a
// plan of int8 steps, none on the reference or a slow oneDNN path.
inline void ExpectEightBitWithinOne(const Model& model, const std::map<std::string, RuntimeValue>& feeds,
                                    int y_zero, const std::string& property) {
  auto want = ReferenceExecutor(model).Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(model);
  auto got = cpu.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  const Tensor& g = (*got)[0].tensor;
  const Tensor& r = (*want)[0].tensor;
  ASSERT_EQ(g.dims(), r.dims());
  ASSERT_EQ(g.dtype(), r.dtype());
  const bool is_unsigned = r.dtype() == DType::kUint8;
  int64_t off = 0, saturated = 0;
  for (int64_t i = 0; i < g.num_elements(); ++i) {
    double d = std::abs(g.ElementAsDouble(i) - r.ElementAsDouble(i));
    ASSERT_LE(d, 1.0) << "element " << i << ": " << g.ElementAsDouble(i) << " vs " << r.ElementAsDouble(i);
    off += d != 0;
    double v = r.ElementAsDouble(i);
    saturated += is_unsigned ? (v == 0 || v == 255) : (v == -128 || v == 127);
  }
  ::testing::Test::RecordProperty(property, std::to_string(off) + " of " + std::to_string(g.num_elements()));
  EXPECT_LE(off * 100, g.num_elements()) << off << " of " << g.num_elements();
  if (PairInt8()) {
    EXPECT_EQ(off, 0) << "the pair kernels round as the reference does";
  }
  EXPECT_LE(saturated * 10, g.num_elements() * (y_zero == 0 ? 6 : 3));
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  std::string desc = DescribePlan(**plan);
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
  EXPECT_EQ(StatsOf(**plan).slow_impl_steps, 0) << desc;
  EXPECT_NE(desc.find("[int8"), std::string::npos) << desc;
}

}  // namespace aic::cpu

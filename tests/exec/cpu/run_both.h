// Helpers of the CPU executor's tests: random tensors, and RunBoth, which
// runs a model on the fast executor and the reference executor, checks the
// outputs agree and that the plan took no reference fallback.
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

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
    ASSERT_LE(std::fabs(a - b), atol + rtol * std::fabs(b)) << "element " << i << ": " << a << " vs " << b;
  }
}

// An int8/uint8 result against the reference's, where the two may round a
// tie one step apart (oneDNN's requantization scales in f32 and adds the zero
// point before rounding): every element within 1 (a failure names the
// first that is not), how many differ and how many saturate.
struct EightBitAgreement {
  int64_t off_by_one = 0;
  int64_t saturated = 0;
};
inline EightBitAgreement CompareEightBit(const Tensor& got, const Tensor& want) {
  EightBitAgreement a;
  EXPECT_EQ(got.dims(), want.dims());
  EXPECT_EQ(got.dtype(), want.dtype());
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) return a;
  const bool is_unsigned = want.dtype() == DType::kUint8;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double d = std::abs(got.ElementAsDouble(i) - want.ElementAsDouble(i));
    if (d > 1.0) {
      ADD_FAILURE() << "element " << i << ": " << got.ElementAsDouble(i) << " vs " << want.ElementAsDouble(i);
      return a;
    }
    a.off_by_one += d != 0;
    double v = want.ElementAsDouble(i);
    a.saturated += is_unsigned ? (v == 0 || v == 255) : (v == -128 || v == 127);
  }
  return a;
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

}  // namespace aic::cpu

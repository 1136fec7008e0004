// Models that broke `opt` when found from outside (../shared/findings), kept
// as regression tests: each optimizes without crashing and computes what the
// original computes on random inputs.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "onnx_io/load.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

std::string Finding(const std::string& name) { return std::string(AIC_SOURCE_DIR) + "/tests/rewrite/findings/" + name; }

// A scalar constant times (or plus) a LayerNormalization over a last dim of 1
// made fold_affine_into_layer_norm read dim -1 of a rank-0 tensor (SIGSEGV).
TEST(FindingsTest, ScalarAffineAfterLayerNormOverOneElement) {
  for (const char* name : {"opt_crash_layernorm_scalar_1.onnx", "opt_crash_layernorm_scalar_2.onnx"}) {
    SCOPED_TRACE(name);
    testing::ModelFn load = [name] {
      auto m = LoadModel(Finding(name));
      EXPECT_TRUE(m.ok()) << m.status();
      return m.ok() ? std::move(*m) : nullptr;
    };
    auto optimized = testing::OptimizeModel(load(), {});
    ASSERT_NE(optimized.model, nullptr);
    EXPECT_LE(optimized.stats.nodes_after, optimized.stats.nodes_before);
    for (uint64_t seed : {7u, 8u}) {
      EXPECT_LE(testing::MaxOutputDiff(load, *optimized.model, /*bitwise=*/false, seed), 1e-4);
    }
  }
}

// The graph fuzzer's seed 13000957 (59 nodes of nested shape arithmetic):
// fold_shape_arithmetic tried every form of every class afresh at each of
// its 12 levels, exponential in the depth: the rewriter took 12 s here (and
// past the fuzzer's 60 s beside its other oracles). Each class is now worked
// out once per walk, a few milliseconds; 2 s is a hang guard with room for
// ASan and a busy machine, not a benchmark.
TEST(FindingsTest, NestedShapeArithmeticFinishes) {
  testing::ModelFn load = [] {
    auto m = LoadModel(Finding("opt_hang_nested_shape_arithmetic.onnx"));
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  };
  auto optimized = testing::OptimizeModel(load(), {});
  ASSERT_NE(optimized.model, nullptr);
  EXPECT_LT(optimized.stats.seconds, 2.0);
  EXPECT_LE(optimized.stats.nodes_after, optimized.stats.nodes_before);
  EXPECT_LE(testing::MaxOutputDiff(load, *optimized.model, /*bitwise=*/false, 7), 1e-4);
}

}  // namespace
}  // namespace aic::rewrite

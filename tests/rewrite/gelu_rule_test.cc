// fuse_gelu: x * 0.5 * (1 + erf(x / √2)), as exporters write GELU, becomes one
// Gelu node from opset 20 on, in each of the three ways the product is
// grouped; near misses (another constant, another operand, a broadcast, an
// older opset) stay as they are; outputs match the reference executor's.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using testing::MaxOutputDiff;
using testing::ModelFn;
using testing::OpCounts;
using testing::OptimizeModel;
using testing::OptimizeWith;

enum class Grouping { kXTimesAThenHalf, kHalfXThenA, kXTimesHalfA };

struct GeluSpec {
  Grouping grouping = Grouping::kXTimesAThenHalf;
  bool erf_by_mul = false;  // erf(x * 1/√2) instead of erf(x / √2)
  float half = 0.5f;
  bool other_x_in_erf = false;  // erf reads a different tensor than the product
  std::vector<int64_t> const_dims = {};  // shape of the 0.5 constant
  int64_t opset = 20;
  DType dtype = DType::kFloat;  // float16/bfloat16: x and every constant cast to it
  float sqrt2 = std::sqrt(2.0f);
};

Tensor Scalar(float v, const std::vector<int64_t>& dims = {}) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return Tensor::FromVector<float>(std::vector<float>(n, v), dims);
}

ModelFn Gelu(GeluSpec s) {
  return [s] {
    GraphBuilder b;
    auto cast = [&](Value* v) {
      return s.dtype == DType::kFloat ? v : b.Op("Cast", {v}, {Attribute::Int("to", static_cast<int64_t>(s.dtype))});
    };
    Value* x = cast(b.Input("x", DType::kFloat, {2, 5}));
    Value* z = s.other_x_in_erf ? b.Op("Neg", {x}) : x;
    Value* scaled = s.erf_by_mul ? b.Op("Mul", {z, cast(b.Constant("inv_sqrt2", Scalar(std::sqrt(0.5f))))})
                                 : b.Op("Div", {z, cast(b.Constant("sqrt2", Scalar(s.sqrt2)))});
    Value* a = b.Op("Add", {cast(b.Constant("one", Scalar(1.f))), b.Op("Erf", {scaled})});
    Value* half = cast(b.Constant("half", Scalar(s.half, s.const_dims)));
    Value* y = nullptr;
    switch (s.grouping) {
      case Grouping::kXTimesAThenHalf: y = b.Op("Mul", {b.Op("Mul", {x, a}), half}); break;
      case Grouping::kHalfXThenA: y = b.Op("Mul", {b.Op("Mul", {x, half}), a}); break;
      case Grouping::kXTimesHalfA: y = b.Op("Mul", {x, b.Op("Mul", {half, a})}); break;
    }
    b.Output(b.Op("Relu", {y}));
    return b.Build(s.opset);
  };
}

void ExpectFused(const ModelFn& build, double tolerance = 1e-5) {
  auto r = OptimizeWith(build, "fuse_gelu");
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts["fuse_gelu"], 0);
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Gelu"], 1);
  EXPECT_EQ(counts["Erf"], 0);
  EXPECT_EQ(counts["Mul"], 0);
  EXPECT_EQ(counts["Add"], 0);
  EXPECT_EQ(counts["Div"], 0);
  // Reassociating: equal up to rounding, not bitwise.
  EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false), tolerance);
  EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false, /*seed=*/11), tolerance);
}

void ExpectUnfused(const ModelFn& build) {
  auto r = OptimizeWith(build, "fuse_gelu");
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts.count("fuse_gelu"), 0u);
  EXPECT_EQ(OpCounts(*r.model->graph)["Gelu"], 0);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
}

TEST(GeluRuleTest, FiresOnEachGrouping) {
  for (Grouping g : {Grouping::kXTimesAThenHalf, Grouping::kHalfXThenA, Grouping::kXTimesHalfA}) {
    SCOPED_TRACE(static_cast<int>(g));
    ExpectFused(Gelu({.grouping = g}));
  }
}

TEST(GeluRuleTest, FiresWithMultiplicationByInverseSqrt2) {
  ExpectFused(Gelu({.grouping = Grouping::kHalfXThenA, .erf_by_mul = true}));
}

TEST(GeluRuleTest, FiresUnderTheDefaultRuleSet) {
  ModelFn build = Gelu({});
  auto r = OptimizeModel(build(), {});
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Gelu"], 1);
  EXPECT_EQ(counts["Erf"], 0);
  EXPECT_LE(MaxOutputDiff(build, *r.model, false), 1e-5);
}

TEST(GeluRuleTest, DeclinesNearMisses) {
  {
    SCOPED_TRACE("0.6 instead of 0.5");
    ExpectUnfused(Gelu({.half = 0.6f}));
  }
  {
    SCOPED_TRACE("erf of another tensor");
    ExpectUnfused(Gelu({.other_x_in_erf = true}));
  }
  {
    SCOPED_TRACE("0.5 of shape [1, 1, 1] broadcasts x to rank 3");
    ExpectUnfused(Gelu({.const_dims = {1, 1, 1}}));
  }
}

// A model converted to float16 or bfloat16 holds √2 as 1.4140625 (as close as
// either type can hold it): still GELU. The unfused reference rounds each of
// five steps to the half type, the fused Gelu once, so they agree to a few
// units in the last place of that type. A constant further off than the
// type's rounding (1.4150390625 in float16) is not √2.
TEST(GeluRuleTest, FiresOnHalfPrecisionConstants) {
  {
    SCOPED_TRACE("float16");
    ExpectFused(Gelu({.dtype = DType::kFloat16}), 1e-2);
    ExpectFused(Gelu({.erf_by_mul = true, .dtype = DType::kFloat16}), 1e-2);
  }
  {
    SCOPED_TRACE("bfloat16");
    ExpectFused(Gelu({.dtype = DType::kBFloat16}), 6e-2);
  }
  {
    SCOPED_TRACE("1.415 in float16");
    ExpectUnfused(Gelu({.dtype = DType::kFloat16, .sqrt2 = 1.415f}));
  }
}

TEST(GeluRuleTest, NotBeforeOpset20) {
  ExpectUnfused(Gelu({.opset = 18}));
}

TEST(GeluRuleTest, SecondRunChangesNothing) {
  auto r = OptimizeWith(Gelu({}), "fuse_gelu");
  auto before = OpCounts(*r.model->graph);
  auto again = OptimizeModel(std::move(r.model), {"fuse_gelu"});
  EXPECT_EQ(again.stats.rule_counts.count("fuse_gelu"), 0u);
  EXPECT_EQ(OpCounts(*again.model->graph), before);
}

// --- the tanh form: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) ---

struct GeluTanhSpec {
  bool cube_by_pow = true;        // Pow(x, 3), else x * (x * x)
  float coefficient = 0.044715f;  // of x^3
  int64_t opset = 20;
};

ModelFn GeluTanh(GeluTanhSpec s) {
  return [s] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {3, 7});
    Value* cube = s.cube_by_pow ? b.Op("Pow", {x, b.Constant("three", Scalar(3.f))})
                                : b.Op("Mul", {b.Op("Mul", {x, x}), x});
    Value* inner = b.Op("Add", {x, b.Op("Mul", {b.Constant("c", Scalar(s.coefficient)), cube})});
    Value* t = b.Op("Tanh", {b.Op("Mul", {inner, b.Constant("k", Scalar(0.7978845608f))})});
    Value* a = b.Op("Add", {t, b.Constant("one", Scalar(1.f))});
    b.Output(b.Op("Mul", {b.Op("Mul", {x, b.Constant("half", Scalar(0.5f))}), a}));
    return b.Build(s.opset);
  };
}

TEST(GeluTanhRuleTest, FiresWithPowOrProductCubes) {
  for (bool by_pow : {true, false}) {
    SCOPED_TRACE(by_pow ? "Pow(x, 3)" : "x * (x * x)");
    ModelFn build = GeluTanh({.cube_by_pow = by_pow});
    auto r = OptimizeWith(build, "fuse_gelu_tanh");
    ASSERT_NE(r.model, nullptr);
    EXPECT_GT(r.stats.rule_counts["fuse_gelu_tanh"], 0);
    ASSERT_EQ(r.model->graph->num_nodes(), 1u);
    const Node& gelu = *r.model->graph->nodes()[0];
    EXPECT_EQ(gelu.op_type, "Gelu");
    EXPECT_EQ(gelu.GetString("approximate", "none"), "tanh");
    EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false), 1e-5);
  }
}

TEST(GeluTanhRuleTest, DeclinesAnotherCoefficientAndOldOpsets) {
  for (GeluTanhSpec spec : {GeluTanhSpec{.coefficient = 0.05f}, GeluTanhSpec{.opset = 18}}) {
    auto r = OptimizeWith(GeluTanh(spec), "fuse_gelu_tanh");
    ASSERT_NE(r.model, nullptr);
    EXPECT_EQ(r.stats.rule_counts.count("fuse_gelu_tanh"), 0u);
    EXPECT_EQ(OpCounts(*r.model->graph)["Gelu"], 0);
  }
}

}  // namespace
}  // namespace aic::rewrite

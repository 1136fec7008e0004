#include <gtest/gtest.h>

#include <cmath>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::F32;
using testing::InferNode;
using testing::MaxAbsDiff;
using testing::NodeTraits;
using testing::Op;
using testing::RunNode;

TEST(SoftmaxTest, LastAxisFromOpset13) {
  Tensor x = Tensor::FromVector<float>({0, 0, 1000, 1000 + std::log(3.0f)}, {2, 2});
  auto out = RunNode(Op("Softmax", {}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({0.5, 0.5, 0.25, 0.75}, {2, 2})), 1e-5);
  auto log = RunNode(Op("LogSoftmax", {}, 13), {x});
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_LT(std::fabs((*log)[0].data<float>()[2] - std::log(0.25f)), 1e-4);
}

TEST(SoftmaxTest, CoercedTo2DBeforeOpset13) {
  // axis 1 of [1, 2, 2] flattens to one row of 4 before 13; from 13 it is axis 1 alone.
  Tensor x = Tensor::FromVector<float>({0, 0, 0, 0}, {1, 2, 2});
  auto old = RunNode(Op("Softmax", {Attribute::Int("axis", 1)}, 11), {x});
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_LT(MaxAbsDiff((*old)[0], Tensor::FromVector<float>({0.25, 0.25, 0.25, 0.25}, {1, 2, 2})), 1e-6);
  auto now = RunNode(Op("Softmax", {Attribute::Int("axis", 1)}, 13), {x});
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_LT(MaxAbsDiff((*now)[0], Tensor::FromVector<float>({0.5, 0.5, 0.5, 0.5}, {1, 2, 2})), 1e-6);
}

TEST(HardmaxTest, FirstMaximumWins) {
  Tensor x = Tensor::FromVector<float>({1, 3, 3, 2}, {1, 4});
  auto out = RunNode(Op("Hardmax", {}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({0, 1, 0, 0}, {1, 4})), 0.0);
}

TEST(SoftmaxTest, InferTraitsAndErrors) {
  auto t = InferNode(Op("Softmax", {}, 13), {F32({Dim::Symbol("B"), 10})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[B, 10]");
  EXPECT_FALSE(InferNode(Op("Softmax", {Attribute::Int("axis", 2)}, 13), {F32({2, 3})}).ok());
  EXPECT_FALSE(RunNode(Op("Softmax", {Attribute::Int("axis", -3)}, 13),
                       {Tensor::FromVector<float>({1, 2}, {1, 2})})
                   .ok());
  auto tc = NodeTraits(Op("Softmax", {}, 13), {F32({2, 10})}, {});
  EXPECT_EQ(tc.traits.semantic_name, "Softmax");
  EXPECT_EQ(tc.traits.linearity, Linearity::kNonlinear);
  EXPECT_EQ(tc.traits.invertibility, Invertibility::kIrreversible);
  EXPECT_NE(tc.traits.collapse_how.find("shift-invariant"), std::string::npos);
  EXPECT_EQ(tc.cost.flops, 5 * 20);
}

}  // namespace
}  // namespace aic

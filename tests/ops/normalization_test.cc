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

Tensor Vec(std::vector<float> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(v, {n});
}

TEST(BatchNormTest, InferenceIsPerChannelAffine) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, {1, 2, 2});
  auto out = RunNode(Op("BatchNormalization", {Attribute::Float("epsilon", 0.0f)}, 15),
                     {x, Vec({2, 1}), Vec({1, 0}), Vec({1, 3}), Vec({1, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  // ch0: 2·(x-1)/1 + 1 -> 1, 3; ch1: (x-3)/2 -> 0, 0.5.
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({1, 3, 0, 0.5}, {1, 2, 2})), 1e-6);
}

TEST(BatchNormTest, TrainingModeUsesBatchStatistics) {
  Tensor x = Tensor::FromVector<float>({0, 2, 10, 10}, {2, 1, 2});
  auto out = RunNode(Op("BatchNormalization",
                        {Attribute::Int("training_mode", 1), Attribute::Float("epsilon", 0.0f),
                         Attribute::Float("momentum", 0.5f)},
                        15, 3),
                     {x, Vec({1}), Vec({0}), Vec({0}), Vec({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Batch mean 5.5, var = mean of (30.25, 12.25, 20.25, 20.25) = 20.75.
  double sd = std::sqrt(20.75);
  EXPECT_LT(std::fabs((*out)[0].data<float>()[0] - (0 - 5.5) / sd), 1e-5);
  EXPECT_LT(std::fabs((*out)[1].data<float>()[0] - 0.5 * 5.5), 1e-6);
  EXPECT_LT(std::fabs((*out)[2].data<float>()[0] - (0.5 + 0.5 * 20.75)), 1e-5);
}

TEST(BatchNormTest, InferAndErrors) {
  auto t = InferNode(Op("BatchNormalization", {}, 15),
                     {F32({Dim::Symbol("N"), 3, 4}), F32({3}), F32({3}), F32({3}), F32({3})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[N, 3, 4]");
  EXPECT_FALSE(InferNode(Op("BatchNormalization", {}, 15),
                         {F32({1, 3, 4}), F32({4}), F32({3}), F32({3}), F32({3})})
                   .ok());
  EXPECT_FALSE(RunNode(Op("BatchNormalization", {}, 15),
                       {Tensor::FromVector<float>({1, 2}, {1, 2}), Vec({1}), Vec({1}), Vec({1}),
                        Vec({1})})
                   .ok());
}

TEST(BatchNormTest, Traits) {
  Tensor s = Vec({1, 2, 3}), b = Vec({0, 0, 0}), m = Vec({0, 0, 0}), v = Vec({1, 1, 1});
  auto tc = NodeTraits(Op("BatchNormalization", {}, 15),
                       {F32({1, 3, 4, 4}), F32({3}), F32({3}), F32({3}), F32({3})},
                       {nullptr, &s, &b, &m, &v});
  EXPECT_EQ(tc.traits.semantic_name, "BatchNorm");
  EXPECT_EQ(tc.traits.linearity, Linearity::kAffine);
  EXPECT_TRUE(tc.traits.trainable);
  EXPECT_EQ(tc.traits.safe_transform_when,
            "fold into preceding Conv/Gemm only in inference mode with constant scale/B/mean/var, "
            "fp32/fp64, single consumer");
  EXPECT_EQ(tc.cost.params, 6);  // scale and B; mean/var are running statistics
}

TEST(LayerNormTest, NormalizesRowsWithStatsOutputs) {
  Tensor x = Tensor::FromVector<float>({1, 3, 2, 2}, {2, 2});
  auto out = RunNode(Op("LayerNormalization", {Attribute::Float("epsilon", 0.0f)}, 17, 3),
                     {x, Vec({1, 2}), Vec({0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Row 0: mean 2, std 1 -> [-1, 1]·[1, 2] + [0, 1] = [-1, 3] (row 1 has zero variance).
  EXPECT_LT(std::fabs((*out)[0].data<float>()[0] + 1), 1e-6);
  EXPECT_LT(std::fabs((*out)[0].data<float>()[1] - 3), 1e-6);
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[1].data<float>()[0], 2);
  EXPECT_EQ((*out)[2].data<float>()[0], 1);
}

TEST(LayerNormTest, InferStatsShapeAndErrors) {
  auto t = InferNode(Op("LayerNormalization", {Attribute::Int("axis", 1)}, 17, 3),
                     {F32({Dim::Symbol("B"), 4, 8}), F32({4, 8}), F32({4, 8})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[B, 4, 8]");
  EXPECT_EQ((*t)[1].shape.ToString(), "[B, 1, 1]");
  EXPECT_FALSE(InferNode(Op("LayerNormalization", {Attribute::Int("axis", 3)}, 17),
                         {F32({2, 4, 8}), F32({8})})
                   .ok());
  auto tc = NodeTraits(Op("LayerNormalization", {}, 17), {F32({2, 8}), F32({8}), F32({8})}, {});
  EXPECT_EQ(tc.traits.semantic_name, "LayerNorm");
  EXPECT_EQ(tc.traits.invertibility, Invertibility::kIrreversible);
  EXPECT_FALSE(tc.traits.collapse_how.empty());
}

TEST(InstanceNormTest, PerChannel) {
  Tensor x = Tensor::FromVector<float>({-1, 0, 1, 2, 3, 4}, {1, 2, 3});
  auto out = RunNode(Op("InstanceNormalization", {Attribute::Float("epsilon", 0.0f)}),
                     {x, Vec({1, 2}), Vec({0, 10})});
  ASSERT_TRUE(out.ok()) << out.status();
  double k = std::sqrt(1.5);  // 1/std with var 2/3
  std::vector<float> want = {static_cast<float>(-k), 0, static_cast<float>(k),
                             static_cast<float>(10 - 2 * k), 10, static_cast<float>(10 + 2 * k)};
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>(want, {1, 2, 3})), 1e-5);
  EXPECT_FALSE(RunNode(Op("InstanceNormalization"), {x, Vec({1, 2, 3}), Vec({0, 1, 2})}).ok());
  auto t = InferNode(Op("InstanceNormalization"), {F32({Dim::Symbol("N"), 2, 3}), F32({2}), F32({2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape.ToString(), "[N, 2, 3]");
}

TEST(GroupNormTest, TwoGroups) {
  // Four channels of one element each, two groups: each pair normalizes to [-1, 1].
  Tensor x = Tensor::FromVector<float>({1, 3, 10, 20}, {1, 4, 1});
  auto out = RunNode(Op("GroupNormalization", {Attribute::Int("num_groups", 2),
                                               Attribute::Float("epsilon", 0.0f)},
                        18),
                     {x, Vec({1, 1}), Vec({0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({-1, 1, -1, 1}, {1, 4, 1})), 1e-6);
  EXPECT_FALSE(RunNode(Op("GroupNormalization", {Attribute::Int("num_groups", 3)}, 18),
                       {x, Vec({1, 1, 1}), Vec({0, 0, 0})})
                   .ok());
}

TEST(MvnTest, DefaultAxes) {
  Tensor x = Tensor::FromVector<float>({1, 3, 5, 5}, {2, 2, 1, 1});
  auto out = RunNode(Op("MeanVarianceNormalization"), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  // Channel 0 over the batch: [1, 5] -> [-1, 1]; channel 1: [3, 5] -> [-1, 1].
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({-1, -1, 1, 1}, {2, 2, 1, 1})), 1e-6);
}

TEST(LrnTest, NeighbourChannels) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3}, {1, 3, 1, 1});
  auto out = RunNode(Op("LRN", {Attribute::Int("size", 3), Attribute::Float("alpha", 3.0f),
                                Attribute::Float("beta", 1.0f), Attribute::Float("bias", 1.0f)}),
                     {x});
  ASSERT_TRUE(out.ok()) << out.status();
  // ch0: 1/(1 + (1+4)) = 1/6; ch1: 2/(1 + 14) ; ch2: 3/(1 + 13).
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({1.0f / 6, 2.0f / 15, 3.0f / 14},
                                                             {1, 3, 1, 1})),
            1e-6);
  EXPECT_FALSE(RunNode(Op("LRN"), {x}).ok());  // size is required
}

TEST(LpNormalizationTest, L1AndL2) {
  Tensor x = Tensor::FromVector<float>({3, 4, 0, 0}, {2, 2});
  auto l2 = RunNode(Op("LpNormalization"), {x});
  ASSERT_TRUE(l2.ok()) << l2.status();
  EXPECT_LT(MaxAbsDiff((*l2)[0], Tensor::FromVector<float>({0.6f, 0.8f, 0, 0}, {2, 2})), 1e-6);
  auto l1 = RunNode(Op("LpNormalization", {Attribute::Int("p", 1), Attribute::Int("axis", 0)}), {x});
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_LT(MaxAbsDiff((*l1)[0], Tensor::FromVector<float>({1, 1, 0, 0}, {2, 2})), 1e-6);
  EXPECT_FALSE(RunNode(Op("LpNormalization", {Attribute::Int("p", 3)}), {x}).ok());
}

}  // namespace
}  // namespace aic

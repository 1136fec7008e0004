#include <cmath>

#include <gtest/gtest.h>

#include "ops/registry.h"
#include "ops/util/float_convert.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::SingleNode;

SingleNode Spec(std::string op, std::vector<Attribute> attrs = {}, size_t outputs = 1) {
  SingleNode s;
  s.op_type = std::move(op);
  s.attributes = std::move(attrs);
  s.num_outputs = outputs;
  return s;
}

Tensor Scores() {  // N=2, C=3
  return Tensor::FromVector<float>({1, 2, 3, 0, 0, 0}, {2, 3});
}

TEST(LossTest, NllMeanPicksNegatedTargets) {
  Tensor target = Tensor::FromVector<int64_t>({2, 0}, {2});
  auto out = RunNode(Spec("NegativeLogLikelihoodLoss"), {Scores(), target});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], -(3 + 0) / 2.0, 1e-6);
}

TEST(LossTest, NllWeightedIgnoreIndexNone) {
  Tensor target = Tensor::FromVector<int64_t>({1, 0}, {2});
  Tensor weight = Tensor::FromVector<float>({0.5f, 2, 1}, {3});
  auto out = RunNode(Spec("NegativeLogLikelihoodLoss", {Attribute::String("reduction", "none"),
                                                         Attribute::Int("ignore_index", 0)}),
                     {Scores(), target, weight});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2}));
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], -4.0f);  // -w[1]·x[0,1]
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[1], 0.0f);   // ignored
}

TEST(LossTest, NllWeightedMeanDividesByWeightSum) {
  Tensor target = Tensor::FromVector<int64_t>({1, 2}, {2});
  Tensor weight = Tensor::FromVector<float>({0.5f, 2, 1}, {3});
  auto out = RunNode(Spec("NegativeLogLikelihoodLoss"), {Scores(), target, weight});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], (-4.0 - 0.0) / 3.0, 1e-6);
}

TEST(LossTest, SceMatchesLogSoftmaxAndReturnsLogProb) {
  Tensor target = Tensor::FromVector<int64_t>({2, 1}, {2});
  auto out = RunNode(Spec("SoftmaxCrossEntropyLoss", {Attribute::String("reduction", "sum")}, 2),
                     {Scores(), target});
  ASSERT_TRUE(out.ok()) << out.status();
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(3.0);
  EXPECT_NEAR((*out)[0].data<float>()[0], (lse0 - 3) + lse1, 1e-5);
  ASSERT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR((*out)[1].data<float>()[0], 1 - lse0, 1e-5);
}

TEST(LossTest, SceHigherRankPerPosition) {
  // N=1, C=2, d1=2: positions are independent softmaxes over C.
  Tensor x = Tensor::FromVector<float>({0, 0, 1, 1}, {1, 2, 2});
  Tensor target = Tensor::FromVector<int64_t>({0, 1}, {1, 2});
  auto out = RunNode(Spec("SoftmaxCrossEntropyLoss", {Attribute::String("reduction", "none")}),
                     {x, target});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR((*out)[0].data<float>()[0], std::log(1 + std::exp(1.0)), 1e-5);
  EXPECT_NEAR((*out)[0].data<float>()[1], std::log(1 + std::exp(-1.0)), 1e-5);
}

TEST(LossTest, TargetOutOfRangeIsAnError) {
  Tensor target = Tensor::FromVector<int64_t>({3, 0}, {2});
  auto out = RunNode(Spec("NegativeLogLikelihoodLoss"), {Scores(), target});
  EXPECT_FALSE(out.ok());
}

TEST(LossTest, InferNoneKeepsSymbolicBatch) {
  SingleNode spec = Spec("SoftmaxCrossEntropyLoss", {Attribute::String("reduction", "none")}, 2);
  auto types = InferNode(
      spec, {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("N"), 5, 7})),
             TypeInfo::Tensor(DType::kInt64, Shape({Dim::Symbol("N"), 7}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 7]");
  EXPECT_EQ((*types)[1].shape.ToString(), "[N, 5, 7]");
}

TEST(LossTest, InferMeanIsScalarAndRankMismatchFails) {
  SingleNode spec = Spec("NegativeLogLikelihoodLoss");
  auto types = InferNode(spec, {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("N"), 5})),
                                TypeInfo::Tensor(DType::kInt64, Shape({Dim::Symbol("N")}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.rank(), 0);
  auto bad = InferNode(spec, {TypeInfo::Tensor(DType::kFloat, Shape({2, 5})),
                              TypeInfo::Tensor(DType::kInt64, Shape({2, 5}))});
  EXPECT_FALSE(bad.ok());
}

TEST(LossTest, Traits) {
  const OpDef* def = OpRegistry::Global().Find("", "SoftmaxCrossEntropyLoss", 13);
  ASSERT_NE(def, nullptr);
  ASSERT_TRUE(def->traits);
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3});
  Value* t = b.Input("t", DType::kInt64, {2});
  b.Op("SoftmaxCrossEntropyLoss", {x, t});
  OpContext ctx(*b.last_node(), 13,
                {x->type(), t->type()}, {nullptr, nullptr}, [] { return std::string("s"); });
  Traits tr = def->traits(ctx);
  EXPECT_EQ(tr.semantic_name, "Loss");
  EXPECT_EQ(tr.collapse, CollapseKind::kReduces);
  EXPECT_EQ(tr.linearity, Linearity::kNonlinear);
  const OpDef* nll = OpRegistry::Global().Find("", "NegativeLogLikelihoodLoss", 13);
  ASSERT_NE(nll, nullptr);
  EXPECT_EQ(nll->traits(ctx).linearity, Linearity::kLinear);
}

TEST(LossTest, Float16ScoresGiveFloat16Loss) {
  Tensor x = ConvertTensor(Scores(), DType::kFloat16);
  Tensor target = Tensor::FromVector<int64_t>({2, 0}, {2});
  auto out = RunNode(Spec("SoftmaxCrossEntropyLoss"), {x, target});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat16);
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR((*out)[0].ElementAsDouble(0), ((lse0 - 3) + std::log(3.0)) / 2, 1e-3);
}

}  // namespace
}  // namespace aic

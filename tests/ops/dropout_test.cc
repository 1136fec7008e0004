#include <gtest/gtest.h>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::F32;
using testing::InferNode;
using testing::MaxAbsDiff;
using testing::NodeTraits;
using testing::Op;
using testing::RunNode;

Tensor X() { return Tensor::FromVector<float>({1, -2, 3, 4}, {2, 2}); }

TEST(DropoutTest, InferenceIsIdentityWithTrueMask) {
  auto out = RunNode(Op("Dropout", {}, 13, 2), {X(), Tensor::Scalar<float>(0.7f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], X()), 0.0);
  ASSERT_EQ((*out)[1].dtype(), DType::kBool);
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE((*out)[1].data<bool>()[i]);
  // Opset < 12: ratio is an attribute and the op is an identity.
  auto old = RunNode(Op("Dropout", {Attribute::Float("ratio", 0.3f)}, 10), {X()});
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(MaxAbsDiff((*old)[0], X()), 0.0);
}

TEST(DropoutTest, TrainingWithZeroRatioIsIdentity) {
  auto out = RunNode(Op("Dropout", {}, 13, 2),
                     {X(), Tensor::Scalar<float>(0.0f), Tensor::Scalar<bool>(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], X()), 0.0);
}

TEST(DropoutTest, TrainingKeepsOrZeroesAndScales) {
  // Seed-independent: every output is either 0 (mask false) or x/(1-ratio) (mask true).
  auto out = RunNode(Op("Dropout", {}, 13, 2),
                     {X(), Tensor::Scalar<float>(0.5f), Tensor::Scalar<bool>(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < 4; ++i) {
    float y = (*out)[0].data<float>()[i];
    bool kept = (*out)[1].data<bool>()[i];
    EXPECT_EQ(y, kept ? 2 * X().data<float>()[i] : 0.0f);
  }
}

TEST(DropoutTest, InferTraitsAndErrors) {
  auto t = InferNode(Op("Dropout", {}, 13, 2), {F32({Dim::Symbol("B"), 4})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[B, 4]");
  EXPECT_EQ((*t)[1].ToString(), "bool[B, 4]");
  EXPECT_FALSE(InferNode(Op("Dropout", {}, 13), {F32({4}), F32({2})}).ok());  // ratio not scalar
  EXPECT_FALSE(RunNode(Op("Dropout", {}, 13),
                       {X(), Tensor::Scalar<float>(1.5f), Tensor::Scalar<bool>(true)})
                   .ok());
  auto tc = NodeTraits(Op("Dropout", {}, 13), {F32({2, 4})}, {});
  EXPECT_EQ(tc.traits.semantic_name, "Dropout");
  EXPECT_EQ(tc.traits.collapse, CollapseKind::kDropsPaths);
  EXPECT_EQ(tc.traits.collapse_how, "random units zeroed in training");
  EXPECT_EQ(tc.traits.removable_when, "inference mode (training_mode false) or ratio 0");
}

}  // namespace
}  // namespace aic

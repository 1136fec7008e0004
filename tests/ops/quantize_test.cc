#include <gtest/gtest.h>

#include "ops/registry.h"
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

TEST(QuantizeTest, PerTensorRoundsHalfToEvenAndSaturates) {
  Tensor x = Tensor::FromVector<float>({0, 3, 5, 1000, -1000}, {5});
  auto out = RunNode(Spec("QuantizeLinear"),
                     {x, Tensor::Scalar<float>(2), Tensor::Scalar<uint8_t>(128)});
  ASSERT_TRUE(out.ok()) << out.status();
  // 3/2 = 1.5 -> 2, 5/2 = 2.5 -> 2 (ties to even).
  EXPECT_EQ((*out)[0].dtype(), DType::kUint8);
  EXPECT_EQ((*out)[0].span<uint8_t>()[1], 130);
  EXPECT_EQ((*out)[0].span<uint8_t>()[2], 130);
  EXPECT_EQ((*out)[0].span<uint8_t>()[3], 255);
  EXPECT_EQ((*out)[0].span<uint8_t>()[4], 0);
}

TEST(QuantizeTest, PerAxisInt8) {
  Tensor x = Tensor::FromVector<float>({10, 10, 10, 10}, {2, 2});
  Tensor scale = Tensor::FromVector<float>({1, 5}, {2});
  Tensor zero = Tensor::FromVector<int8_t>({0, -1}, {2});
  auto out = RunNode(Spec("QuantizeLinear", {Attribute::Int("axis", 0)}), {x, scale, zero});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kInt8);
  EXPECT_EQ((*out)[0].span<int8_t>()[1], 10);
  EXPECT_EQ((*out)[0].span<int8_t>()[2], 1);
}

TEST(QuantizeTest, DequantizePerAxis) {
  Tensor x = Tensor::FromVector<uint8_t>({3, 89, 34, 200}, {1, 2, 2});
  Tensor scale = Tensor::FromVector<float>({2, 4}, {2});
  Tensor zero = Tensor::FromVector<uint8_t>({84, 24}, {2});
  auto out = RunNode(Spec("DequantizeLinear"), {x, scale, zero});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].span<float>()[0], (3 - 84) * 2.0f);
  EXPECT_FLOAT_EQ((*out)[0].span<float>()[3], (200 - 24) * 4.0f);
}

TEST(QuantizeTest, DynamicQuantizeChoosesScaleAndZero) {
  Tensor x = Tensor::FromVector<float>({0, 2, -3, -2.5f, 1.34f, 0.5f}, {6});
  auto out = RunNode(Spec("DynamicQuantizeLinear", {}, 3), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[1].span<float>()[0], 5.0 / 255, 1e-7);
  EXPECT_EQ((*out)[2].span<uint8_t>()[0], 153);
  EXPECT_EQ((*out)[0].span<uint8_t>()[2], 0);    // −3 is the minimum
  EXPECT_EQ((*out)[0].span<uint8_t>()[1], 255);  // 2 is the maximum
}

TEST(QuantizeTest, InferDtypesAndSymbolicShape) {
  Shape s({Dim::Symbol("N"), 4});
  auto q = InferNode(Spec("QuantizeLinear"),
                     {TypeInfo::Tensor(DType::kFloat, s), TypeInfo::Tensor(DType::kFloat, Shape::Scalar()),
                      TypeInfo::Tensor(DType::kInt8, Shape::Scalar())});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ((*q)[0].dtype, DType::kInt8);
  EXPECT_EQ((*q)[0].shape.ToString(), "[N, 4]");
  auto dq = InferNode(Spec("DequantizeLinear"),
                      {TypeInfo::Tensor(DType::kFloat, s), TypeInfo::Tensor(DType::kFloat, Shape::Scalar())});
  EXPECT_FALSE(dq.ok());  // x must be an integer type
  auto dyn = InferNode(Spec("DynamicQuantizeLinear", {}, 3), {TypeInfo::Tensor(DType::kFloat, s)});
  ASSERT_TRUE(dyn.ok()) << dyn.status();
  EXPECT_EQ((*dyn)[1].shape.rank(), 0);
  EXPECT_EQ((*dyn)[2].dtype, DType::kUint8);
}

TEST(QuantizeTest, PerAxisScaleSizeMismatchFails) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3}, {3});
  auto out = RunNode(Spec("QuantizeLinear", {Attribute::Int("axis", 0)}),
                     {x, Tensor::FromVector<float>({1, 2}, {2}),
                      Tensor::FromVector<uint8_t>({0, 0}, {2})});
  EXPECT_FALSE(out.ok());
}

TEST(QuantizeTest, Traits) {
  const OpDef* def = OpRegistry::Global().Find("", "QuantizeLinear", 13);
  ASSERT_NE(def, nullptr);
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4});
  Value* s = b.Input("s", DType::kFloat, {});
  b.Op("QuantizeLinear", {x, s});
  OpContext ctx(*b.last_node(), 13, {x->type(), s->type()}, {nullptr, nullptr},
                [] { return std::string("s"); });
  ctx.set_output(0, DType::kUint8, Shape({4}));
  Traits t = def->traits(ctx);
  EXPECT_EQ(t.collapse, CollapseKind::kQuantizes);
  EXPECT_EQ(t.invertibility, Invertibility::kIrreversible);
  EXPECT_EQ(t.effect_detail, "float → uint8");
  const OpDef* dq = OpRegistry::Global().Find("", "DequantizeLinear", 13);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->traits(ctx).linearity, Linearity::kAffine);
}

TEST(QuantizeTest, StringOrMissingInputIsAnErrorNotACrash) {
  auto out = RunNode(Spec("QuantizeLinear"), {Tensor::FromStrings({"1"}, {1}), Tensor::Scalar<float>(1)});
  EXPECT_FALSE(out.ok());
  auto missing = RunNode(Spec("DequantizeLinear"), {Tensor::FromVector<uint8_t>({1}, {1}), Tensor()});
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace aic

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::SingleNode;

SingleNode Spec(std::string op, std::vector<Attribute> attrs = {}) {
  SingleNode s;
  s.op_type = std::move(op);
  s.attributes = std::move(attrs);
  return s;
}

TypeInfo T(DType dt, Shape s) { return TypeInfo::Tensor(dt, std::move(s)); }

TEST(SignalTest, DftOfImpulseAndConstant) {
  // Real input [1, 4, 1]: x = [1, 1, 1, 1] -> X = [4, 0, 0, 0].
  auto out = RunNode(Spec("DFT"), {Tensor::FromVector<float>({1, 1, 1, 1}, {1, 4, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 4, 2}));
  EXPECT_NEAR((*out)[0].data<float>()[0], 4, 1e-6);
  for (int i = 1; i < 8; ++i) EXPECT_NEAR((*out)[0].data<float>()[i], 0, 1e-6) << i;
}

TEST(SignalTest, DftOnesidedAndInverseRoundTrip) {
  // x = [0, 1, 0, 0]: X[k] = e^{−iπk/2}; onesided keeps k = 0..2.
  Tensor x = Tensor::FromVector<float>({0, 1, 0, 0}, {1, 4, 1});
  auto one = RunNode(Spec("DFT", {Attribute::Int("onesided", 1)}), {x});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ((*one)[0].dims(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_NEAR((*one)[0].data<float>()[2], 0, 1e-6);   // Re X[1]
  EXPECT_NEAR((*one)[0].data<float>()[3], -1, 1e-6);  // Im X[1]
  auto full = RunNode(Spec("DFT"), {x});
  ASSERT_TRUE(full.ok());
  auto back = RunNode(Spec("DFT", {Attribute::Int("inverse", 1)}), {(*full)[0]});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_NEAR((*back)[0].data<float>()[2], 1, 1e-6);  // Re x[1]
  EXPECT_NEAR((*back)[0].data<float>()[3], 0, 1e-6);
}

TEST(SignalTest, DftInferAndError) {
  auto types = InferNode(Spec("DFT", {Attribute::Int("onesided", 1)}),
                         {T(DType::kFloat, Shape({Dim::Symbol("B"), 8, 1}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, 5, 2]");
  auto bad = RunNode(Spec("DFT"), {Tensor::FromVector<float>({1, 2, 3}, {1, 1, 3})});
  EXPECT_FALSE(bad.ok());  // last axis must be 1 or 2
}

TEST(SignalTest, StftFramesAndBins) {
  std::vector<float> sig(8, 1.0f);
  auto out = RunNode(Spec("STFT"), {Tensor::FromVector<float>(sig, {1, 8, 1}),
                                    Tensor::Scalar<int64_t>(2), Tensor(),
                                    Tensor::Scalar<int64_t>(4)});
  ASSERT_TRUE(out.ok()) << out.status();
  // frames = (8 − 4)/2 + 1 = 3, bins = 4/2 + 1 = 3; a constant frame has DC 4 only.
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 3, 3, 2}));
  EXPECT_NEAR((*out)[0].data<float>()[0], 4, 1e-6);
  EXPECT_NEAR((*out)[0].data<float>()[2], 0, 1e-6);
  auto types = InferNode(Spec("STFT"),
                         {T(DType::kFloat, Shape({Dim::Symbol("B"), 8, 1})), T(DType::kInt64, Shape::Scalar()),
                          T(DType::kFloat, Shape({4}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.rank(), 4);
  EXPECT_EQ((*types)[0].shape[0].ToString(), "B");
  EXPECT_EQ((*types)[0].shape[2].ToString(), "3");
  auto bad = RunNode(Spec("STFT"), {Tensor::FromVector<float>(sig, {1, 8, 1}),
                                    Tensor::Scalar<int64_t>(0), Tensor(), Tensor::Scalar<int64_t>(4)});
  EXPECT_FALSE(bad.ok());  // frame_step 0
}

TEST(SignalTest, Windows) {
  auto hann = RunNode(Spec("HannWindow"), {Tensor::Scalar<int32_t>(4)});
  ASSERT_TRUE(hann.ok()) << hann.status();
  // periodic N = 4: [0, 0.5, 1, 0.5]
  EXPECT_NEAR((*hann)[0].data<float>()[1], 0.5, 1e-6);
  EXPECT_NEAR((*hann)[0].data<float>()[2], 1.0, 1e-6);
  auto sym = RunNode(Spec("HammingWindow", {Attribute::Int("periodic", 0),
                                            Attribute::Int("output_datatype", 11)}),
                     {Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(sym.ok()) << sym.status();
  EXPECT_EQ((*sym)[0].dtype(), DType::kDouble);
  EXPECT_NEAR((*sym)[0].data<double>()[2], 25.0 / 46 - 21.0 / 46, 1e-12);  // symmetric end
  auto black = RunNode(Spec("BlackmanWindow"), {Tensor::Scalar<int64_t>(2)});
  ASSERT_TRUE(black.ok());
  EXPECT_NEAR((*black)[0].data<float>()[1], 0.42 + 0.5 + 0.08, 1e-6);
  auto bad = RunNode(Spec("HannWindow"), {Tensor::Scalar<int64_t>(-1)});
  EXPECT_FALSE(bad.ok());
  Tensor size = Tensor::Scalar<int64_t>(6);
  auto types = InferNode(Spec("HannWindow"), {T(DType::kInt64, Shape::Scalar())}, {&size});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[6]");
}

TEST(SignalTest, MelWeightMatrixShapeAndPeaks) {
  auto out = RunNode(Spec("MelWeightMatrix"),
                     {Tensor::Scalar<int32_t>(8), Tensor::Scalar<int32_t>(16),
                      Tensor::Scalar<int32_t>(8192), Tensor::Scalar<float>(0),
                      Tensor::Scalar<float>(4096)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{9, 8}));
  // The ONNX reference's first rows: [1, 1, 0, ...] and [0, 0, 1, 1, 0, ...].
  EXPECT_EQ((*out)[0].data<float>()[0], 1.0f);
  EXPECT_EQ((*out)[0].data<float>()[1], 1.0f);
  EXPECT_EQ((*out)[0].data<float>()[2], 0.0f);
  EXPECT_EQ((*out)[0].data<float>()[8 + 2], 1.0f);
}

TEST(SignalTest, Traits) {
  const OpDef* def = OpRegistry::Global().Find("", "DFT", 17);
  ASSERT_NE(def, nullptr);
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 2});
  b.Op("DFT", {x});
  OpContext ctx(*b.last_node(), 17, {x->type()}, {nullptr}, [] { return std::string("s"); });
  ctx.set_output(0, DType::kFloat, Shape({1, 8, 2}));
  Traits t = def->traits(ctx);
  EXPECT_EQ(t.linearity, Linearity::kLinear);
  EXPECT_EQ(t.invertibility, Invertibility::kInvertible);
  EXPECT_EQ(def->cost(ctx).macs, 8 * 8 * 4);
}

}  // namespace
}  // namespace aic

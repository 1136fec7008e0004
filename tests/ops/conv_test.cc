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

Tensor Iota(std::vector<int64_t> dims, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(NumElements(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::FromVector<float>(v, dims);
}

Tensor Filled(std::vector<int64_t> dims, float value) {
  return Tensor::FromVector<float>(std::vector<float>(static_cast<size_t>(NumElements(dims)), value),
                                   dims);
}

TEST(ConvTest, PaddedThreeByThreeOnes) {
  // The ONNX example: 5×5 ramp, 3×3 ones, pad 1 -> sums of each 3×3 neighbourhood.
  auto out = RunNode(Op("Conv", {Attribute::Ints("pads", {1, 1, 1, 1})}),
                     {Iota({1, 1, 5, 5}), Filled({1, 1, 3, 3}, 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_EQ(y.data<float>()[0], 12);   // 0+1+5+6
  EXPECT_EQ(y.data<float>()[6], 54);   // 9 values around 6: 0+1+2+5+6+7+10+11+12
  EXPECT_EQ(y.data<float>()[24], 84);  // 18+19+23+24
}

TEST(ConvTest, StridesDilationsGroupsAndBias) {
  // Two groups of one channel each; channel 1 weights are doubled; bias [10, 20].
  Tensor x = Iota({1, 2, 4, 4});
  Tensor w = Tensor::FromVector<float>({1, 1, 1, 1, 2, 2, 2, 2}, {2, 1, 2, 2});
  Tensor b = Tensor::FromVector<float>({10, 20}, {2});
  auto out = RunNode(Op("Conv", {Attribute::Int("group", 2), Attribute::Ints("strides", {2, 2}),
                                 Attribute::Ints("dilations", {2, 2})}),
                     {x, w, b});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 1, 1}));
  // Taps (0,0),(0,2),(2,0),(2,2): channel 0: 0+2+8+10 = 20; channel 1: 16+18+24+26 = 84.
  EXPECT_EQ(y.data<float>()[0], 20 + 10);
  EXPECT_EQ(y.data<float>()[1], 2 * 84 + 20);
}

TEST(ConvTest, AutoPadSameAndOneD) {
  auto out = RunNode(Op("Conv", {Attribute::String("auto_pad", "SAME_UPPER"),
                                 Attribute::Ints("strides", {2})}),
                     {Iota({1, 1, 5}), Filled({1, 1, 2}, 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  // out = ceil(5/2) = 3; total pad = (3-1)·2 + 2 - 5 = 1, all at the end.
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({1, 5, 4}, {1, 1, 3})), 0.0);
}

TEST(ConvTest, InferSymbolicAndErrors) {
  auto t = InferNode(Op("Conv", {Attribute::Ints("pads", {1, 1, 1, 1})}),
                     {F32({Dim::Symbol("N"), 3, Dim::Symbol("H"), 8}), F32({16, 3, 3, 3})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[N, 16, H, 8]");
  auto strided = InferNode(Op("Conv", {Attribute::Ints("strides", {2, 2})}),
                           {F32({1, 3, Dim::Symbol("H"), 9}), F32({4, 3, 3, 3})});
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_TRUE((*strided)[0].shape[2].is_symbol());
  EXPECT_EQ((*strided)[0].shape[3].value(), 4);
  // Channel mismatch and bad rank.
  EXPECT_FALSE(InferNode(Op("Conv"), {F32({1, 3, 8, 8}), F32({4, 2, 3, 3})}).ok());
  EXPECT_FALSE(InferNode(Op("Conv"), {F32({3, 8}), F32({4, 3})}).ok());
  EXPECT_FALSE(RunNode(Op("Conv"), {Iota({1, 3, 4, 4}), Iota({2, 2, 3, 3})}).ok());
  // A window larger than the padded input, and a deconvolution whose pads eat
  // its whole output: malformed (ONNX Runtime refuses both; found by tests/graph_fuzz).
  EXPECT_FALSE(InferNode(Op("Conv"), {F32({1, 3, 2, 2}), F32({4, 3, 3, 3})}).ok());
  EXPECT_TRUE(InferNode(Op("Conv", {Attribute::Ints("pads", {1, 1, 1, 1})}), {F32({1, 3, 2, 2}), F32({4, 3, 3, 3})}).ok());
  EXPECT_FALSE(InferNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {3, 3})}), {F32({1, 3, 2, 2})}).ok());
  EXPECT_FALSE(InferNode(Op("ConvTranspose", {Attribute::Ints("pads", {1, 1, 1, 1})}),
                         {F32({1, 1, 3, 1}), F32({1, 1, 2, 2})})
                   .ok());
}

TEST(ConvTest, ConvLayerTraitsAndCost) {
  Tensor w = Filled({16, 3, 3, 3}, 0.1f), b = Filled({16}, 0);
  auto tc = NodeTraits(Op("Conv", {Attribute::Ints("pads", {1, 1, 1, 1})}),
                       {F32({1, 3, 8, 8}), F32({16, 3, 3, 3}), F32({16})}, {nullptr, &w, &b});
  EXPECT_EQ(tc.traits.semantic_name, "Conv");
  EXPECT_EQ(tc.traits.linearity, Linearity::kAffine);
  EXPECT_TRUE(tc.traits.trainable);
  EXPECT_EQ(tc.traits.effect, RepresentationEffect::kExpands);
  EXPECT_EQ(tc.traits.effect_detail, "3 → 16");
  EXPECT_EQ(tc.traits.PropertyWords(), (std::vector<std::string>{"linear", "trainable"}));
  EXPECT_EQ(tc.cost.params, 16 * 3 * 9 + 16);
  EXPECT_EQ(tc.cost.macs, 16 * 8 * 8 * 3 * 9);  // out elements × Cin/group × kernel volume
  EXPECT_EQ(tc.cost.flops, 2 * tc.cost.macs + 16 * 8 * 8);
}

TEST(ConvTransposeTest, StridedScatter) {
  // 1-D: x = [1, 2], w = [1, 1, 1], stride 2 -> [1, 1, 3, 2, 2].
  auto out = RunNode(Op("ConvTranspose", {Attribute::Ints("strides", {2})}),
                     {Tensor::FromVector<float>({1, 2}, {1, 1, 2}), Filled({1, 1, 3}, 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({1, 1, 3, 2, 2}, {1, 1, 5})), 0.0);
  // output_padding adds a trailing zero; pads crop.
  auto padded = RunNode(Op("ConvTranspose", {Attribute::Ints("strides", {2}),
                                             Attribute::Ints("output_padding", {1}),
                                             Attribute::Ints("pads", {1, 0})}),
                        {Tensor::FromVector<float>({1, 2}, {1, 1, 2}), Filled({1, 1, 3}, 1)});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(MaxAbsDiff((*padded)[0], Tensor::FromVector<float>({1, 3, 2, 2, 0}, {1, 1, 5})), 0.0);
}

TEST(ConvTransposeTest, InferOutputShapeAndErrors) {
  auto t = InferNode(Op("ConvTranspose", {Attribute::Ints("strides", {3, 2}),
                                          Attribute::Ints("output_shape", {10, 8})}),
                     {F32({1, 1, 3, 3}), F32({1, 2, 3, 3})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[1, 2, 10, 8]");
  auto sym = InferNode(Op("ConvTranspose"), {F32({Dim::Symbol("N"), 1, 3, 3}), F32({1, 2, 3, 3})});
  ASSERT_TRUE(sym.ok()) << sym.status();
  EXPECT_EQ((*sym)[0].shape.ToString(), "[N, 2, 5, 5]");
  EXPECT_FALSE(InferNode(Op("ConvTranspose"), {F32({1, 2, 3, 3}), F32({1, 2, 3, 3})}).ok());
}

TEST(ConvIntegerTest, SubtractsZeroPoints) {
  auto x = Tensor::FromVector<uint8_t>({2, 3, 4, 5}, {1, 1, 2, 2});
  auto w = Tensor::FromVector<uint8_t>({1, 1, 1, 1}, {1, 1, 2, 2});
  auto xzp = Tensor::FromVector<uint8_t>({1}, {});
  auto out = RunNode(Op("ConvInteger"), {x, w, xzp});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<int32_t>({10}, {1, 1, 1, 1})), 0.0);
  EXPECT_FALSE(RunNode(Op("ConvInteger"), {Iota({1, 1, 2, 2}), Iota({1, 1, 2, 2})}).ok());
}

TEST(QLinearConvTest, Requantizes) {
  auto x = Tensor::FromVector<uint8_t>({2, 4}, {1, 1, 2});
  auto w = Tensor::FromVector<uint8_t>({3, 5}, {1, 1, 2});
  auto s = Tensor::FromVector<float>({0.5f}, {});
  auto zp = Tensor::FromVector<uint8_t>({0}, {});
  auto ys = Tensor::FromVector<float>({0.25f}, {});
  auto yzp = Tensor::FromVector<uint8_t>({1}, {});
  auto out = RunNode(Op("QLinearConv"), {x, s, zp, w, s, zp, ys, yzp});
  ASSERT_TRUE(out.ok()) << out.status();
  // (2·3 + 4·5)·0.25/0.25 + 1 = 27.
  EXPECT_EQ((*out)[0].data<uint8_t>()[0], 27);
}

}  // namespace
}  // namespace aic

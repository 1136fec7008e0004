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

TEST(MaxPoolTest, ValuesAndIndices) {
  auto out = RunNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}),
                                    Attribute::Ints("strides", {2, 2})},
                        12, 2),
                     {Iota({1, 1, 4, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({5, 7, 13, 15}, {1, 1, 2, 2})), 0.0);
  EXPECT_EQ(MaxAbsDiff((*out)[1], Tensor::FromVector<int64_t>({5, 7, 13, 15}, {1, 1, 2, 2})), 0.0);
  // Column-major indices: (h, w) -> h + w·H.
  auto cm = RunNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}),
                                   Attribute::Ints("strides", {2, 2}),
                                   Attribute::Int("storage_order", 1)},
                       12, 2),
                    {Iota({1, 1, 4, 4})});
  ASSERT_TRUE(cm.ok()) << cm.status();
  EXPECT_EQ(MaxAbsDiff((*cm)[1], Tensor::FromVector<int64_t>({5, 13, 7, 15}, {1, 1, 2, 2})), 0.0);
}

TEST(MaxPoolTest, CeilModePaddingAndDilation) {
  auto ceil = RunNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {3, 3}),
                                     Attribute::Ints("strides", {2, 2}),
                                     Attribute::Int("ceil_mode", 1)}),
                      {Iota({1, 1, 4, 4})});
  ASSERT_TRUE(ceil.ok()) << ceil.status();
  EXPECT_EQ(MaxAbsDiff((*ceil)[0], Tensor::FromVector<float>({10, 11, 14, 15}, {1, 1, 2, 2})), 0.0);
  // Padding never wins a max, even against negative values.
  auto neg = RunNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {2}),
                                    Attribute::Ints("pads", {1, 1})}),
                     {Iota({1, 1, 2}, -5.0f)});
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ(MaxAbsDiff((*neg)[0], Tensor::FromVector<float>({-5, -4, -4}, {1, 1, 3})), 0.0);
  auto dil = RunNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {2}),
                                    Attribute::Ints("dilations", {2})}),
                     {Tensor::FromVector<float>({1, 9, 3, 0}, {1, 1, 4})});
  ASSERT_TRUE(dil.ok()) << dil.status();
  EXPECT_EQ(MaxAbsDiff((*dil)[0], Tensor::FromVector<float>({3, 9}, {1, 1, 2})), 0.0);
}

TEST(AveragePoolTest, CountIncludePad) {
  Tensor x = Iota({1, 1, 3}, 1.0f);  // [1, 2, 3]
  auto excl = RunNode(Op("AveragePool", {Attribute::Ints("kernel_shape", {2}),
                                         Attribute::Ints("pads", {1, 1})}),
                      {x});
  ASSERT_TRUE(excl.ok()) << excl.status();
  EXPECT_EQ(MaxAbsDiff((*excl)[0], Tensor::FromVector<float>({1, 1.5, 2.5, 3}, {1, 1, 4})), 0.0);
  auto incl = RunNode(Op("AveragePool", {Attribute::Ints("kernel_shape", {2}),
                                         Attribute::Ints("pads", {1, 1}),
                                         Attribute::Int("count_include_pad", 1)}),
                      {x});
  ASSERT_TRUE(incl.ok()) << incl.status();
  EXPECT_EQ(MaxAbsDiff((*incl)[0], Tensor::FromVector<float>({0.5, 1.5, 2.5, 1.5}, {1, 1, 4})), 0.0);
}

TEST(GlobalPoolTest, AverageMaxAndLp) {
  Tensor x = Tensor::FromVector<float>({3, -4, 1, 2}, {1, 2, 2});
  auto avg = RunNode(Op("GlobalAveragePool"), {x});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(MaxAbsDiff((*avg)[0], Tensor::FromVector<float>({-0.5, 1.5}, {1, 2, 1})), 0.0);
  auto mx = RunNode(Op("GlobalMaxPool"), {x});
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_EQ(MaxAbsDiff((*mx)[0], Tensor::FromVector<float>({3, 2}, {1, 2, 1})), 0.0);
  auto lp = RunNode(Op("GlobalLpPool"), {x});
  ASSERT_TRUE(lp.ok()) << lp.status();
  EXPECT_LT(MaxAbsDiff((*lp)[0], Tensor::FromVector<float>({5, 2.2360680f}, {1, 2, 1})), 1e-6);
  auto t = InferNode(Op("GlobalAveragePool"), {F32({Dim::Symbol("N"), 8, Dim::Symbol("H"), 7})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape.ToString(), "[N, 8, 1, 1]");
}

TEST(LpPoolTest, WindowNorm) {
  auto out = RunNode(Op("LpPool", {Attribute::Ints("kernel_shape", {2}), Attribute::Int("p", 1)}),
                     {Tensor::FromVector<float>({1, -2, 3}, {1, 1, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({3, 5}, {1, 1, 2})), 1e-6);
}

TEST(PoolTest, InferSymbolicAndErrors) {
  auto t = InferNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {3, 3}),
                                    Attribute::Ints("pads", {1, 1, 1, 1})}, 12, 2),
                     {F32({Dim::Symbol("N"), 3, Dim::Symbol("H"), 10})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[N, 3, H, 10]");
  EXPECT_EQ((*t)[1].ToString(), "int64[N, 3, H, 10]");
  auto same = InferNode(Op("AveragePool", {Attribute::Ints("kernel_shape", {3, 3}),
                                           Attribute::String("auto_pad", "SAME_UPPER"),
                                           Attribute::Ints("strides", {2, 2})}),
                        {F32({1, 3, 7, 8})});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ((*same)[0].shape.ToString(), "[1, 3, 4, 4]");
  EXPECT_FALSE(InferNode(Op("MaxPool"), {F32({1, 3, 8, 8})}).ok());  // no kernel_shape
  EXPECT_FALSE(InferNode(Op("MaxPool", {Attribute::Ints("kernel_shape", {2})}), {F32({1, 3, 8, 8})}).ok());
  EXPECT_FALSE(InferNode(Op("GlobalMaxPool"), {F32({8})}).ok());
}

TEST(PoolTest, Traits) {
  auto mx = NodeTraits(Op("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}),
                                      Attribute::Ints("strides", {2, 2})}),
                       {F32({1, 3, 8, 8})}, {});
  EXPECT_EQ(mx.traits.collapse, CollapseKind::kSelects);
  EXPECT_EQ(mx.traits.effect, RepresentationEffect::kRestricts);
  EXPECT_EQ(mx.traits.effect_detail, "8×8 → 4×4");
  EXPECT_EQ(mx.traits.PropertyWords(),
            (std::vector<std::string>{"nonlinear", "irreversible", "collapse-producing"}));
  EXPECT_EQ(mx.cost.flops, 3 * 4 * 4 * 4);
  auto avg = NodeTraits(Op("GlobalAveragePool"), {F32({1, 3, 8, 8})}, {});
  EXPECT_EQ(avg.traits.collapse, CollapseKind::kReduces);
  EXPECT_EQ(avg.traits.linearity, Linearity::kLinear);
}

TEST(MaxUnpoolTest, ScattersAndPads) {
  Tensor x = Tensor::FromVector<float>({5, 6, 7, 8}, {1, 1, 2, 2});
  Tensor ind = Tensor::FromVector<int64_t>({5, 7, 13, 15}, {1, 1, 2, 2});
  auto out = RunNode(Op("MaxUnpool", {Attribute::Ints("kernel_shape", {2, 2}),
                                      Attribute::Ints("strides", {2, 2})}),
                     {x, ind});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ((*out)[0].data<float>()[5], 5);
  EXPECT_EQ((*out)[0].data<float>()[15], 8);
  EXPECT_EQ((*out)[0].data<float>()[0], 0);
  Tensor bad = Tensor::FromVector<int64_t>({5, 7, 13, 99}, {1, 1, 2, 2});
  EXPECT_FALSE(RunNode(Op("MaxUnpool", {Attribute::Ints("kernel_shape", {2, 2}),
                                        Attribute::Ints("strides", {2, 2})}),
                       {x, bad})
                   .ok());
}

TEST(RoiAlignTest, WholeImageAverage) {
  // One roi covering a constant image: every bin averages to the constant.
  Tensor x = Tensor::FromVector<float>(std::vector<float>(16, 3.0f), {1, 1, 4, 4});
  Tensor rois = Tensor::FromVector<float>({0, 0, 3, 3}, {1, 4});
  Tensor batch = Tensor::FromVector<int64_t>({0}, {1});
  auto out = RunNode(Op("RoiAlign", {Attribute::Int("output_height", 2),
                                     Attribute::Int("output_width", 2)}, 16),
                     {x, rois, batch});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({3, 3, 3, 3}, {1, 1, 2, 2})), 1e-6);
  auto t = InferNode(Op("RoiAlign", {Attribute::Int("output_height", 5)}, 16),
                     {F32({1, 8, 16, 16}), F32({Dim::Symbol("R"), 4}),
                      TypeInfo::Tensor(DType::kInt64, Shape({Dim::Symbol("R")}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[R, 8, 5, 1]");
  EXPECT_FALSE(InferNode(Op("RoiAlign", {}, 16), {F32({8, 16, 16}), F32({2, 4}),
                                                   TypeInfo::Tensor(DType::kInt64, Shape({2}))})
                   .ok());
}

TEST(MaxRoiPoolTest, MaxPerBin) {
  Tensor x = Iota({1, 1, 4, 4});
  Tensor rois = Tensor::FromVector<float>({0, 0, 0, 3, 3}, {1, 5});
  auto out = RunNode(Op("MaxRoiPool", {Attribute::Ints("pooled_shape", {2, 2})}), {x, rois});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({5, 7, 13, 15}, {1, 1, 2, 2})), 0.0);
}

}  // namespace
}  // namespace aic

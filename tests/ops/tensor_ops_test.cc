// Tests of the tensor op family: Transpose, Concat, Split, Expand, Tile,
// DepthToSpace/SpaceToDepth, ReverseSequence, Pad, CenterCropPad, the
// generators (Constant*, Range, EyeLike, OneHot, Trilu, CumSum) and Resize.
#include <gtest/gtest.h>

#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::Op;
using testing::SingleNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, dims); }
Tensor I(std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(v, {n});
}
TypeInfo FT(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }
TypeInfo I64T(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kInt64, Shape(dims)); }
Dim S(const char* name) { return Dim::Symbol(name); }
std::vector<float> Vals(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements()); }

Tensor Run1(const SingleNode& spec, const std::vector<Tensor>& in) {
  auto out = RunNode(spec, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(TensorOpsTest, Transpose) {
  Tensor y = Run1(Op("Transpose"), {F({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Vals(y), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  auto t = InferNode(Op("Transpose", {Attribute::Ints("perm", {2, 0, 1})}), {FT({S("b"), 3, 4})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({4, S("b"), 3}));
  EXPECT_FALSE(InferNode(Op("Transpose", {Attribute::Ints("perm", {0, 0})}), {FT({2, 3})}).ok());
}

TEST(TensorOpsTest, Concat) {
  Tensor y = Run1(Op("Concat", {Attribute::Int("axis", 1)}), {F({1, 2}, {2, 1}), F({3, 4, 5, 6}, {2, 2})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Vals(y), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  auto t = InferNode(Op("Concat", {Attribute::Int("axis", -1)}), {FT({S("b"), 2}), FT({S("b"), 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 5}));
  auto sym = InferNode(Op("Concat", {Attribute::Int("axis", 0)}), {FT({S("n"), 2}), FT({0, 2})});
  ASSERT_TRUE(sym.ok());
  EXPECT_EQ((*sym)[0].shape, Shape({S("n"), 2}));
  EXPECT_FALSE(InferNode(Op("Concat", {Attribute::Int("axis", 0)}), {FT({1, 2}), FT({1, 3})}).ok());
}

TEST(TensorOpsTest, SplitSizesAndNumOutputs) {
  auto out = RunNode(Op("Split", {}, 17, 2), {F({1, 2, 3, 4, 5}, {5}), I({2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Vals((*out)[1]), (std::vector<float>{3, 4, 5}));
  auto uneven = RunNode(Op("Split", {Attribute::Int("num_outputs", 2)}, 18, 2), {F({1, 2, 3, 4, 5}, {5})});
  ASSERT_TRUE(uneven.ok()) << uneven.status();
  EXPECT_EQ((*uneven)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ((*uneven)[1].dims(), (std::vector<int64_t>{2}));
  auto t = InferNode(Op("Split", {Attribute::Int("axis", 1)}, 17, 2), {FT({S("b"), 6})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[1].shape, Shape({S("b"), 3}));
  EXPECT_FALSE(InferNode(Op("Split", {}, 17, 2), {FT({5})}).ok());
}

TEST(TensorOpsTest, ExpandAndTile) {
  Tensor y = Run1(Op("Expand"), {F({1, 2}, {2, 1}), I({2, 3})});
  EXPECT_EQ(Vals(y), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  Tensor shape = I({3, 1, 4});
  auto t = InferNode(Op("Expand"), {FT({S("b"), 1}), I64T({3})}, {nullptr, &shape});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({3, S("b"), 4}));
  Tensor tile = Run1(Op("Tile"), {F({1, 2}, {1, 2}), I({2, 2})});
  EXPECT_EQ(Vals(tile), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  Tensor reps = I({1, 2});
  auto tt = InferNode(Op("Tile"), {FT({S("b"), 3}), I64T({2})}, {nullptr, &reps});
  ASSERT_TRUE(tt.ok());
  EXPECT_EQ((*tt)[0].shape, Shape({S("b"), 6}));
  EXPECT_FALSE(RunNode(Op("Expand"), {F({1, 2, 3}, {3}), I({2})}).ok());
}

TEST(TensorOpsTest, DepthToSpaceRoundTripsWithSpaceToDepth) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  Tensor x = F(v, {1, 4, 2, 2});
  Tensor d = Run1(Op("DepthToSpace", {Attribute::Int("blocksize", 2)}), {x});
  EXPECT_EQ(d.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  // DCR: y[0,0,0,1] = x[0, 1, 0, 0] = 4.
  EXPECT_EQ(d.data<float>()[1], 4.f);
  Tensor back = Run1(Op("SpaceToDepth", {Attribute::Int("blocksize", 2)}), {d});
  EXPECT_EQ(Vals(back), v);
  Tensor crd = Run1(Op("DepthToSpace", {Attribute::Int("blocksize", 2), Attribute::String("mode", "CRD")}), {x});
  EXPECT_EQ(crd.data<float>()[1], 4.f);  // one output channel: CRD and DCR agree
  auto t = InferNode(Op("SpaceToDepth", {Attribute::Int("blocksize", 2)}), {FT({S("b"), 3, 4, 6})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 12, 2, 3}));
  EXPECT_FALSE(InferNode(Op("DepthToSpace", {Attribute::Int("blocksize", 2)}), {FT({1, 3, 2, 2})}).ok());
}

TEST(TensorOpsTest, ReverseSequence) {
  // time_axis 0, batch_axis 1: x[t, b]
  Tensor y = Run1(Op("ReverseSequence"), {F({0, 10, 1, 11, 2, 12}, {3, 2}), I({3, 1})});
  EXPECT_EQ(Vals(y), (std::vector<float>{2, 10, 1, 11, 0, 12}));
  EXPECT_FALSE(RunNode(Op("ReverseSequence"), {F({0, 1}, {1, 2}), I({5, 1})}).ok());
}

TEST(TensorOpsTest, PadModes) {
  Tensor x = F({1, 2, 3}, {3});
  EXPECT_EQ(Vals(Run1(Op("Pad"), {x, I({2, 1}), F({9}, {})})), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(Vals(Run1(Op("Pad", {Attribute::String("mode", "reflect")}), {x, I({2, 2})})),
            (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(Vals(Run1(Op("Pad", {Attribute::String("mode", "edge")}), {x, I({1, 2})})),
            (std::vector<float>{1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(Vals(Run1(Op("Pad"), {x, I({-1, 0})})), (std::vector<float>{2, 3}));
  Tensor pads = I({0, 1, 0, 1});
  auto t = InferNode(Op("Pad"), {FT({S("b"), 3}), I64T({4})}, {nullptr, &pads});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 5}));
  EXPECT_FALSE(InferNode(Op("Pad", {Attribute::String("mode", "bogus")}), {FT({3}), I64T({2})}).ok());
}

TEST(TensorOpsTest, CenterCropPad) {
  Tensor y = Run1(Op("CenterCropPad", {}, 18), {F({1, 2, 3, 4, 5}, {5}), I({3})});
  EXPECT_EQ(Vals(y), (std::vector<float>{2, 3, 4}));
  Tensor p = Run1(Op("CenterCropPad", {}, 18), {F({1, 2}, {2}), I({5})});
  EXPECT_EQ(Vals(p), (std::vector<float>{0, 1, 2, 0, 0}));
}

TEST(TensorOpsTest, ConstantVariants) {
  auto c = InferNode(Op("Constant", {Attribute::Ints("value_ints", {1, 2, 3})}), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].shape, Shape({3}));
  EXPECT_EQ((*c)[0].dtype, DType::kInt64);
  Tensor f = Run1(Op("Constant", {Attribute::Float("value_float", 2.5f)}), {});
  EXPECT_EQ(f.data<float>()[0], 2.5f);
  EXPECT_FALSE(InferNode(Op("Constant"), {}).ok());
  Tensor fill = Run1(Op("ConstantOfShape", {Attribute::TensorValue("value", Tensor::FromVector<int32_t>({7}, {1}))}),
                     {I({2, 2})});
  EXPECT_EQ(fill.dtype(), DType::kInt32);
  EXPECT_EQ(fill.data<int32_t>()[3], 7);
}

TEST(TensorOpsTest, RangeEyeLikeOneHot) {
  Tensor r = Run1(Op("Range"), {F({1}, {}), F({2.f}, {}), F({0.25f}, {})});
  EXPECT_EQ(Vals(r), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  Tensor e = Run1(Op("EyeLike", {Attribute::Int("k", 1)}), {F(std::vector<float>(6, 5.f), {2, 3})});
  EXPECT_EQ(Vals(e), (std::vector<float>{0, 1, 0, 0, 0, 1}));
  Tensor oh = Run1(Op("OneHot"), {I({0, -1}), F({3}, {}), F({0, 1}, {2})});
  EXPECT_EQ(oh.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Vals(oh), (std::vector<float>{1, 0, 0, 0, 0, 1}));
  Tensor depth = F({4}, {});
  auto t = InferNode(Op("OneHot", {Attribute::Int("axis", 0)}),
                     {I64T({S("n")}), FT({}), FT({2})}, {nullptr, &depth});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({4, S("n")}));
  EXPECT_FALSE(InferNode(Op("EyeLike"), {FT({2})}).ok());
}

TEST(TensorOpsTest, TriluAndCumSum) {
  Tensor x = F({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_EQ(Vals(Run1(Op("Trilu"), {x})), (std::vector<float>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(Vals(Run1(Op("Trilu", {Attribute::Int("upper", 0)}), {x, Tensor::Scalar<int64_t>(-1)})),
            (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  Tensor v = F({1, 2, 3}, {3});
  EXPECT_EQ(Vals(Run1(Op("CumSum"), {v, Tensor::Scalar<int64_t>(0)})), (std::vector<float>{1, 3, 6}));
  EXPECT_EQ(Vals(Run1(Op("CumSum", {Attribute::Int("exclusive", 1), Attribute::Int("reverse", 1)}),
                      {v, Tensor::Scalar<int64_t>(0)})),
            (std::vector<float>{5, 3, 0}));
  auto t = InferNode(Op("Trilu"), {FT({S("b"), 3, 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 3, 3}));
  EXPECT_FALSE(InferNode(Op("Trilu"), {FT({3})}).ok());
}

TEST(TensorOpsTest, ResizeLinearAndNearest) {
  Tensor x = F({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor empty_roi = F({}, {0});
  Tensor scales = F({1, 1, 2, 2}, {4});
  Tensor near = Run1(Op("Resize", {}, 13), {x, empty_roi, scales});
  EXPECT_EQ(near.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(Vals(near)[0], 1.f);
  EXPECT_EQ(Vals(near)[3], 2.f);
  // align_corners linear on a 2 → 3 axis: 1, 1.5, 2.
  Tensor x1 = F({1, 2}, {1, 2});
  Tensor sizes = I({1, 3});
  Tensor lin = Run1(Op("Resize", {Attribute::String("mode", "linear"),
                                     Attribute::String("coordinate_transformation_mode", "align_corners")}, 13),
                    {x1, Tensor(), Tensor(), sizes});
  EXPECT_EQ(Vals(lin), (std::vector<float>{1, 1.5f, 2}));
  auto t = InferNode(Op("Resize", {}, 13), {FT({S("b"), 3, 4, 4}), FT({0}), FT({4})},
                     {nullptr, nullptr, &scales});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 3, 8, 8}));
  EXPECT_FALSE(InferNode(Op("Resize", {Attribute::String("mode", "bogus")}, 13), {FT({2})}).ok());
}

TEST(TensorOpsTest, UpsampleNearest) {
  Tensor y = Run1(Op("Upsample", {}, 9), {F({1, 2}, {1, 2}), F({1, 2}, {2})});
  EXPECT_EQ(Vals(y), (std::vector<float>{1, 1, 2, 2}));
}

// ---- CumProd (opset 26) ----

TEST(TensorOpsTest, CumProdInclusiveExclusiveAndReverse) {
  Tensor x = F({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor axis1 = Tensor::Scalar<int64_t>(1);
  EXPECT_EQ(Vals(Run1(Op("CumProd", {}, 26), {x, axis1})), (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(Vals(Run1(Op("CumProd", {}, 26), {x, Tensor::Scalar<int64_t>(-2)})),
            (std::vector<float>{1, 2, 3, 4, 10, 18}));
  // exclusive + reverse: y[i] = Π_{j>i} x[j], the last element is the identity 1.
  EXPECT_EQ(Vals(Run1(Op("CumProd", {Attribute::Int("exclusive", 1), Attribute::Int("reverse", 1)}, 26), {x, axis1})),
            (std::vector<float>{6, 3, 1, 30, 6, 1}));
  // Integers multiply exactly.
  Tensor ints = Run1(Op("CumProd", {}, 26), {Tensor::FromVector<int64_t>({3, -2, 5}, {3}), Tensor::Scalar<int64_t>(0)});
  ASSERT_EQ(ints.dtype(), DType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(ints.data<int64_t>(), ints.data<int64_t>() + 3), (std::vector<int64_t>{3, -6, -30}));
  auto bad = RunNode(Op("CumProd", {}, 26), {x, Tensor::Scalar<int64_t>(2)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CumProd '"), std::string::npos) << bad.status();
  EXPECT_FALSE(RunNode(Op("CumProd", {}, 26), {x, Tensor::FromVector<int64_t>({0, 1}, {2})}).ok());
}

}  // namespace
}  // namespace aic

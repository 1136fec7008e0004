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
using testing::SingleNode;

Tensor Iota(std::vector<int64_t> dims, float start = 1.0f) {
  std::vector<float> v(static_cast<size_t>(NumElements(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::FromVector<float>(v, dims);
}

TEST(MatMulTest, TwoByTwo) {
  auto out = RunNode(Op("MatMul"), {Iota({2, 3}), Iota({3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]]
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({22, 28, 49, 64}, {2, 2})), 0.0);
}

TEST(MatMulTest, BroadcastsBatchAndPromotesVectors) {
  auto out = RunNode(Op("MatMul"), {Iota({2, 1, 2, 3}), Iota({3})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Each row·[1,2,3]: [1,2,3]->14, [4,5,6]->32, [7,8,9]->50, [10,11,12]->68.
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({14, 32, 50, 68}, {2, 1, 2})), 0.0);
  auto batched = RunNode(Op("MatMul"), {Iota({3, 1, 1, 2}), Iota({2, 2, 1})});
  ASSERT_TRUE(batched.ok()) << batched.status();
  EXPECT_EQ((*batched)[0].dims(), (std::vector<int64_t>{3, 2, 1, 1}));
}

TEST(MatMulTest, IntegerInputsStayExact) {
  auto a = Tensor::FromVector<int64_t>({1LL << 40, 1}, {1, 2});
  auto b = Tensor::FromVector<int64_t>({3, 5}, {2, 1});
  auto out = RunNode(Op("MatMul"), {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 3 * (1LL << 40) + 5);
}

TEST(MatMulTest, InferSymbolicBatch) {
  auto t = InferNode(Op("MatMul"),
                     {F32({Dim::Symbol("batch"), 10}), F32({10, 20})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[batch, 20]");
}

TEST(MatMulTest, InnerMismatchIsAnError) {
  EXPECT_FALSE(InferNode(Op("MatMul"), {F32({2, 3}), F32({4, 5})}).ok());
  EXPECT_FALSE(RunNode(Op("MatMul"), {Iota({2, 3}), Iota({4, 5})}).ok());
}

TEST(GemmTest, AllAttributes) {
  // A is [3,2] transposed -> [2,3]; B is [4,3] transposed -> [3,4]; C [4] broadcast.
  SingleNode spec = Op("Gemm", {Attribute::Int("transA", 1), Attribute::Int("transB", 1),
                                 Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 2.0f)});
  Tensor a = Iota({3, 2}), b = Iota({4, 3}), c = Tensor::FromVector<float>({1, 2, 3, 4}, {4});
  auto out = RunNode(spec, {a, b, c});
  ASSERT_TRUE(out.ok()) << out.status();
  // A' = [[1,3,5],[2,4,6]], B' columns = rows of B.
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      float s = 0;
      for (int k = 0; k < 3; ++k) s += a.data<float>()[k * 2 + i] * b.data<float>()[j * 3 + k];
      want.push_back(0.5f * s + 2.0f * c.data<float>()[j]);
    }
  }
  EXPECT_LT(MaxAbsDiff((*out)[0], Tensor::FromVector<float>(want, {2, 4})), 1e-5);
}

TEST(GemmTest, InferAndErrors) {
  auto t = InferNode(Op("Gemm", {Attribute::Int("transB", 1)}),
                     {F32({Dim::Symbol("n"), 10}), F32({20, 10}), F32({20})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[n, 20]");
  EXPECT_FALSE(InferNode(Op("Gemm"), {F32({2, 3}), F32({4, 5})}).ok());
  EXPECT_FALSE(InferNode(Op("Gemm"), {F32({2, 3, 1}), F32({3, 5})}).ok());
  EXPECT_FALSE(InferNode(Op("Gemm"), {F32({2, 3}), F32({3, 4}), F32({3, 4})}).ok());  // C too big
}

TEST(GemmTest, LinearLayerTraits) {
  Tensor w = Iota({10, 20}), bias = Iota({20});
  auto tc = NodeTraits(Op("Gemm"), {F32({1, 10}), F32({10, 20}), F32({20})},
                       {nullptr, &w, &bias});
  const Traits& t = tc.traits;
  EXPECT_EQ(t.semantic_name, "Linear");
  EXPECT_EQ(t.linearity, Linearity::kAffine);
  EXPECT_TRUE(t.trainable);
  EXPECT_EQ(t.collapse, CollapseKind::kNone);
  EXPECT_EQ(t.invertibility, Invertibility::kUnknown);
  EXPECT_EQ(t.effect, RepresentationEffect::kExpands);
  EXPECT_EQ(t.effect_detail, "10 → 20");
  EXPECT_EQ(t.PropertyWords(), (std::vector<std::string>{"linear", "trainable"}));
  EXPECT_TRUE(tc.cost.known);
  EXPECT_EQ(tc.cost.params, 220);
  EXPECT_EQ(tc.cost.macs, 200);
  EXPECT_EQ(tc.cost.flops, 2 * 200 + 20);  // product + bias add
}

TEST(MatMulTest, LinearWithoutBiasRestricts) {
  Tensor w = Iota({20, 5});
  auto tc = NodeTraits(Op("MatMul"), {F32({4, 20}), F32({20, 5})}, {nullptr, &w});
  EXPECT_EQ(tc.traits.semantic_name, "Linear");
  EXPECT_EQ(tc.traits.linearity, Linearity::kLinear);
  EXPECT_EQ(tc.traits.effect, RepresentationEffect::kRestricts);
  EXPECT_EQ(tc.traits.effect_detail, "20 → 5");
  EXPECT_EQ(tc.traits.PropertyWords(), (std::vector<std::string>{"linear", "trainable"}));
  EXPECT_EQ(tc.cost.params, 100);
  EXPECT_EQ(tc.cost.macs, 4 * 20 * 5);
  EXPECT_EQ(tc.cost.flops, 2 * 4 * 20 * 5);
  Tensor sq = Iota({8, 8});
  auto square = NodeTraits(Op("MatMul"), {F32({1, 8}), F32({8, 8})}, {nullptr, &sq});
  EXPECT_EQ(square.traits.effect, RepresentationEffect::kPreserves);
  EXPECT_EQ(square.traits.invertibility, Invertibility::kInvertibleIfFullRank);
}

TEST(MatMulTest, TwoActivationsAreBilinear) {
  auto tc = NodeTraits(Op("MatMul"), {F32({2, 8, 16}), F32({2, 16, 8})}, {});
  EXPECT_EQ(tc.traits.semantic_name, "MatMul");
  EXPECT_EQ(tc.traits.linearity, Linearity::kNonlinear);
  EXPECT_FALSE(tc.traits.trainable);
  EXPECT_EQ(tc.cost.params, 0);
  EXPECT_EQ(tc.cost.macs, 2 * 8 * 8 * 16);  // batch · M · N · K
}

TEST(MatMulIntegerTest, SubtractsZeroPoints) {
  auto a = Tensor::FromVector<uint8_t>({11, 12, 13, 14}, {2, 2});
  auto b = Tensor::FromVector<uint8_t>({1, 2, 3, 4}, {2, 2});
  auto azp = Tensor::FromVector<uint8_t>({10}, {});
  auto bzp = Tensor::FromVector<uint8_t>({1}, {});
  auto out = RunNode(Op("MatMulInteger"), {a, b, azp, bzp});
  ASSERT_TRUE(out.ok()) << out.status();
  // [[1,2],[3,4]] x [[0,1],[2,3]]
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<int32_t>({4, 7, 8, 15}, {2, 2})), 0.0);
  auto t = InferNode(Op("MatMulInteger"),
                     {TypeInfo::Tensor(DType::kUint8, Shape({Dim::Symbol("m"), 2})),
                      TypeInfo::Tensor(DType::kUint8, Shape({2, 3}))});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "int32[m, 3]");
  EXPECT_FALSE(RunNode(Op("MatMulInteger"), {Iota({2, 2}), Iota({2, 2})}).ok());
}

TEST(QLinearMatMulTest, Requantizes) {
  auto a = Tensor::FromVector<uint8_t>({2, 4}, {1, 2});
  auto b = Tensor::FromVector<uint8_t>({3, 5}, {2, 1});
  auto s = Tensor::FromVector<float>({0.5f}, {});
  auto zp = Tensor::FromVector<uint8_t>({0}, {});
  auto ys = Tensor::FromVector<float>({0.25f}, {});
  auto yzp = Tensor::FromVector<uint8_t>({1}, {});
  auto out = RunNode(Op("QLinearMatMul"), {a, s, zp, b, s, zp, ys, yzp});
  ASSERT_TRUE(out.ok()) << out.status();
  // real = (2·3 + 4·5)·0.25 = 6.5; / 0.25 = 26; + 1 = 27.
  EXPECT_EQ((*out)[0].data<uint8_t>()[0], 27);
}

TEST(EinsumTest, MatMulTraceAndImplicitOutput) {
  SingleNode mm = Op("Einsum", {Attribute::String("equation", "bij,bjk->bik")});
  auto out = RunNode(mm, {Iota({1, 2, 3}), Iota({1, 3, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], Tensor::FromVector<float>({22, 28, 49, 64}, {1, 2, 2})), 0.0);
  SingleNode trace = Op("Einsum", {Attribute::String("equation", "ii")});
  auto tr = RunNode(trace, {Iota({3, 3})});
  ASSERT_TRUE(tr.ok()) << tr.status();
  EXPECT_EQ((*tr)[0].data<float>()[0], 1 + 5 + 9);
  // Implicit output: the labels seen once, sorted: "ji" means "ji->ij", a transpose.
  SingleNode transpose = Op("Einsum", {Attribute::String("equation", "ji")});
  auto tp = RunNode(transpose, {Iota({2, 3})});
  ASSERT_TRUE(tp.ok()) << tp.status();
  EXPECT_EQ((*tp)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*tp)[0].data<float>()[1], 4);
}

TEST(EinsumTest, EllipsisInferenceAndErrors) {
  SingleNode spec = Op("Einsum", {Attribute::String("equation", "...ij,...jk")});
  auto t = InferNode(spec, {F32({Dim::Symbol("b"), 2, 3}), F32({3, 4})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[b, 2, 4]");
  SingleNode bad = Op("Einsum", {Attribute::String("equation", "ij,jk->ik")});
  EXPECT_FALSE(InferNode(bad, {F32({2, 3}), F32({4, 5})}).ok());
  EXPECT_FALSE(InferNode(bad, {F32({2, 3, 1}), F32({3, 5})}).ok());
}

}  // namespace
}  // namespace aic

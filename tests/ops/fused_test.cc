#include <gtest/gtest.h>

#include <random>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

Tensor Random(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n;
  std::vector<float> v(static_cast<size_t>(NumElements(dims)));
  for (float& x : v) x = n(rng);
  return Tensor::FromVector<float>(v, dims);
}

TEST(FusedLinearReluTest, EqualsReluOfGemmBitwise) {
  Tensor a = Random({3, 4}, 1), b = Random({5, 4}, 2), c = Random({5}, 3);
  std::vector<Attribute> attrs = {Attribute::Int("transB", 1)};
  auto gemm = RunNode(Op("Gemm", attrs), {a, b, c});
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  auto relu = RunNode(Op("Relu"), {(*gemm)[0]});
  ASSERT_TRUE(relu.ok());
  SingleNode fused = Op("FusedLinearReLU", attrs);
  fused.domain = "ai.aic";
  auto out = RunNode(fused, {a, b, c});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals((*relu)[0]));
  bool any_zero = false;
  for (float v : (*out)[0].span<float>()) any_zero |= v == 0.0f;
  EXPECT_TRUE(any_zero) << "random data should hit the clamp";
}

TEST(FusedLinearReluTest, InfersLikeGemm) {
  SingleNode fused = Op("FusedLinearReLU", {Attribute::Int("transB", 1)});
  fused.domain = "ai.aic";
  auto t = InferNode(fused, {testing::F32({Dim::Symbol("n"), 4}), testing::F32({5, 4}),
                             testing::F32({5})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].ToString(), "float[n, 5]");
}

}  // namespace
}  // namespace aic

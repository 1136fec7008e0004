// Tests of DeformConv (opset 19, ops/nn/deform_conv.cc): zero offsets are a
// plain Conv; fractional offsets sample bilinearly with zeros outside; the
// mask scales each tap; offset groups move their channels independently.
// Expected values are a direct numpy loop (bilinear by hand), pasted.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::MaxAbsDiff;
using testing::Op;
using testing::RunNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }

// X [1, 1, 3, 3] = 0..8, W [1, 1, 2, 2] = [[1, 2], [3, 4]]: output [1, 1, 2, 2].
Tensor X() { return F({0, 1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 3, 3}); }
Tensor W() { return F({1, 2, 3, 4}, {1, 1, 2, 2}); }

// Offsets [1, 8, 2, 2]: channel 2t is tap t's dy, 2t + 1 its dx, the same at every output.
Tensor Offsets(const std::vector<float>& dy, const std::vector<float>& dx) {
  std::vector<float> v;
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 4; ++i) v.push_back(dy[t]);
    for (int i = 0; i < 4; ++i) v.push_back(dx[t]);
  }
  return F(v, {1, 8, 2, 2});
}

std::vector<float> Vals(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements()); }

TEST(DeformConvTest, ZeroOffsetsAreAPlainConv) {
  auto out = RunNode(Op("DeformConv", {}, 19), {X(), W(), Offsets({0, 0, 0, 0}, {0, 0, 0, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Vals((*out)[0]), (std::vector<float>{27, 37, 57, 67}));
  auto conv = RunNode(Op("Conv", {}, 17), {X(), W()});
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(MaxAbsDiff((*out)[0], (*conv)[0]), 0.0);
}

TEST(DeformConvTest, FractionalOffsetsMaskAndBias) {
  // Every tap half a pixel right: the right column's taps read half zeros.
  auto shift = RunNode(Op("DeformConv", {}, 19), {X(), W(), Offsets({0, 0, 0, 0}, {0.5f, 0.5f, 0.5f, 0.5f})});
  ASSERT_TRUE(shift.ok()) << shift.status();
  EXPECT_EQ(Vals((*shift)[0]), (std::vector<float>{32, 27, 62, 48}));
  // Per-tap offsets (one leaves the image entirely), mask and bias.
  Tensor mask = F({1, 1, 1, 1, 0.5f, 0.5f, 0.5f, 0.5f, 1, 1, 1, 1, 2, 2, 2, 2}, {1, 4, 2, 2});
  auto mixed = RunNode(Op("DeformConv", {}, 19), {X(), W(), Offsets({0.25f, 0, -1, 0}, {0.5f, 0, 0, 1.5f}),
                                                  F({0.25f}, {1}), mask});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  const std::vector<float> want = {22.5f, 7.5f, 49.5f, 22.5f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(Vals((*mixed)[0])[i], want[i], 1e-5) << i;
}

TEST(DeformConvTest, OffsetGroupsMoveTheirOwnChannels) {
  // Two channels, offset_group 2: channel 0 unshifted, channel 1 shifted half
  // a pixel right; W sums both channels. Each channel alone is a case above.
  std::vector<float> x2 = Vals(X());
  x2.insert(x2.end(), x2.begin(), x2.end());
  Tensor w2 = F({1, 2, 3, 4, 1, 2, 3, 4}, {1, 2, 2, 2});
  std::vector<float> off = Vals(Offsets({0, 0, 0, 0}, {0, 0, 0, 0}));
  std::vector<float> off1 = Vals(Offsets({0, 0, 0, 0}, {0.5f, 0.5f, 0.5f, 0.5f}));
  off.insert(off.end(), off1.begin(), off1.end());
  auto out = RunNode(Op("DeformConv", {Attribute::Int("offset_group", 2)}, 19),
                     {F(x2, {1, 2, 3, 3}), w2, F(off, {1, 16, 2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Vals((*out)[0]), (std::vector<float>{27 + 32, 37 + 27, 57 + 62, 67 + 48}));
}

TEST(DeformConvTest, BadInputsAreErrorsNamingTheNode) {
  auto check = [](const absl::StatusOr<std::vector<Tensor>>& r, const std::string& words) {
    ASSERT_FALSE(r.ok()) << words;
    EXPECT_NE(r.status().message().find("DeformConv '"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
  };
  check(RunNode(Op("DeformConv", {}, 19), {X(), W(), F(std::vector<float>(16, 0), {1, 4, 2, 2})}), "offset must be");
  check(RunNode(Op("DeformConv", {}, 19), {X(), W(), Offsets({0, 0, 0, 0}, {0, 0, 0, 0}), Tensor(),
                                           F(std::vector<float>(8, 1), {1, 2, 2, 2})}),
        "mask must be");
  check(RunNode(Op("DeformConv", {}, 19), {X(), W(), Offsets({0, 0, 0, 0}, {0, 0, 0, 0}), F({1, 2}, {2})}),
        "bias");
  check(RunNode(Op("DeformConv", {Attribute::Int("offset_group", 2)}, 19),
                {X(), W(), Offsets({0, 0, 0, 0}, {0, 0, 0, 0})}),
        "offset_group");
  auto types = InferNode(Op("DeformConv", {}, 19), {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("N"), 1, 5, 5})),
                                                    TypeInfo::Tensor(DType::kFloat, Shape({4, 1, 3, 3})),
                                                    TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("N"), 18, 3, 3}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 4, 3, 3]");
}

}  // namespace
}  // namespace aic

// Tests of TensorScatter (opset 24, ops/tensor/tensor_scatter.cc): the KV-cache
// update writes `update` into past_cache along the sequence axis at each
// sample's write index, linearly (must fit) or circularly (wraps).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }
Tensor I(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(v, {n});
}
std::vector<float> Vals(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements()); }

SingleNode Scatter(std::vector<Attribute> attrs = {}) { return Op("TensorScatter", std::move(attrs), 24); }

// past [2, 4, 1]: sample 0 holds 0..3, sample 1 holds 10..13; update [2, 2, 1].
Tensor Past() { return F({0, 1, 2, 3, 10, 11, 12, 13}, {2, 4, 1}); }
Tensor Update() { return F({-1, -2, -3, -4}, {2, 2, 1}); }

TEST(TensorScatterTest, LinearWritesAtEachSamplesIndex) {
  auto out = RunNode(Scatter(), {Past(), Update(), I({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Vals((*out)[0]), (std::vector<float>{0, -1, -2, 3, 10, 11, -3, -4}));
  // Without write_indices every sample writes at 0.
  auto at0 = RunNode(Scatter(), {Past(), Update()});
  ASSERT_TRUE(at0.ok()) << at0.status();
  EXPECT_EQ(Vals((*at0)[0]), (std::vector<float>{-1, -2, 2, 3, -3, -4, 12, 13}));
}

TEST(TensorScatterTest, CircularWrapsWhereLinearFails) {
  // Sample 1 starts at 3: positions 3, 0 circularly; linearly, 4 is past the end.
  auto circ = RunNode(Scatter({Attribute::String("mode", "circular")}), {Past(), Update(), I({1, 3})});
  ASSERT_TRUE(circ.ok()) << circ.status();
  EXPECT_EQ(Vals((*circ)[0]), (std::vector<float>{0, -1, -2, 3, -4, 11, 12, -3}));
  auto lin = RunNode(Scatter(), {Past(), Update(), I({1, 3})});
  ASSERT_FALSE(lin.ok());
  EXPECT_NE(lin.status().message().find("TensorScatter '"), std::string::npos) << lin.status();
  EXPECT_NE(lin.status().message().find("write index 4"), std::string::npos) << lin.status();
  // A negative start wraps too (Python's modulo): -1 -> 3.
  auto neg = RunNode(Scatter({Attribute::String("mode", "circular")}), {Past(), Update(), I({-1, 0})});
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ(Vals((*neg)[0]), (std::vector<float>{-2, 1, 2, -1, -3, -4, 12, 13}));
}

TEST(TensorScatterTest, FourDimensionalCacheWritesEveryHead) {
  // [B=2, H=2, S=3, D=1], axis 2: both heads of a sample share its index.
  Tensor past = F(std::vector<float>(12, 0), {2, 2, 3, 1});
  Tensor update = F({1, 2, 3, 4}, {2, 2, 1, 1});
  auto out = RunNode(Scatter({Attribute::Int("axis", 2)}), {past, update, I({2, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Vals((*out)[0]), (std::vector<float>{0, 0, 1, 0, 0, 2, 3, 0, 0, 4, 0, 0}));
}

TEST(TensorScatterTest, BadInputsAreErrorsNamingTheNode) {
  auto check = [](const absl::StatusOr<std::vector<Tensor>>& r, const std::string& words) {
    ASSERT_FALSE(r.ok()) << words;
    EXPECT_NE(r.status().message().find("TensorScatter '"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
  };
  check(RunNode(Scatter(), {Past(), F(std::vector<float>(10, 0), {2, 5, 1})}), "does not fit");
  check(RunNode(Scatter(), {Past(), F({1, 2}, {1, 2, 1})}), "does not fit");
  check(RunNode(Scatter({Attribute::Int("axis", 0)}), {Past(), Update()}), "batch axis");
  check(RunNode(Scatter(), {Past(), Update(), I({0})}), "write_indices");
  check(RunNode(Scatter({Attribute::String("mode", "ring")}), {Past(), Update()}), "mode");
  EXPECT_FALSE(InferNode(Scatter(), {TypeInfo::Tensor(DType::kFloat, Shape({2, 4, 1})),
                                     TypeInfo::Tensor(DType::kFloat, Shape({2, 5, 1}))})
                   .ok());
  auto types = InferNode(Scatter(), {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("B"), 4, 1})),
                                     TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("B"), 2, 1}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, 4, 1]");
}

}  // namespace
}  // namespace aic

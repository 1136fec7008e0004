// Tests of BitCast (opset 26, ops/math/bitcast.cc): the bytes of x read as
// another dtype of the same width, at 8, 16, 32 and 64 bits; unequal widths,
// strings and non-0/1 bools are errors naming the node.
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/util/float_convert.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

SingleNode BitCast(DType to) { return Op("BitCast", {Attribute::Int("to", static_cast<int64_t>(to))}, 26); }

template <typename T>
std::vector<T> Vals(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

Tensor RunOk(DType to, const Tensor& x) {
  auto out = RunNode(BitCast(to), {x});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Tensor();
  EXPECT_EQ((*out)[0].dtype(), to);
  EXPECT_EQ((*out)[0].dims(), x.dims());
  return (*out)[0];
}

TEST(BitCastTest, SameWidthReinterpretsBytes) {
  // 32 bits: 1.0f is 0x3f800000, -2.0f is 0xc0000000.
  Tensor f = Tensor::FromVector<float>({1.0f, -2.0f}, {2});
  EXPECT_EQ(Vals<int32_t>(RunOk(DType::kInt32, f)), (std::vector<int32_t>{1065353216, -1073741824}));
  EXPECT_EQ(Vals<uint32_t>(RunOk(DType::kUint32, f)), (std::vector<uint32_t>{0x3f800000u, 0xc0000000u}));
  // 8 bits: 200 as int8 is -56.
  EXPECT_EQ(Vals<int8_t>(RunOk(DType::kInt8, Tensor::FromVector<uint8_t>({200, 1}, {2}))),
            (std::vector<int8_t>{-56, 1}));
  // 16 bits: half 1.0 is 0x3c00, -2.0 is 0xc000.
  Tensor h = ConvertTensor(Tensor::FromVector<float>({1.0f, -2.0f}, {1, 2}), DType::kFloat16);
  EXPECT_EQ(Vals<uint16_t>(RunOk(DType::kUint16, h)), (std::vector<uint16_t>{0x3c00, 0xc000}));
  EXPECT_EQ(Vals<int16_t>(RunOk(DType::kInt16, h)), (std::vector<int16_t>{15360, -16384}));
  // 64 bits: 0x3ff0000000000000 is 1.0.
  EXPECT_EQ(Vals<double>(RunOk(DType::kDouble, Tensor::FromVector<int64_t>({4607182418800017408LL}, {}))),
            (std::vector<double>{1.0}));
}

TEST(BitCastTest, RoundTripKeepsNaNPayloadsAndZeroSize) {
  const float nan = std::bit_cast<float>(0x7fc01234u);
  Tensor f = Tensor::FromVector<float>({nan, -0.0f, std::numeric_limits<float>::infinity()}, {3});
  Tensor back = RunOk(DType::kFloat, RunOk(DType::kInt32, f));
  EXPECT_EQ(std::bit_cast<uint32_t>(back.data<float>()[0]), 0x7fc01234u);
  EXPECT_EQ(std::bit_cast<uint32_t>(back.data<float>()[1]), 0x80000000u);
  Tensor empty = RunOk(DType::kInt32, Tensor::FromVector<float>({}, {0, 3}));
  EXPECT_EQ(empty.num_elements(), 0);
  // Bytes 0 and 1 read as bools.
  EXPECT_EQ(Vals<bool>(RunOk(DType::kBool, Tensor::FromVector<uint8_t>({1, 0}, {2}))), (std::vector<bool>{true, false}));
}

TEST(BitCastTest, BadInputsAreErrorsNamingTheNode) {
  auto check = [](const absl::StatusOr<std::vector<Tensor>>& r, const std::string& words) {
    ASSERT_FALSE(r.ok()) << words;
    EXPECT_NE(r.status().message().find("BitCast '"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
  };
  // Between widths: float (32) to int64 (64), int8 to float16.
  check(RunNode(BitCast(DType::kInt64), {Tensor::FromVector<float>({1.0f, 2.0f}, {2})}), "equal bit widths");
  check(RunNode(BitCast(DType::kFloat16), {Tensor::FromVector<int8_t>({1, 2}, {2})}), "equal bit widths");
  check(RunNode(BitCast(DType::kString), {Tensor::FromVector<float>({1.0f}, {1})}), "string");
  check(RunNode(BitCast(DType::kFloat), {Tensor::FromStrings({"abcd"}, {1})}), "string");
  check(RunNode(BitCast(DType::kBool), {Tensor::FromVector<uint8_t>({0, 2}, {2})}), "not a bool");
  check(RunNode(Op("BitCast", {Attribute::Int("to", 999)}, 26), {Tensor::FromVector<float>({1.0f}, {1})}),
        "not a known dtype");
  EXPECT_FALSE(InferNode(BitCast(DType::kDouble), {TypeInfo::Tensor(DType::kFloat, Shape({2}))}).ok());
  auto types = InferNode(BitCast(DType::kUint32), {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("N"), 2}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kUint32);
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 2]");
}

}  // namespace
}  // namespace aic

// The small-type codecs (ops/util/small_float.h) on the cases that decide
// bit-exactness with ml_dtypes / onnx.numpy_helper (each expected code was
// taken from them), and Cast/QuantizeLinear through them.
#include "ops/util/small_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/util/float_convert.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(SmallFloatTest, Float8RoundsToNearestEvenAndSaturates) {
  const SmallCastOptions sat;
  SmallCastOptions nosat;
  nosat.saturate = false;
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E4M3FN, 0.47892547, sat), 0x2F);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E4M3FN, 464, nosat), 0x7E);  // tie to even: 448, not NaN
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E4M3FN, 1e6, sat), 0x7E);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E4M3FN, -kInf, nosat), 0xFF);  // -NaN
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E5M2, kInf, nosat), 0x7C);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E5M2, kInf, sat), 0x7B);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E4M3FNUZ, -1e-7, sat), 0x00);  // no -0
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E5M2FNUZ, kNaN, sat), 0x80);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E5M2FNUZ, -1e6, sat), 0xFF);
  EXPECT_FLOAT_EQ(DecodeSmallFloat(DType::kFloat8E4M3FN, 0x7E), 448);
  EXPECT_FLOAT_EQ(DecodeSmallFloat(DType::kFloat8E4M3FNUZ, 0x7F), 240);
  EXPECT_FLOAT_EQ(DecodeSmallFloat(DType::kFloat8E5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DType::kFloat8E5M2, 0x7D)));
}

TEST(SmallFloatTest, Float4AndE8M0) {
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat4E2M1, 0.25), 0x0);  // tie to even: 0
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat4E2M1, 5), 0x6);     // tie to even: 4
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat4E2M1, -kInf), 0xF);  // saturates: -6
  EXPECT_FLOAT_EQ(DecodeSmallFloat(DType::kFloat4E2M1, 0x7), 6);
  SmallCastOptions nearest;
  nearest.round_mode = E8M0Rounding::kNearest;
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E8M0, 1.1), 128);  // rounds up by default
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E8M0, 1.1, nearest), 127);
  EXPECT_EQ(EncodeSmallFloat(DType::kFloat8E8M0, 0.0), 0);
  EXPECT_FLOAT_EQ(DecodeSmallFloat(DType::kFloat8E8M0, 130), 8);
}

TEST(SmallFloatTest, SmallIntsTruncateAndWrap) {
  EXPECT_EQ(DecodeSmallInt(DType::kInt4, TruncateToSmallInt(DType::kInt4, 8.1)), -8);
  EXPECT_EQ(TruncateToSmallInt(DType::kUint4, -1.7), 15);
  EXPECT_EQ(TruncateToSmallInt(DType::kInt4, 1e10), 0);  // past int32: 0, as ml_dtypes
  EXPECT_EQ(DecodeSmallInt(DType::kInt2, WrapSmallInt(DType::kInt2, -3)), 1);
  EXPECT_EQ(DecodeSmallInt(DType::kUint2, 3), 3);
}

TEST(SmallFloatTest, PackedTensorsRoundTripThroughConvertTensor) {
  Tensor x = Tensor::FromVector<float>({-3, -2, -1, 0, 1, 2, 3}, {7});
  Tensor i2 = ConvertTensor(x, DType::kInt2);
  EXPECT_EQ(i2.byte_size(), 2u);
  EXPECT_EQ(i2.data<uint8_t>()[0], 57);  // [1, -2, -1, 0] packed low bits first
  EXPECT_EQ(i2.data<uint8_t>()[1], 57);  // [1, -2, -1] and a zero pad
  Tensor back = ConvertTensor(i2, DType::kFloat);
  EXPECT_FLOAT_EQ(back.data<float>()[0], 1);
  EXPECT_FLOAT_EQ(back.data<float>()[6], -1);
}

TEST(SmallFloatTest, CastHonoursSaturate) {
  testing::SingleNode spec;
  spec.op_type = "Cast";
  spec.opset = 25;
  spec.attributes = {Attribute::Int("to", static_cast<int64_t>(DType::kFloat8E5M2)),
                     Attribute::Int("saturate", 0)};
  auto out = testing::RunNode(spec, {Tensor::FromVector<float>({1e6f, 0.5f}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat8E5M2);
  EXPECT_EQ((*out)[0].data<uint8_t>()[0], 0x7C);  // inf
  EXPECT_EQ((*out)[0].data<uint8_t>()[1], 0x38);
}

TEST(SmallFloatTest, BlockedQuantizeToInt4) {
  testing::SingleNode spec;
  spec.op_type = "QuantizeLinear";
  spec.opset = 21;
  spec.attributes = {Attribute::Int("axis", 1), Attribute::Int("block_size", 2)};
  Tensor x = Tensor::FromVector<float>({2, 4, 30, 30}, {1, 4});
  Tensor scale = Tensor::FromVector<float>({2, 10}, {1, 2});
  Tensor zero = ConvertTensor(Tensor::FromVector<int8_t>({0, 1}, {1, 2}), DType::kInt4);
  auto out = testing::RunNode(spec, {x, scale, zero});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DType::kInt4);
  EXPECT_EQ(DecodeSmallInt(DType::kInt4, SmallBits((*out)[0], 1)), 2);  // 4/2
  EXPECT_EQ(DecodeSmallInt(DType::kInt4, SmallBits((*out)[0], 3)), 4);  // 30/10 + 1
}

}  // namespace
}  // namespace aic

#include <gtest/gtest.h>

#include "onnx_io/npy.h"

namespace aic {
namespace {

TEST(NpyTest, RoundTripsDtypesAndShapes) {
  std::vector<Tensor> tensors = {
      Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, {2, 3}),
      Tensor::FromVector<int64_t>({7}, {}),
      Tensor::FromVector<int32_t>({1, 2, 3}, {3}),
      Tensor(DType::kBool, {2, 0, 2}),
  };
  for (const Tensor& t : tensors) {
    std::string bytes = SerializeNpy(t);
    EXPECT_EQ(bytes.size() % 64, t.byte_size() % 64);  // header padded to 64
    auto back = ParseNpy(bytes.data(), bytes.size());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(back->BitwiseEquals(t)) << t.DebugString();
  }
}

TEST(NpyTest, RejectsGarbage) {
  EXPECT_FALSE(ParseNpy("hello", 5).ok());
  std::string bytes = SerializeNpy(Tensor::FromVector<float>({1, 2}, {2}));
  EXPECT_FALSE(ParseNpy(bytes.data(), bytes.size() - 1).ok());  // truncated data
}

}  // namespace
}  // namespace aic

// Softmax in float16/bfloat16 rounds after every step (x - max, exp, sum,
// divide) as onnx.reference's numpy does, so results are bit-equal to it, not
// one rounding more accurate. Expected values are numpy's float16 and
// ml_dtypes' bfloat16 arithmetic on the same inputs; each case differs from
// the once-rounded float result in at least two elements.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/util/float_convert.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::Op;
using testing::RunNode;

// The values are exactly representable in `dtype`, so the conversion is exact.
Tensor Half(std::vector<float> v, std::vector<int64_t> dims, DType dtype) {
  return ConvertTensor(Tensor::FromVector<float>(v, std::move(dims)), dtype);
}

void ExpectBitEqual(const Tensor& got, const std::vector<float>& want, DType dtype, const std::string& what) {
  ASSERT_EQ(got.dtype(), dtype) << what;
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.ElementAsDouble(static_cast<int64_t>(i)), static_cast<double>(want[i])) << what << " [" << i << "]";
  }
}

TEST(SoftmaxHalfTest, Float16RoundsEveryStepAlongTheLastAxis) {
  Tensor x = Half({0.07000732421875f, 2.69921875f, -2.140625f, 2.689453125f, -1.1298828125f}, {1, 5}, DType::kFloat16);
  auto out = RunNode(Op("Softmax", {}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  // Rounded once, elements 2 and 4 would be 0.003780365 and 0.010383606.
  ExpectBitEqual((*out)[0],
                 {0.03448486328125f, 0.47802734375f, 0.0037822723388671875f, 0.473388671875f, 0.0103912353515625f},
                 DType::kFloat16, "fp16");
}

TEST(SoftmaxHalfTest, Float16AlongAStridedAxisRoundsEveryAddition) {
  // axis 0 of [5, 2]: numpy adds row by row, rounding each partial sum.
  Tensor x = Half({1.51953125f, 0.22998046875f, -1.01953125f, 1.73046875f, -1.1796875f, -0.280029296875f, -2.19921875f,
                   -0.580078125f, -1.7802734375f, -1.4296875f},
                  {5, 2}, DType::kFloat16);
  auto out = RunNode(Op("Softmax", {Attribute::Int("axis", 0)}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual((*out)[0],
                 {0.82763671875f, 0.14892578125f, 0.0653076171875f, 0.66748046875f, 0.0556640625f, 0.0894775390625f,
                  0.02008056640625f, 0.06622314453125f, 0.030517578125f, 0.0283203125f},
                 DType::kFloat16, "fp16 axis 0");
}

TEST(SoftmaxHalfTest, BFloat16RoundsEveryStep) {
  Tensor x = Half({-0.4609375f, 1.96875f, -0.5390625f, 0.30078125f, -2.828125f}, {5}, DType::kBFloat16);
  auto out = RunNode(Op("Softmax", {}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual((*out)[0], {0.06396484375f, 0.73046875f, 0.06005859375f, 0.13671875f, 0.005950927734375f},
                 DType::kBFloat16, "bf16");
}

TEST(SoftmaxHalfTest, FloatKeepsItsSingleRounding) {
  // The same fp16 row as float: the double computation rounded once.
  Tensor x = Tensor::FromVector<float>({0.07000732421875f, 2.69921875f, -2.140625f, 2.689453125f, -1.1298828125f}, {5});
  auto out = RunNode(Op("Softmax", {}, 13), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> want = {0.0344806117, 0.477998986, 0.00378015442, 0.473353746, 0.0103865017};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR((*out)[0].ElementAsDouble(static_cast<int64_t>(i)), want[i], 4e-8) << i;
  }
}

}  // namespace
}  // namespace aic

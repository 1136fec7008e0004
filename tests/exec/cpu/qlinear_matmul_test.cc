// QLinearMatMul, and ai.aic's QLinearMatMulBias, with a constant int8 B on the
// CPU backend (oneDNN's int8 matmul) against the reference kernel: 2-D and
// 3-D A, uint8 and int8 A, with and without an int32 bias,
// zero and nonzero a/y zero points (a's folded into an s32 bias), per-tensor
// and per-column b scales, uint8 and int8 outputs, K past 2^24 / (255·128)
// (the accumulator is still exact in s32; oneDNN converts it to f32 before
// scaling). Results may differ by 1 where the two round a tie differently
// (as QLinearConv's, qlinear_conv_test.cc), so the test allows 1 on at most
// 1% of the elements. Then a QDQ MatMul and a QDQ Gemm with a bias end to
// end, optimized as a session does (fuse_qdq_matmul): within one quantization step of the QDQ model on
// the reference executor, with the product in int8. Weights with a zero
// point run on the reference kernel (declined, still correct).
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/fused/standard_aliases.h"
#include "rewrite/optimize.h"
#include "tests/exec/cpu/run_both.h"
#include "tests/rewrite/qdq_matmul_model.h"

namespace aic::cpu {
namespace {

struct Case {
  const char* name;
  std::vector<int64_t> a_dims;
  int64_t n;
  bool per_column;
  int a_zero, y_zero;
  DType a_type = DType::kUint8;
  DType y_type = DType::kUint8;
  int b_zero = 0;
  bool bias = false;  // QLinearMatMulBias with an int32 bias
};

template <typename T>
Tensor Scalar(DType t, T v) {
  Tensor s(t, {});
  *static_cast<T*>(s.mutable_raw_data()) = v;
  return s;
}

Tensor ZeroPoint(DType t, int v) {
  return t == DType::kUint8 ? Scalar<uint8_t>(t, static_cast<uint8_t>(v)) : Scalar<int8_t>(t, static_cast<int8_t>(v));
}

std::unique_ptr<Model> QLinearMatMulModel(const Case& c, uint32_t seed) {
  const int64_t k = c.a_dims.back();
  Tensor w = RandomInts<int8_t>({k, c.n}, seed, -127, 127);
  std::vector<int64_t> sd = c.per_column ? std::vector<int64_t>{c.n} : std::vector<int64_t>{};
  Tensor ws(DType::kFloat, sd), wz(DType::kInt8, sd);
  for (int64_t j = 0; j < ws.num_elements(); ++j) {
    ws.mutable_data<float>()[j] = 0.003f + 0.0007f * static_cast<float>(j % 9);
    wz.mutable_data<int8_t>()[j] = static_cast<int8_t>(c.b_zero);
  }
  float as = 0.021f;
  double a_mid = c.a_type == DType::kUint8 ? 127.5 : 0;
  double da = std::sqrt(74.0 * 74.0 + (a_mid - c.a_zero) * (a_mid - c.a_zero));
  float ys = static_cast<float>(std::sqrt(static_cast<double>(k)) * da * 73 * as * 0.005 * 3 / 128);
  GraphBuilder b;
  Value* a = b.Input("a", c.a_type, D(c.a_dims));
  std::vector<Value*> in = {a, b.Constant("as", Scalar<float>(DType::kFloat, as)),
                            b.Constant("az", ZeroPoint(c.a_type, c.a_zero)), b.Constant("w", w),
                            b.Constant("ws", ws), b.Constant("wz", wz),
                            b.Constant("ys", Scalar<float>(DType::kFloat, ys)),
                            b.Constant("yz", ZeroPoint(c.y_type, c.y_zero))};
  if (c.bias) in.push_back(b.Constant("bias", RandomInts<int32_t>({c.n}, seed + 1, -20000, 20000)));
  b.Output(b.OpN(c.bias ? "QLinearMatMulBias" : "QLinearMatMul", in, 1, {}, c.bias ? kAicDomain : "")[0]);
  auto m = b.Build(13);
  m->opset_imports.push_back({kAicDomain, 1});
  return m;
}

TEST(QLinearMatMulTest, MatchesTheReferenceWithinOne) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  std::vector<Case> cases = {
      {"2-D per tensor, zero points 0", {16, 64}, 48, false, 0, 0},
      {"3-D per column", {2, 12, 96}, 80, true, 110, 97},
      {"a zero point 255", {9, 33}, 17, true, 255, 128},
      {"int8 a, int8 y", {3, 7, 128}, 64, true, -3, -5, DType::kInt8, DType::kInt8},
      {"K 768 (past 2^24 / (255*128))", {1, 10, 768}, 96, true, 128, 120},
      {"one row", {1, 1, 256}, 300, false, 60, 128},
      {"with a bias", {2, 10, 192}, 64, true, 120, 110, DType::kUint8, DType::kUint8, 0, true},
      {"with a bias, a zero point 0, per tensor", {24, 40}, 24, false, 0, 128, DType::kUint8, DType::kUint8, 0, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto model = QLinearMatMulModel(c, 3);
    Tensor a = c.a_type == DType::kUint8 ? RandomInts<uint8_t>(c.a_dims, 17, 0, 255)
                                         : RandomInts<int8_t>(c.a_dims, 17, -128, 127);
    std::map<std::string, RuntimeValue> feeds = {{"a", a}};
    ExpectEightBitWithinOne(*model, feeds, c.y_zero, absl::StrCat("off_by_one_", &c - cases.data()));
  }
}

// oneDNN's weights have no zero point (declined: the reference kernel runs
// it, still correct); the pair kernels subtract it when packing B.
TEST(QLinearMatMulTest, WeightsWithAZeroPoint) {
  Case c{"b zero point 3", {4, 32}, 16, true, 100, 100};
  c.b_zero = 3;
  auto model = QLinearMatMulModel(c, 5);
  std::map<std::string, RuntimeValue> feeds = {{"a", RandomInts<uint8_t>(c.a_dims, 2, 0, 255)}};
  std::string plan = RunBoth(*model, feeds, PairInt8() ? 0 : 1, 0, 0);
  EXPECT_EQ(plan.find("[int8 pairs]") != std::string::npos, PairInt8()) << plan;
  EXPECT_EQ(plan.find("[int8]"), std::string::npos) << plan;
}

TEST(QLinearMatMulTest, QdqMatMulEndToEndWithinOneStep) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  std::vector<aic::testing::QdqMatMulSpec> specs(4);
  specs[1].per_column = false;
  specs[2].a_dims = {1, 24, 512};
  specs[2].n = 128;
  specs[3].gemm = true;  // -> QLinearMatMulBias
  specs[3].a_dims = {50, 192};
  for (const aic::testing::QdqMatMulSpec& s : specs) {
    auto original = aic::testing::BuildQdqMatMul(s);
    auto model = aic::testing::BuildQdqMatMul(s);
    rewrite::OptimizeOptions o;  // as session.cc's OptimizeOptionsFor sets it for this backend
    o.fold_dequantize = true;
    o.qoperator_ops = {"QLinearConv", "QLinearMatMul"};
    o.aic_ops = {"QLinearMatMulBias"};
    auto stats = rewrite::Optimize(*model, o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->rule_counts["fuse_qdq_matmul"], 1);
    Tensor x = RandomF32(s.a_dims, 23, -2.0f, 3.0f);
    std::map<std::string, RuntimeValue> feeds = {{"x", x}};
    auto want = ReferenceExecutor(*original).Run(feeds);
    ASSERT_TRUE(want.ok()) << want.status();
    CpuExecutor cpu(*model);
    auto got = cpu.Run(feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor, aic::testing::QdqMatMulYScale(s) * 1.0001, 0);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    std::string desc = DescribePlan(**plan);
    EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
    EXPECT_NE(desc.find("[int8"), std::string::npos) << desc;
  }
}

}  // namespace
}  // namespace aic::cpu

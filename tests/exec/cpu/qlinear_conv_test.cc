// QLinearConv on the CPU backend (oneDNN's int8 convolution) against the
// reference kernel: 1x1, 3x3 and 5x5 with padding (the border holds
// x_zero_point, which dequantizes to 0: a 255 zero point makes any other
// padding visible), stride 2, groups and depthwise, per-tensor and
// per-channel weight scales, zero and nonzero x/y zero points, int8 and uint8
// outputs, with and without bias. Results may differ by 1 where the two round
// a tie differently (oneDNN scales in f32 and adds y_zero_point before
// rounding half to even, the reference scales in double and adds it after),
// so the test allows 1 on at most 1% of the elements; on these cases every
// element is equal (the off_by_one_N properties of --gtest_output=xml). Then a QDQ Conv end to end, optimized as a
// session does (fuse_qdq_conv): within one quantization step of the QDQ
// model on the reference executor.
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rewrite/optimize.h"
#include "tests/exec/cpu/exact_qlinear_conv.h"
#include "tests/exec/cpu/run_both.h"
#include "tests/rewrite/qdq_conv_model.h"

namespace aic::cpu {
namespace {

struct Case {
  const char* name;
  int64_t c, hw, m, k, group, stride, pad;
  bool per_channel, bias;
  int x_zero, y_zero;
  DType y_type = DType::kUint8;
};

std::unique_ptr<Model> QLinearConvModel(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  int64_t cg = c.c / c.group;
  Tensor w(DType::kInt8, {c.m, cg, c.k, c.k});
  std::uniform_int_distribution<int> wd(-127, 127);
  for (int8_t& v : w.mutable_span<int8_t>()) v = static_cast<int8_t>(wd(rng));
  int64_t ns = c.per_channel ? c.m : 1;
  Tensor ws(DType::kFloat, c.per_channel ? std::vector<int64_t>{c.m} : std::vector<int64_t>{});
  Tensor wz(DType::kInt8, ws.dims());
  for (int64_t i = 0; i < ns; ++i) {
    ws.mutable_data<float>()[i] = 0.003f + 0.0007f * static_cast<float>(i % 9);
    wz.mutable_data<int8_t>()[i] = 0;
  }
  Tensor bias = RandomInts<int32_t>({c.m}, seed + 1, -20000, 20000);
  float xs = 0.021f;
  // |acc| ~ sqrt(K) * |x - x_zero| * 73 (|x - x_zero| counting its mean):
  // y's range about 3 such deviations.
  double dx = std::sqrt(74.0 * 74.0 + (127.5 - c.x_zero) * (127.5 - c.x_zero));
  float ys = static_cast<float>(std::sqrt(static_cast<double>(cg * c.k * c.k)) * dx * 73 * xs * 0.005 * 3 / 128);
  GraphBuilder b;
  Value* x = b.Input("x", DType::kUint8, {1, c.c, c.hw, c.hw});
  std::vector<Value*> in = {x,
                            b.Constant("xs", Scalar<float>(DType::kFloat, xs)),
                            b.Constant("xz", Scalar<uint8_t>(DType::kUint8, static_cast<uint8_t>(c.x_zero))),
                            b.Constant("w", w),
                            b.Constant("ws", ws),
                            b.Constant("wz", wz),
                            b.Constant("ys", Scalar<float>(DType::kFloat, ys)),
                            c.y_type == DType::kUint8
                                ? b.Constant("yz", Scalar<uint8_t>(DType::kUint8, static_cast<uint8_t>(c.y_zero)))
                                : b.Constant("yz", Scalar<int8_t>(DType::kInt8, static_cast<int8_t>(c.y_zero)))};
  if (c.bias) in.push_back(b.Constant("b", bias));
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {c.k, c.k}),
                                  Attribute::Ints("strides", {c.stride, c.stride}),
                                  Attribute::Ints("pads", {c.pad, c.pad, c.pad, c.pad}),
                                  Attribute::Int("group", c.group)};
  b.Output(b.Op("QLinearConv", in, attrs));
  return b.Build(13);
}

TEST(QLinearConvTest, MatchesTheReferenceWithinOne) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  std::vector<Case> cases = {
      {"1x1 per tensor, zero points 0", 32, 7, 24, 1, 1, 1, 0, false, true, 0, 0},
      {"1x1 per channel", 64, 14, 48, 1, 1, 1, 0, true, true, 110, 97},
      {"3x3 pad 1", 16, 12, 32, 3, 1, 1, 1, true, true, 128, 97},
      {"3x3 pad 1, x zero point 255", 16, 12, 32, 3, 1, 1, 1, true, true, 255, 128},
      {"5x5 pad 2, x zero point 255, per tensor", 8, 11, 16, 5, 1, 1, 2, false, true, 255, 128},
      {"3x3 stride 2 pad 1", 32, 15, 64, 3, 1, 2, 1, true, true, 90, 120},
      {"grouped 3x3 (4 groups)", 32, 10, 32, 3, 4, 1, 1, true, true, 77, 50},
      {"depthwise 3x3 pad 1", 48, 14, 48, 3, 48, 1, 1, true, true, 128, 128},
      {"depthwise 5x5 stride 2 pad 2", 40, 13, 40, 5, 40, 2, 2, true, true, 200, 64},
      {"3x3 no bias", 16, 9, 16, 3, 1, 1, 1, true, false, 128, 90},
      {"3x3 int8 output", 16, 9, 32, 3, 1, 1, 1, true, true, 128, -5, DType::kInt8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto model = QLinearConvModel(c, 3);
    Tensor x = RandomInts<uint8_t>({1, c.c, c.hw, c.hw}, 17, 0, 255);
    std::map<std::string, RuntimeValue> feeds = {{"x", x}};
    ExpectEightBitWithinOne(*model, feeds, c.y_zero, absl::StrCat("off_by_one_", &c - cases.data()));
  }
}

// A QLinearConv of c -> m channels with power-of-two scales: every product
// Chained QLinearConvs pass u8 activations in oneDNN's layouts (no reorder
// to plain between them); a DequantizeLinear reading one, and a graph output,
// get it plain.
TEST(QLinearConvTest, ChainedConvsAreExactWithPowerOfTwoScales) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  GraphBuilder b;
  Value* x = b.Input("x", DType::kUint8, {1, 16, 12, 12});
  Value* a = ExactQLinearConv(b, x, "a", 16, 32, 3, 1, 1);
  Value* d = ExactQLinearConv(b, a, "d", 32, 32, 3, 32, 2);  // depthwise
  Value* e = ExactQLinearConv(b, d, "e", 32, 24, 1, 1, 3);
  b.Output(e);
  b.Output(b.Op("DequantizeLinear", {a, b.Constant("s", Scalar<float>(DType::kFloat, 0.5f)),
                                     b.Constant("z", Scalar<uint8_t>(DType::kUint8, 128))}));
  auto model = b.Build(13);
  std::string plan = RunBoth(*model, {{"x", RandomInts<uint8_t>({1, 16, 12, 12}, 4, 0, 255)}}, 0, 0, 0);
  EXPECT_NE(plan.find("[int8"), std::string::npos) << plan;
  // oneDNN: x to the first conv's layout, the DequantizeLinear's and the
  // graph output's copies to plain; none between the convs. The pair
  // kernels read and write plain layouts: none at all.
  int reorders = 0;
  for (size_t at = plan.find("reorder\t"); at != std::string::npos; at = plan.find("reorder\t", at + 1)) ++reorders;
  EXPECT_EQ(reorders, PairInt8() ? 0 : 3) << plan;
}

TEST(QLinearConvTest, QdqConvEndToEndWithinOneStep) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  std::vector<aic::testing::QdqConvSpec> specs(3);
  specs[1].group = 8;
  specs[1].m = 8;
  specs[1].stride = 2;
  specs[2].per_channel = false;
  specs[2].x_zero = 255;
  for (const aic::testing::QdqConvSpec& s : specs) {
    auto original = aic::testing::BuildQdqConv(s);
    auto model = aic::testing::BuildQdqConv(s);
    rewrite::OptimizeOptions o;  // as session.cc's OptimizeOptionsFor sets it for this backend
    o.fold_dequantize = true;
    o.qoperator_ops = {"QLinearConv"};
    auto stats = rewrite::Optimize(*model, o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->rule_counts["fuse_qdq_conv"], 1);
    Tensor x = RandomF32({s.n, s.c, s.h, s.w}, 23, -2.0f, 3.0f);
    std::map<std::string, RuntimeValue> feeds = {{"x", x}};
    auto want = ReferenceExecutor(*original).Run(feeds);
    ASSERT_TRUE(want.ok()) << want.status();
    CpuExecutor cpu(*model);
    auto got = cpu.Run(feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor, aic::testing::QdqConvYScale(s) * 1.0001, 0);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    std::string desc = DescribePlan(**plan);
    EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
    EXPECT_NE(desc.find("[int8"), std::string::npos) << desc;
  }
}

}  // namespace
}  // namespace aic::cpu

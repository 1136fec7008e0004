// fuse_qdq_conv: a QDQ Conv becomes QLinearConv for targets that run it as
// int8 (OptimizeOptions::qoperator_ops), within one quantization step of the
// QDQ original on the reference executor; it declines on a scale that is not
// constant, on a bias not at x_scale * w_scale and on weights with a zero
// point (the int8 kernels take symmetric weights); files (no qoperator_ops)
// keep QDQ form; a second run changes nothing. fuse_qdq_matmul likewise
// for a QDQ MatMul with a constant int8 weight, declining on a product of two
// activations and on weights with a zero point.
#include "gtest/gtest.h"
#include "tests/rewrite/qdq_conv_model.h"
#include "tests/rewrite/qdq_matmul_model.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using aic::testing::BuildQdqConv;
using aic::testing::QdqConvSpec;

OptimizeStats OptimizeForInt8(Model& m, std::string* explain = nullptr, const char* rule = "fuse_qdq_conv",
                              bool aic_ops = true) {
  OptimizeOptions o;
  o.qoperator_ops = {"QLinearConv", "QLinearMatMul"};
  if (aic_ops) o.aic_ops = {"QLinearMatMulBias"};  // as the CPU backend declares
  o.fold_dequantize = true;  // as a session sets it
  if (explain != nullptr) o.explain_rule = rule;
  auto stats = Optimize(m, o);
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (explain != nullptr && stats.ok()) {
    for (const std::string& line : stats->explain) *explain += line + "\n";
  }
  return stats.ok() ? *stats : OptimizeStats{};
}

// Max |y - y_original| in units of y's quantization step (y_scale), on random inputs.
double StepsOff(const Model& original, const Model& optimized, float y_scale, uint32_t seed) {
  auto feeds = testing::RandomFeeds(original, seed);
  auto a = ReferenceExecutor(original).Run(feeds);
  auto b = ReferenceExecutor(optimized).Run(feeds);
  EXPECT_TRUE(a.ok() && b.ok());
  if (!a.ok() || !b.ok()) return 1e9;
  const Tensor& ta = (*a)[0].tensor;
  const Tensor& tb = (*b)[0].tensor;
  EXPECT_EQ(ta.dims(), tb.dims());
  double worst = 0;
  for (int64_t i = 0; i < ta.num_elements(); ++i) {
    worst = std::max(worst, std::abs(ta.ElementAsDouble(i) - tb.ElementAsDouble(i)));
  }
  return worst / y_scale;
}

double StepsOff(const QdqConvSpec& s, const Model& optimized) {
  return StepsOff(*BuildQdqConv(s), optimized, aic::testing::QdqConvYScale(s), 11);
}

TEST(FuseQdqConvTest, FiresAndStaysWithinOneStep) {
  std::vector<QdqConvSpec> specs(4);
  specs[1].per_channel = false;
  specs[2].group = 8;  // depthwise
  specs[2].m = 8;
  specs[3].bias = false;
  specs[3].stride = 2;
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(i);
    const QdqConvSpec& s = specs[i];
    auto m = BuildQdqConv(s);
    OptimizeStats stats = OptimizeForInt8(*m);
    auto ops = testing::OpCounts(*m->graph);
    EXPECT_EQ(ops["QLinearConv"], 1);
    EXPECT_EQ(ops.count("Conv"), 0u);
    EXPECT_EQ(stats.rule_counts["fuse_qdq_conv"], 1);
    EXPECT_LE(StepsOff(s, *m), 1.0 + 1e-6);
    // A second run changes nothing.
    OptimizeStats again = OptimizeForInt8(*m);
    EXPECT_EQ(again.rule_counts.count("fuse_qdq_conv"), 0u);
    EXPECT_EQ(testing::OpCounts(*m->graph), ops);
  }
}

TEST(FuseQdqConvTest, FilesKeepQdqForm) {
  auto m = BuildQdqConv({});
  OptimizeOptions o;  // `opt`: no qoperator_ops
  ASSERT_TRUE(Optimize(*m, o).ok());
  auto ops = testing::OpCounts(*m->graph);
  EXPECT_EQ(ops["QLinearConv"], 0);
  EXPECT_EQ(ops["Conv"], 1);
}

TEST(FuseQdqConvTest, DeclinesOnAScaleThatIsNotConstant) {
  QdqConvSpec s;
  s.y_scale_input = true;
  auto m = BuildQdqConv(s);
  std::string explain;
  OptimizeForInt8(*m, &explain);
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearConv"], 0);
  EXPECT_NE(explain.find("not constant"), std::string::npos) << explain;
}

TEST(FuseQdqConvTest, DeclinesOnABiasNotAtXScaleTimesWScale) {
  QdqConvSpec s;
  s.bias_scale_factor = 1.5f;
  auto m = BuildQdqConv(s);
  std::string explain;
  OptimizeForInt8(*m, &explain);
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearConv"], 0);
  EXPECT_NE(explain.find("bias scale"), std::string::npos) << explain;
}

TEST(FuseQdqConvTest, DeclinesOnAsymmetricWeights) {
  QdqConvSpec s;
  s.w_zero = 3;
  auto m = BuildQdqConv(s);
  std::string explain;
  OptimizeForInt8(*m, &explain);
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearConv"], 0);
  EXPECT_NE(explain.find("w zero point"), std::string::npos) << explain;
}

using aic::testing::BuildQdqMatMul;
using aic::testing::QdqMatMulSpec;

double MatMulStepsOff(const QdqMatMulSpec& s, const Model& optimized) {
  return StepsOff(*BuildQdqMatMul(s), optimized, aic::testing::QdqMatMulYScale(s), 13);
}

TEST(FuseQdqMatMulTest, FiresAndStaysWithinOneStep) {
  std::vector<QdqMatMulSpec> specs(3);
  specs[1].per_column = false;
  specs[2].a_dims = {7, 64};  // 2-D a
  specs[2].a_zero = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(i);
    const QdqMatMulSpec& s = specs[i];
    auto m = BuildQdqMatMul(s);
    OptimizeStats stats = OptimizeForInt8(*m);
    auto ops = testing::OpCounts(*m->graph);
    EXPECT_EQ(ops["QLinearMatMul"], 1);
    EXPECT_EQ(ops.count("MatMul"), 0u);
    EXPECT_EQ(stats.rule_counts["fuse_qdq_matmul"], 1);
    EXPECT_LE(MatMulStepsOff(s, *m), 1.0 + 1e-6);
    OptimizeStats again = OptimizeForInt8(*m);
    EXPECT_EQ(again.rule_counts.count("fuse_qdq_matmul"), 0u);
    EXPECT_EQ(testing::OpCounts(*m->graph), ops);
  }
}

TEST(FuseQdqMatMulTest, GemmWithABiasBecomesQLinearMatMulBias) {
  std::vector<QdqMatMulSpec> specs(2);
  for (QdqMatMulSpec& s : specs) {
    s.gemm = true;
    s.a_dims = {9, 48};
  }
  specs[1].per_column = false;
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(i);
    auto m = BuildQdqMatMul(specs[i]);
    OptimizeStats stats = OptimizeForInt8(*m);
    auto ops = testing::OpCounts(*m->graph);
    EXPECT_EQ(ops["QLinearMatMulBias"], 1);
    EXPECT_EQ(ops.count("Gemm"), 0u);
    EXPECT_EQ(stats.rule_counts["fuse_qdq_matmul"], 1);
    EXPECT_LE(MatMulStepsOff(specs[i], *m), 1.0 + 1e-6);
  }
}

TEST(FuseQdqMatMulTest, GemmDeclinesOnABiasNotAtAScaleTimesBScale) {
  QdqMatMulSpec s;
  s.gemm = true;
  s.a_dims = {9, 48};
  s.bias_scale_factor = 1.5f;
  auto m = BuildQdqMatMul(s);
  std::string explain;
  OptimizeForInt8(*m, &explain, "fuse_qdq_matmul");
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearMatMulBias"], 0);
  EXPECT_NE(explain.find("bias scale"), std::string::npos) << explain;
}

TEST(FuseQdqMatMulTest, GemmWithABiasNeedsATargetWithQLinearMatMulBias) {
  QdqMatMulSpec s;
  s.gemm = true;
  s.a_dims = {9, 48};
  auto m = BuildQdqMatMul(s);
  std::string explain;
  OptimizeForInt8(*m, &explain, "fuse_qdq_matmul", /*aic_ops=*/false);
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearMatMulBias"], 0);
  EXPECT_EQ(testing::OpCounts(*m->graph)["Gemm"], 1);
  EXPECT_NE(explain.find("no QLinearMatMulBias"), std::string::npos) << explain;
}

TEST(FuseQdqMatMulTest, FilesKeepQdqForm) {
  auto m = BuildQdqMatMul({});
  ASSERT_TRUE(Optimize(*m, OptimizeOptions{}).ok());
  auto ops = testing::OpCounts(*m->graph);
  EXPECT_EQ(ops["QLinearMatMul"], 0);
  EXPECT_EQ(ops["MatMul"], 1);
}

TEST(FuseQdqMatMulTest, DeclinesOnAProductOfTwoActivations) {
  QdqMatMulSpec s;
  s.b_activation = true;
  auto m = BuildQdqMatMul(s);
  std::string explain;
  OptimizeForInt8(*m, &explain, "fuse_qdq_matmul");
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearMatMul"], 0);
  EXPECT_NE(explain.find("not a constant int8 matrix"), std::string::npos) << explain;
}

TEST(FuseQdqMatMulTest, DeclinesOnAsymmetricWeights) {
  QdqMatMulSpec s;
  s.b_zero = 2;
  auto m = BuildQdqMatMul(s);
  std::string explain;
  OptimizeForInt8(*m, &explain, "fuse_qdq_matmul");
  EXPECT_EQ(testing::OpCounts(*m->graph)["QLinearMatMul"], 0);
  EXPECT_NE(explain.find("b zero point"), std::string::npos) << explain;
}

}  // namespace
}  // namespace aic::rewrite

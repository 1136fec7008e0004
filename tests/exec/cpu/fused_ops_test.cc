// aic-onnx's own fused ops on the fast CPU executor: a Gemm + Relu model goes
// through the optimizer with the aic target (what `aic-onnx opt --target aic`
// runs), which emits ai.aic FusedLinearReLU; the compiled plan must run it as
// one oneDNN matmul with bias and ReLU fused, no reference fallback, and agree
// with the reference executor on both the original and the optimized model.
#include <random>

#include "absl/strings/str_cat.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "rewrite/optimize.h"

namespace aic::cpu {
namespace {

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  for (float& v : t.mutable_span<float>()) v = dist(rng);
  return t;
}

struct GemmCase {
  bool trans_a = false, trans_b = true;
  float alpha = 1.0f, beta = 1.0f;
  bool bias = true;
};

// y = Relu(Gemm(x, W, c)), x float[3, 16] (or transposed), W 16x8 (or 8x16).
std::unique_ptr<Model> GemmRelu(const GemmCase& c) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, c.trans_a ? std::vector<Dim>{16, 3} : std::vector<Dim>{3, 16});
  Value* w = b.Constant("W", Random(c.trans_b ? std::vector<int64_t>{8, 16} : std::vector<int64_t>{16, 8}, 1));
  std::vector<Value*> ins = {x, w};
  if (c.bias) ins.push_back(b.Constant("c", Random({8}, 2)));
  Value* g = b.Op("Gemm", ins,
                  {Attribute::Int("transA", c.trans_a), Attribute::Int("transB", c.trans_b),
                   Attribute::Float("alpha", c.alpha), Attribute::Float("beta", c.beta)});
  b.Output(b.Op("Relu", {g}));
  return b.Build(13);
}

void ExpectClose(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    ASSERT_LE(std::fabs(a - b), 1e-5 + 1e-4 * std::fabs(b)) << "element " << i;
  }
}

// (3 rows: our few-rows kernel's step, kernels/gemv.h, with the ReLU in it.)
TEST(CpuFusedOpsTest, FusedLinearReluIsOneStep) {
  for (const GemmCase& c : {GemmCase{}, GemmCase{.trans_b = false}, GemmCase{.trans_a = true, .alpha = 0.5f},
                            GemmCase{.beta = 2.0f}, GemmCase{.bias = false}}) {
    SCOPED_TRACE(absl::StrCat("transA=", c.trans_a, " transB=", c.trans_b, " alpha=", c.alpha, " beta=", c.beta,
                              " bias=", c.bias));
    auto original = GemmRelu(c);
    auto fused = GemmRelu(c);
    rewrite::OptimizeOptions options;
    options.aic_ops = rewrite::AllAicOps();
    ASSERT_TRUE(rewrite::Optimize(*fused, options).ok());
    ASSERT_EQ(fused->graph->num_nodes(), 1u);
    ASSERT_EQ(fused->graph->nodes()[0]->op_type, "FusedLinearReLU");
    ASSERT_EQ(fused->graph->nodes()[0]->domain, "ai.aic");

    std::map<std::string, RuntimeValue> feeds = {
        {"x", Random(c.trans_a ? std::vector<int64_t>{16, 3} : std::vector<int64_t>{3, 16}, 3)}};
    auto want = ReferenceExecutor(*original).Run(feeds);
    ASSERT_TRUE(want.ok()) << want.status();
    auto want_fused = ReferenceExecutor(*fused).Run(feeds);
    ASSERT_TRUE(want_fused.ok()) << want_fused.status();
    ExpectClose((*want_fused)[0].tensor, (*want)[0].tensor);

    CpuExecutor cpu(*fused);
    auto got = cpu.Run(feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    const PlanStats& st = StatsOf(**plan);
    EXPECT_EQ(st.steps, 1) << DescribePlan(**plan);
    EXPECT_EQ(st.fallback_steps, 0);
    EXPECT_NE(DescribePlan(**plan).find("relu"), std::string::npos) << DescribePlan(**plan);
  }
}

// Post-ops after the fused op still fold in behind its ReLU.
TEST(CpuFusedOpsTest, FusedLinearReluTakesFurtherPostOps) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 16});
  Value* y = b.OpN("FusedLinearReLU", {x, b.Constant("W", Random({16, 8}, 4)), b.Constant("c", Random({8}, 5))}, 1,
                   {}, "ai.aic")[0];
  b.Output(b.Op("Mul", {y, b.Constant("k", Tensor::FromVector<float>({-3.0f}, {1}))}));
  auto model = b.Build(13);
  model->opset_imports.push_back({"ai.aic", 1});
  std::map<std::string, RuntimeValue> feeds = {{"x", Random({4, 16}, 6)}};
  auto want = ReferenceExecutor(*model).Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(*model);
  auto got = cpu.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose((*got)[0].tensor, (*want)[0].tensor);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(StatsOf(**plan).steps, 1) << DescribePlan(**plan);
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 0);
}

}  // namespace
}  // namespace aic::cpu

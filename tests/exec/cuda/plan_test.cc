// The CUDA executor's host stage, without a GPU: which step each node gets
// (cuBLASLt epilogues, GELU-tanh only, fused elementwise programs, BatchNorm
// folded into conv), when a plan can be one CUDA Graph, fallbacks, the arena
// (no two values alive at one step overlap) and, through the host emulation
// of every kernel over the very arena layout the device uses, numerics
// against the reference executor on the testdata models and small graphs.
#include "exec/cuda/plan.h"

#include <filesystem>
#include <random>

#include "exec/cuda/internal.h"
#include "exec/cuda/steps.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"
#include "tests/exec/cuda/test_models.h"

namespace aic::cuda {
namespace {

using testing::Close;
using testing::ExpectArenaSound;
using testing::RandomTensor;
using testing::ShapesOf;

// Builds the plan, checks the arena, emulates it and compares with the reference executor.
std::unique_ptr<Plan> EmulateAndCompare(const Model& model, const std::map<std::string, RuntimeValue>& feeds,
                                        double rtol = 1e-4, double atol = 1e-4, CudaOptions options = {}) {
  auto plan = BuildPlan(model, ShapesOf(feeds), options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return nullptr;
  ExpectArenaSound(**plan);
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(want.ok()) << want.status();
  auto got = Emulate(**plan, feeds);
  EXPECT_TRUE(got.ok()) << got.status();
  if (want.ok() && got.ok()) {
    EXPECT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
      EXPECT_TRUE(Close((*got)[i].tensor, (*want)[i].tensor, rtol, atol)) << "output " << i << "\n"
                                                                          << DescribePlan(**plan);
    }
  }
  return std::move(*plan);
}

std::vector<const MatMulStep*> Gemms(const Plan& plan) {
  std::vector<const MatMulStep*> out;
  for (const auto& s : plan.steps) {
    if (auto* m = dynamic_cast<const MatMulStep*>(s.get())) out.push_back(m);
  }
  return out;
}

std::unique_ptr<Model> Load(const std::string& name) {
  auto m = LoadModel(std::string(AIC_SOURCE_DIR) + "/testdata/" + name);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(CudaPlanTest, MatMulBiasReluIsOneGemmWithReluBiasEpilogue) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 8});
  Value* w = b.Constant("w", RandomTensor({8, 16}, 1));
  Value* bias = b.Constant("b", RandomTensor({16}, 2));
  b.Output(b.Op("Relu", {b.Op("Add", {b.Op("MatMul", {x, w}), bias})}));
  auto model = b.Build();
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({4, 8}, 3))}});
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps.size(), 1u) << DescribePlan(*plan);
  ASSERT_EQ(Gemms(*plan).size(), 1u);
  EXPECT_EQ(Gemms(*plan)[0]->desc().epilogue, Epilogue::kReluBias);
  EXPECT_EQ(StatsOf(*plan).fused_nodes, 2);
  EXPECT_TRUE(StatsOf(*plan).graph_blocker.empty());
}

TEST(CudaPlanTest, GeluEpilogueOnlyForTheTanhApproximation) {
  for (const char* approx : {"tanh", "none"}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 3, 8});
    Value* w = b.Constant("w", RandomTensor({8, 12}, 4));
    Value* bias = b.Constant("b", RandomTensor({12}, 5));
    b.Output(b.Op("Gelu", {b.Op("Add", {b.Op("MatMul", {x, w}), bias})}, {Attribute::String("approximate", approx)}));
    auto model = b.Build(20);
    auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({2, 3, 8}, 6))}});
    ASSERT_NE(plan, nullptr);
    ASSERT_EQ(Gemms(*plan).size(), 1u);
    if (std::string(approx) == "tanh") {
      EXPECT_EQ(Gemms(*plan)[0]->desc().epilogue, Epilogue::kGeluBias);
      EXPECT_EQ(plan->steps.size(), 1u);
    } else {
      // erf GELU: bias in the GEMM, GELU as an elementwise step.
      EXPECT_EQ(Gemms(*plan)[0]->desc().epilogue, Epilogue::kBias);
      ASSERT_EQ(plan->steps.size(), 2u);
      EXPECT_EQ(plan->steps[1]->kind, "eltwise");
    }
    // The batch (2x3) folds into M: one plain GEMM.
    EXPECT_EQ(Gemms(*plan)[0]->desc().m, 6);
    EXPECT_EQ(Gemms(*plan)[0]->desc().batch, 1);
  }
}

TEST(CudaPlanTest, ResidualAddBecomesGemmC) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {5, 8});
  Value* w = b.Constant("w", RandomTensor({8, 8}, 7));
  Value* bias = b.Constant("b", RandomTensor({1, 8}, 8));
  Value* y = b.Op("Add", {x, b.Op("Add", {b.Op("MatMul", {x, w}), bias})});
  b.Output(b.Op("Relu", {y}));
  auto model = b.Build();
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({5, 8}, 9))}});
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps.size(), 1u) << DescribePlan(*plan);
  const MatMulStep* g = Gemms(*plan)[0];
  EXPECT_EQ(g->desc().epilogue, Epilogue::kReluBias);
  EXPECT_GE(g->c_slot(), 0);
  EXPECT_EQ(g->desc().beta, 1.0f);
}

TEST(CudaPlanTest, FusedLinearReluIsOneGemm) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 16});
  Value* y =
      b.OpN("FusedLinearReLU", {x, b.Constant("W", RandomTensor({8, 16}, 4)), b.Constant("c", RandomTensor({8}, 5))}, 1,
            {Attribute::Int("transB", 1)}, "ai.aic")[0];
  b.Output(y);
  auto model = b.Build();
  model->opset_imports.push_back({"ai.aic", 1});
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({3, 16}, 6))}});
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps.size(), 1u) << DescribePlan(*plan);
  EXPECT_EQ(Gemms(*plan)[0]->desc().epilogue, Epilogue::kReluBias);
}

TEST(CudaPlanTest, ScalarFactorBecomesAlphaOnlyBeforeAddends) {
  for (bool scale_first : {true, false}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {4, 8});
    Value* w = b.Constant("w", RandomTensor({8, 16}, 1));
    Value* bias = b.Constant("b", RandomTensor({16}, 2));
    Value* s = b.Constant("s", Tensor::Scalar<float>(0.125f));
    Value* mm = b.Op("MatMul", {x, w});
    if (scale_first) {
      b.Output(b.Op("Add", {b.Op("Mul", {s, mm}), bias}));
    } else {
      b.Output(b.Op("Div", {b.Op("Add", {mm, bias}), s}));
    }
    auto model = b.Build();
    auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({4, 8}, 3))}});
    ASSERT_NE(plan, nullptr);
    const MatMulStep* g = Gemms(*plan)[0];
    EXPECT_EQ(g->desc().epilogue, Epilogue::kBias);
    EXPECT_EQ(g->desc().alpha, scale_first ? 0.125f : 1.0f);
    EXPECT_EQ(plan->steps.size(), scale_first ? 1u : 2u) << DescribePlan(*plan);
  }
}

TEST(CudaPlanTest, EpilogueFusionCanBeTurnedOff) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 8});
  Value* w = b.Constant("w", RandomTensor({8, 16}, 1));
  Value* bias = b.Constant("b", RandomTensor({16}, 2));
  b.Output(b.Op("Relu", {b.Op("Add", {b.Op("MatMul", {x, w}), bias})}));
  auto model = b.Build();
  CudaOptions options;
  options.fuse_epilogues = false;
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({4, 8}, 3))}}, 1e-4, 1e-4, options);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->steps.size(), 3u) << DescribePlan(*plan);
  EXPECT_EQ(Gemms(*plan)[0]->desc().epilogue, Epilogue::kDefault);
}

TEST(CudaPlanTest, GemmAttributesAndBroadcastC) {
  for (std::vector<int64_t> c_dims : {std::vector<int64_t>{6}, {3, 6}, {3, 1}, {}}) {
    GraphBuilder b;
    Value* a = b.Input("a", DType::kFloat, {4, 3});  // transA: A is 3x4
    Value* w = b.Constant("w", RandomTensor({6, 4}, 11));
    Value* c = b.Constant("c", RandomTensor(c_dims, 12));
    b.Output(b.Op("Gemm", {a, w, c},
                  {Attribute::Int("transA", 1), Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f),
                   Attribute::Float("beta", 2.0f)}));
    auto model = b.Build();
    auto plan = EmulateAndCompare(*model, {{"a", RuntimeValue(RandomTensor({4, 3}, 13))}});
    ASSERT_NE(plan, nullptr) << DimsToString(c_dims);
  }
}

TEST(CudaPlanTest, BatchedMatMulUsesStridedBatches) {
  GraphBuilder b;
  Value* q = b.Input("q", DType::kFloat, {2, 4, 5, 8});
  Value* k = b.Input("k", DType::kFloat, {2, 4, 8, 5});
  Value* w = b.Input("w", DType::kFloat, {3, 8});
  b.Output(b.Op("MatMul", {q, k}));  // both batched
  Value* qt =
      b.Op("Transpose", {b.Op("Reshape", {q, b.Constant("shape", Tensor::FromVector<int64_t>({8, 5, 8}, {3}))})},
           {Attribute::Ints("perm", {0, 2, 1})});
  b.Output(b.Op("MatMul", {w, qt}));  // A without batch: stride 0
  auto model = b.Build();
  auto plan = EmulateAndCompare(*model, {{"q", RuntimeValue(RandomTensor({2, 4, 5, 8}, 1))},
                                         {"k", RuntimeValue(RandomTensor({2, 4, 8, 5}, 2))},
                                         {"w", RuntimeValue(RandomTensor({3, 8}, 3))}});
  ASSERT_NE(plan, nullptr);
  auto g = Gemms(*plan);
  ASSERT_EQ(g.size(), 2u) << DescribePlan(*plan);
  EXPECT_EQ(g[0]->desc().batch, 8);
  EXPECT_EQ(g[0]->desc().stride_a, 40);
  EXPECT_EQ(g[1]->desc().batch, 8);
  EXPECT_EQ(g[1]->desc().stride_a, 0);
}

TEST(CudaPlanTest, EltwiseChainIsOneProgram) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
  Value* y = b.Input("y", DType::kFloat, {3, 1});
  // The exporter's erf GELU, then * y (broadcast), then Sigmoid.
  Value* g =
      b.Op("Mul",
           {b.Op("Mul",
                 {x, b.Op("Add", {b.Op("Erf", {b.Op("Div", {x, b.Constant("s2", Tensor::Scalar<float>(1.41421356f))})}),
                                  b.Constant("one", Tensor::Scalar<float>(1.0f))})}),
            b.Constant("half", Tensor::Scalar<float>(0.5f))});
  b.Output(b.Op("Sigmoid", {b.Op("Sub", {y, g})}));
  auto model = b.Build();
  auto plan = EmulateAndCompare(
      *model, {{"x", RuntimeValue(RandomTensor({2, 3, 4}, 1))}, {"y", RuntimeValue(RandomTensor({3, 1}, 2))}});
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps.size(), 1u) << DescribePlan(*plan);
  auto* e = dynamic_cast<const EltStep*>(plan->steps[0].get());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->program().n_inputs, 2);  // scalars are immediates
  EXPECT_EQ(e->program().n_instr, 7);
}

TEST(CudaPlanTest, DataMovementAndRowKernels) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 6, 8});
  Value* t = b.Op("Transpose", {x}, {Attribute::Ints("perm", {0, 2, 1})});
  Value* s = b.Op("Slice", {t, b.Constant("st", Tensor::FromVector<int64_t>({1, 5}, {2})),
                            b.Constant("en", Tensor::FromVector<int64_t>({7, 0}, {2})),
                            b.Constant("ax", Tensor::FromVector<int64_t>({1, 2}, {2})),
                            b.Constant("sp", Tensor::FromVector<int64_t>({2, -1}, {2}))});
  Value* c = b.Op("Concat", {s, s}, {Attribute::Int("axis", 2)});
  Value* sm = b.Op("Softmax", {c}, {Attribute::Int("axis", 1)});
  Value* ln =
      b.Op("LayerNormalization", {sm, b.Constant("g", RandomTensor({10}, 3)), b.Constant("be", RandomTensor({10}, 4))},
           {Attribute::Int("axis", -1)});
  Value* r = b.Op("ReduceMax", {ln}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 1)});
  Value* idx = b.Constant("idx", Tensor::FromVector<int64_t>({3, -1, 0}, {3}));
  b.Output(b.Op("Gather", {ln, idx}, {Attribute::Int("axis", 2)}));
  b.Output(b.Op("LogSoftmax", {r}, {Attribute::Int("axis", -1)}));
  b.Output(b.Op("Expand", {r, b.Constant("es", Tensor::FromVector<int64_t>({2, 2, 3, 10}, {4}))}));
  auto model = b.Build();
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({2, 6, 8}, 5))}});
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(StatsOf(*plan).fallback_steps, 0) << DescribePlan(*plan);
}

TEST(CudaPlanTest, UnsupportedOpFallsBackAndBlocksTheGraph) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 5});
  Value* top = b.OpN("TopK", {x, b.Constant("k", Tensor::FromVector<int64_t>({2}, {1}))}, 2)[0];
  b.Output(b.Op("Relu", {top}));
  auto model = b.Build();
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({3, 5}, 1))}});
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(StatsOf(*plan).fallback_steps, 1);
  EXPECT_EQ(StatsOf(*plan).fallback_ops, std::vector<std::string>{"TopK"});
  EXPECT_NE(StatsOf(*plan).graph_blocker.find("fallback"), std::string::npos);
}

TEST(CudaPlanTest, GraphCanBeDisabled) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3});
  b.Output(b.Op("Relu", {x}));
  auto model = b.Build();
  CudaOptions options;
  options.use_cuda_graph = false;
  auto plan = BuildPlan(*model, {{"x", {3}}}, options);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(StatsOf(**plan).graph_blocker, "disabled by option");
}

TEST(CudaPlanTest, BadFeedsAreErrors) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3});
  b.Output(b.Op("Relu", {x}));
  auto model = b.Build();
  auto plan = BuildPlan(*model, {{"x", {3}}});
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(Emulate(**plan, {{"x", RuntimeValue(RandomTensor({4}, 1))}}).ok());
  EXPECT_FALSE(Emulate(**plan, {}).ok());
  EXPECT_FALSE(
      Emulate(**plan, {{"x", RuntimeValue(RandomTensor({3}, 1))}, {"z", RuntimeValue(RandomTensor({3}, 1))}}).ok());
}

TEST(CudaPlanTest, SmallCasesEmulateLikeTheReference) {
  for (auto& c : testing::SmallCases(1)) {
    SCOPED_TRACE(c.name);
    auto plan = EmulateAndCompare(*c.model, c.feeds, c.tol, c.tol);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(StatsOf(*plan).fallback_steps, c.name == "fallback" ? 1 : 0) << DescribePlan(*plan);
  }
}

TEST(CudaModelTest, SeedMlpIsTwoGemms) {
  auto model = Load("seed_mlp.onnx");
  ASSERT_NE(model, nullptr);
  auto plan = EmulateAndCompare(*model, {{"input", RuntimeValue(RandomTensor({1, 10}, 1))}});
  ASSERT_NE(plan, nullptr);
  auto g = Gemms(*plan);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(g[0]->desc().epilogue, Epilogue::kReluBias);
  EXPECT_EQ(g[1]->desc().epilogue, Epilogue::kBias);
  EXPECT_TRUE(StatsOf(*plan).graph_blocker.empty());
}

TEST(CudaModelTest, EncoderHasNoFallbacksAndIsOneGraph) {
  auto model = Load("encoder.onnx");
  ASSERT_NE(model, nullptr);
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({1, 128, 256}, 1))}}, 1e-3, 1e-3);
  ASSERT_NE(plan, nullptr);
  const PlanStats& st = StatsOf(*plan);
  EXPECT_EQ(st.fallback_steps, 0) << DescribePlan(*plan);
  EXPECT_EQ(st.gemm_steps, 48);
  EXPECT_TRUE(st.graph_blocker.empty());
  int erf_programs = 0;
  for (const auto& s : plan->steps) erf_programs += s->label.find("Erf") != std::string::npos;
  EXPECT_EQ(erf_programs, 6);  // each exact GELU is one program, never a GEMM epilogue
  // Every projection (q, k, v, o, fc1, fc2) took its bias; o and fc2 their residual too.
  int with_c = 0;
  for (const MatMulStep* g : Gemms(*plan)) with_c += g->c_slot() >= 0;
  EXPECT_EQ(with_c, 12);
  // The attention scale is the scores GEMM's alpha.
  int scaled = 0;
  for (const MatMulStep* g : Gemms(*plan)) scaled += g->desc().alpha != 1.0f;
  EXPECT_EQ(scaled, 6);
  // Per layer: 8 GEMMs, 4 head transposes, softmax, 2 layer norms, 1 GELU program.
  EXPECT_EQ(st.steps, 6 * 16) << DescribePlan(*plan);
}

TEST(CudaModelTest, EncoderPlansPerBatch) {
  auto model = Load("encoder.onnx");
  ASSERT_NE(model, nullptr);
  auto p32 = BuildPlan(*model, {{"x", {32, 128, 256}}});
  ASSERT_TRUE(p32.ok()) << p32.status();
  ExpectArenaSound(**p32);
  EXPECT_EQ(StatsOf(**p32).fallback_steps, 0);
  // The arena is a fraction of all activations: lifetimes reuse bytes.
  auto p1 = BuildPlan(*model, {{"x", {1, 128, 256}}});
  ASSERT_TRUE(p1.ok());
  EXPECT_GT(StatsOf(**p32).arena_bytes, 16 * StatsOf(**p1).arena_bytes);
}

TEST(CudaModelTest, ResnetFoldsBatchNormAndIsOneGraph) {
  auto model = Load("resnet_cnn.onnx");
  ASSERT_NE(model, nullptr);
  auto plan = EmulateAndCompare(*model, {{"x", RuntimeValue(RandomTensor({1, 3, 224, 224}, 1))}}, 1e-3, 1e-3);
  ASSERT_NE(plan, nullptr);
  const PlanStats& st = StatsOf(*plan);
  EXPECT_EQ(st.fallback_steps, 0) << DescribePlan(*plan);
  EXPECT_EQ(st.conv_steps, 7);
  EXPECT_EQ(st.gemm_steps, 1);
  EXPECT_TRUE(st.graph_blocker.empty());
  for (const auto& s : plan->steps) EXPECT_NE(s->label.find("BatchNormalization"), 0u);
  int bn_in_conv = 0;
  for (const auto& s : plan->steps)
    bn_in_conv += s->kind == "conv" && s->label.find("BatchNormalization") != std::string::npos;
  EXPECT_EQ(bn_in_conv, 7);
}

}  // namespace
}  // namespace aic::cuda

// The fast CPU executor against the reference executor: small graphs built
// here (fusion, layouts, views, fallbacks), the seed MLP and the PaddleOCR
// models (skipped when ../shared/models is absent), and the arena's
// invariant that no two values alive at the same step share bytes.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "exec/cpu/internal.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"
#include "tests/testing/op_test_util.h"

namespace aic::cpu {
namespace {

Tensor RandomTensor(const std::vector<int64_t>& dims, uint32_t seed, float scale = 1.0f) {
  return testing::NormalTensor(dims, seed, scale);
}

// |a-b| <= atol + rtol*|b| elementwise; returns the worst offender.
::testing::AssertionResult Close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dims() != want.dims()) {
    return ::testing::AssertionFailure() << "dims " << DimsToString(got.dims()) << " vs " << DimsToString(want.dims());
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs reference " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

void ExpectArenaSound(const Plan& plan) {
  // Buffers alive at a common step must not overlap in the arena.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const ArenaBuffer& a = plan.buffers[i];
    if (a.first < 0) continue;
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const ArenaBuffer& b = plan.buffers[j];
      if (b.first < 0 || a.last < b.first || b.last < a.first) continue;
      bool disjoint = a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
    }
  }
}

void CompareWithReference(const Model& model, const std::map<std::string, RuntimeValue>& feeds, double rtol,
                          double atol, Plan** plan_out = nullptr, CpuExecutor* executor = nullptr) {
  ReferenceExecutor reference(model);
  auto want = reference.Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuExecutor local(model);
  CpuExecutor& exec = executor != nullptr ? *executor : local;
  auto got = exec.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_TRUE(Close((*got)[i].tensor, (*want)[i].tensor, rtol, atol)) << "output " << i;
  }
  auto plan = exec.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  ExpectArenaSound(**plan);
  if (plan_out != nullptr) *plan_out = *plan;
}

// Runs `model` on the CPU executor against the reference (CompareWithReference)
// and checks its plan has no reference step; the plan's description, or ""
// when it could not run.
std::string PlanMatchingTheReference(const Model& model, const std::map<std::string, RuntimeValue>& feeds,
                                     double rtol = 1e-4, double atol = 1e-5) {
  Plan* plan = nullptr;
  CpuExecutor exec(model);
  CompareWithReference(model, feeds, rtol, atol, &plan, &exec);
  if (plan == nullptr) {
    ADD_FAILURE() << "no plan";
    return "";
  }
  const std::string described = DescribePlan(*plan);
  EXPECT_EQ(StatsOf(*plan).fallback_steps, 0) << described;
  return described;
}

// A BatchNormalization's variance: random, at least 0.5.
Tensor RandomVariance(int64_t channels, uint32_t seed) {
  Tensor var = RandomTensor({channels}, seed);
  for (int64_t i = 0; i < channels; ++i) var.mutable_data<float>()[i] = 0.5f + std::fabs(var.data<float>()[i]);
  return var;
}

// x -> Conv(3x3, bias) -> BatchNorm -> HardSwish -> depthwise Conv -> +
// residual -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> Softmax. (The
// HardSwish that exporters spell out becomes this one node in the rewriter,
// which sessions run before compiling: tests/session/session_test.cc.)
std::unique_ptr<Model> SmallCnn() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 12, 12});
  Value* w1 = b.Constant("w1", RandomTensor({16, 8, 3, 3}, 1, 0.2f));
  Value* b1 = b.Constant("b1", RandomTensor({16}, 2));
  Value* c1 = b.Op("Conv", {x, w1, b1}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  Tensor scale = RandomTensor({16}, 3), bias = RandomTensor({16}, 4), mean = RandomTensor({16}, 5);
  Value* bn = b.Op("BatchNormalization", {c1, b.Constant("s", scale), b.Constant("bb", bias),
                                            b.Constant("m", mean), b.Constant("v", RandomVariance(16, 6))});
  Value* hs = b.Op("HardSwish", {bn});
  Value* w2 = b.Constant("w2", RandomTensor({16, 1, 3, 3}, 7, 0.3f));
  Value* c2 = b.Op("Conv", {hs, w2}, {Attribute::Int("group", 16), Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* res = b.Op("Add", {c2, hs});
  Value* r = b.Op("Relu", {res});
  Value* gap = b.Op("GlobalAveragePool", {r});
  Value* flat = b.Op("Flatten", {gap});
  Value* wf = b.Constant("wf", RandomTensor({16, 5}, 8));
  Value* bf = b.Constant("bf", RandomTensor({5}, 9));
  Value* fc = b.Op("Gemm", {flat, wf, bf});
  Value* sm = b.Op("Softmax", {fc});
  b.Output(sm);
  b.Output(r);
  return b.Build(14);  // HardSwish is opset 14
}

TEST(CpuExecutorTest, SmallCnnMatchesReference) {
  std::unique_ptr<Model> model = SmallCnn();
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({1, 8, 12, 12}, 11)}};
  Plan* plan = nullptr;
  CpuExecutor exec(*model);
  CompareWithReference(*model, feeds, 1e-3, 1e-5, &plan, &exec);
  ASSERT_NE(plan, nullptr);
  const PlanStats& st = StatsOf(*plan);
  EXPECT_EQ(st.fallback_steps, 0) << DescribePlan(*plan);
  // BN folded into the conv, HardSwish, residual add and Relu fused.
  EXPECT_GE(st.fused_nodes, 4) << DescribePlan(*plan);
  // A second run with other data reuses the plan and still agrees.
  std::map<std::string, RuntimeValue> feeds2 = {{"x", RandomTensor({1, 8, 12, 12}, 12)}};
  CompareWithReference(*model, feeds2, 1e-3, 1e-5, nullptr, &exec);
}

// Outputs are written in place into tensors handed to the caller; a run must
// never overwrite what an earlier run returned while the caller still holds
// it, and a released output's memory may be reused.
TEST(CpuExecutorTest, HeldOutputsSurviveLaterRuns) {
  std::unique_ptr<Model> model = SmallCnn();
  CpuExecutor exec(*model);
  std::map<std::string, RuntimeValue> a = {{"x", RandomTensor({1, 8, 12, 12}, 31)}};
  std::map<std::string, RuntimeValue> b = {{"x", RandomTensor({1, 8, 12, 12}, 32)}};
  auto first = exec.Run(a);
  ASSERT_TRUE(first.ok()) << first.status();
  std::vector<Tensor> kept;
  for (const RuntimeValue& v : *first) kept.push_back(v.tensor.Clone());
  for (int i = 0; i < 3; ++i) {
    auto later = exec.Run(b);
    ASSERT_TRUE(later.ok()) << later.status();
    auto again = exec.Run(b);  // `later` is still held here
    ASSERT_TRUE(again.ok()) << again.status();
    for (size_t k = 0; k < later->size(); ++k) {
      EXPECT_EQ(testing::MaxAbsDiff((*later)[k].tensor, (*again)[k].tensor), 0.0);
      EXPECT_NE((*later)[k].tensor.raw_data(), (*again)[k].tensor.raw_data());
    }
  }
  for (size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(testing::MaxAbsDiff((*first)[k].tensor, kept[k]), 0.0) << k;
}

TEST(CpuExecutorTest, UnfusedAndPlainLayoutsAgreeToo) {
  std::unique_ptr<Model> model = SmallCnn();
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({1, 8, 12, 12}, 13)}};
  CpuOptions options;
  options.fuse_post_ops = false;
  options.blocked_layouts = false;
  CpuExecutor exec(*model, options);
  Plan* plan = nullptr;
  CompareWithReference(*model, feeds, 1e-3, 1e-5, &plan, &exec);
  EXPECT_EQ(StatsOf(*plan).fused_nodes, 0);
}

TEST(CpuExecutorTest, ViewsAreZeroCopyAndFallbacksRun) {
  // Reshape is a view; ReverseSequence has no fast kernel and runs the
  // reference one; the int64 lengths flow through untouched.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
  Value* r = b.Op("Relu", {x});
  Value* flat = b.Op("Reshape", {r, b.Constant("shape", Tensor::FromVector<int64_t>({6, 4}, {2}))});
  Value* lens = b.Constant("lens", Tensor::FromVector<int64_t>({4, 1, 6, 2}, {4}));
  Value* reversed = b.Op("ReverseSequence", {flat, lens}, {Attribute::Int("batch_axis", 1), Attribute::Int("time_axis", 0)});
  Value* t = b.Op("Transpose", {reversed});
  b.Output(t);
  std::unique_ptr<Model> model = b.Build(13);
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({2, 3, 4}, 3)}};
  Plan* plan = nullptr;
  CpuExecutor exec(*model);
  CompareWithReference(*model, feeds, 0, 0, &plan, &exec);
  EXPECT_EQ(StatsOf(*plan).fallback_steps, 1) << DescribePlan(*plan);
  EXPECT_EQ(StatsOf(*plan).view_steps, 0);  // the Reshape of an arena value needs no step
}

TEST(CpuExecutorTest, WrongInputShapeIsAnError) {
  std::unique_ptr<Model> model = SmallCnn();
  auto plan = Compile(*model, {{"x", {1, 8, 12, 12}}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({1, 8, 10, 10}, 1)}};
  auto out = cpu::Run(**plan, feeds);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuExecutorTest, SeedMlpMatchesReference) {
  auto model = LoadModel(std::string(AIC_SOURCE_DIR) + "/testdata/seed_mlp.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  std::map<std::string, RuntimeValue> feeds = {{"input", RandomTensor({1, 10}, 5)}};
  CompareWithReference(**model, feeds, 1e-4, 1e-6);
}

class PpOcrTest : public ::testing::TestWithParam<std::pair<const char*, std::vector<int64_t>>> {};

TEST_P(PpOcrTest, MatchesReference) {
  std::string path = std::string(AIC_SOURCE_DIR) + "/../shared/models/" + GetParam().first;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor(GetParam().second, 21, 0.5f)}};
  Plan* plan = nullptr;
  CpuExecutor exec(**model);
  // Deep conv stacks reassociate sums: the ONNX relative tolerance plus an
  // absolute floor for outputs near zero.
  CompareWithReference(**model, feeds, 1e-3, 1e-4, &plan, &exec);
  if (plan != nullptr && HasFailure()) std::printf("%s", DescribePlan(*plan).c_str());
}

INSTANTIATE_TEST_SUITE_P(Models, PpOcrTest,
                         ::testing::Values(std::make_pair("ppocr_cls.onnx", std::vector<int64_t>{1, 3, 48, 192}),
                                           std::make_pair("ppocr_rec.onnx", std::vector<int64_t>{1, 3, 48, 320}),
                                           std::make_pair("ppocr_det.onnx", std::vector<int64_t>{1, 3, 160, 160})));


}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// Debug aid (run with --gtest_also_run_disabled_tests and AIC_BISECT_MODEL,
// AIC_BISECT_SHAPE=1,3,48,320): finds the first node whose output differs
// between the executors by cutting the graph's outputs at each node in turn.
TEST(CpuExecutorDebug, DISABLED_Bisect) {
  const char* path = std::getenv("AIC_BISECT_MODEL");
  const char* shape = std::getenv("AIC_BISECT_SHAPE");
  if (path == nullptr || shape == nullptr) GTEST_SKIP();
  std::vector<int64_t> dims;
  for (const char* p = shape; *p;) {
    dims.push_back(std::strtoll(p, const_cast<char**>(&p), 10));
    if (*p == ',') ++p;
  }
  auto model = LoadModel(path);
  ASSERT_TRUE(model.ok());
  std::map<std::string, RuntimeValue> feeds = {{(*model)->graph->inputs()[0]->name(), RandomTensor(dims, 21, 0.5f)}};
  ReferenceExecutor reference(**model);
  std::map<std::string, Tensor> want;
  ReferenceRunOptions ro;
  ro.on_node_done = [&](const Node& n, const std::vector<RuntimeValue>& outs) {
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      if (n.output(i) != nullptr && outs[i].is_tensor()) want[n.output(i)->name()] = outs[i].tensor;
    }
  };
  ASSERT_TRUE(reference.Run(feeds, ro).ok());
  std::vector<Value*> original = (*model)->graph->outputs();
  const char* from = std::getenv("AIC_BISECT_FROM");  // skip the first N nodes
  int64_t index = 0, skip = from != nullptr ? std::atoll(from) : 0;
  for (const auto& n : (*model)->graph->nodes()) {
    if (index++ < skip) continue;
    Value* v = n->output(0);
    if (v == nullptr || n->op_type == "Constant" || !want.count(v->name()) ||
        want[v->name()].dtype() != DType::kFloat) {
      continue;
    }
    (*model)->graph->set_outputs({v});
    CpuOptions options;
    options.fuse_post_ops = std::getenv("AIC_BISECT_NOFUSE") == nullptr;
    options.blocked_layouts = std::getenv("AIC_BISECT_PLAIN") == nullptr;
    auto plan = Compile(**model, {{feeds.begin()->first, dims}}, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    auto got = cpu::Run(**plan, feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    auto r = Close((*got)[0].tensor, want[v->name()], 1e-3, 1e-4);
    if (!r) {
      std::printf("first mismatch at %s: %s\n%s", n->Describe().c_str(), r.message(), DescribePlan(**plan).c_str());
      break;
    }
  }
  (*model)->graph->set_outputs(original);
}


}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// Conv -> depthwise Conv -> Mul(scalar) -> Add(scalar): two affine post-ops
// on a depthwise conv reading a blocked layout (PP-OCR's MobileOne blocks).
TEST(CpuExecutorTest, DepthwiseConvWithAffinePostOps) {
  for (int variant = 0; variant < 6; ++variant) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 3, 16, 16});
    Value* c0 = b.Op("Conv", {x, b.Constant("w0", RandomTensor({16, 3, 3, 3}, 1, 0.3f))},
                     {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("strides", {2, 2})});
    Value* c1 = b.Op("Conv", {c0, b.Constant("w1", RandomTensor({16, 1, 3, 3}, 2, 0.3f)), b.Constant("b1", RandomTensor({16}, 3))},
                     {Attribute::Int("group", 16), Attribute::Ints("pads", {1, 1, 1, 1})});
    Value* y = c1;
    if (variant >= 1) y = b.Op("Mul", {b.Constant("k", Tensor::FromVector<float>({1.5f}, {1})), y});
    if (variant >= 2) y = b.Op("Add", {y, b.Constant("c", Tensor::FromVector<float>({0.25f}, {1}))});
    if (variant == 3) y = b.Op("Relu", {y});
    if (variant >= 4) y = b.Op("HardSwish", {y});
    if (variant >= 4) y = b.Op("Mul", {y, b.Constant("k2", Tensor::FromVector<float>({0.75f}, {1}))});
    if (variant >= 5) y = b.Op("Add", {y, b.Constant("c2", Tensor::FromVector<float>({-0.5f}, {1}))});
    b.Output(y);
    std::unique_ptr<Model> model = b.Build(14);
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({1, 3, 16, 16}, 4)}};
    Plan* plan = nullptr;
    CpuExecutor exec(*model);
    SCOPED_TRACE(variant);
    CompareWithReference(*model, feeds, 1e-3, 1e-5, &plan, &exec);
    if (HasFailure()) {
      std::printf("%s", DescribePlan(*plan).c_str());
      break;
    }
  }
}


}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// The threads a plan takes at --threads 2 (plan.cc): a small model of few
// MACs runs on one; a batch-1 decoder whose matrix-vector products stream
// 1 MiB of weights each, and a 256-row forest (the ml ops' flops weighed
// as scalar work), take both.
int PlanThreads(const Model& model, const std::map<std::string, RuntimeValue>& feeds) {
  CpuOptions options;
  options.threads = 2;
  CpuExecutor exec(model, options);
  auto plan = exec.PlanFor(feeds);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? ThreadsOf(**plan) : 0;
}

TEST(CpuExecutorTest, ThreadsFollowTheWorkNotTheNodeCount) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  auto weight = [&](int64_t n) {
    Tensor w(DType::kFloat, {n, n});
    for (float& v : w.mutable_span<float>()) v = u(rng);
    return w;
  };
  auto chain = [&](int64_t width, int layers) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, width});
    for (int i = 0; i < layers; ++i) x = b.Op("Relu", {b.Op("MatMul", {x, b.Constant("w", weight(width))})});
    b.Output(x);
    return b.Build(17);
  };
  auto feed = [](int64_t width) {
    Tensor x(DType::kFloat, {1, width});
    for (float& v : x.mutable_span<float>()) v = 0.5f;
    return std::map<std::string, RuntimeValue>{{"x", RuntimeValue(x)}};
  };
  EXPECT_EQ(PlanThreads(*chain(64, 4), feed(64)), 1);     // 16 KiB of weights a MatMul
  EXPECT_EQ(PlanThreads(*chain(512, 8), feed(512)), 2);   // 1 MiB a MatMul, 8 MiB in all
}

// A Gather or Slice counts the bytes it reads and writes, not its whole data
// input: one position of [8, 512, 768] (12 MiB) is 24 KiB of work and runs
// on one thread; a third of the last axis of [8, 512, 2304] moves 12 MiB
// each way and takes both.
TEST(CpuExecutorTest, SelectingOpsCountWhatTheyRead) {
  auto one_op = [](const std::vector<int64_t>& in, const std::function<Value*(GraphBuilder&, Value*)>& body) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, std::vector<Dim>(in.begin(), in.end()));
    b.Output(body(b, x));
    return b.Build(17);
  };
  auto feed = [](const std::vector<int64_t>& in) {
    return std::map<std::string, RuntimeValue>{{"x", RuntimeValue(Tensor(DType::kFloat, in))}};
  };
  auto first_token = one_op({8, 512, 768}, [](GraphBuilder& b, Value* x) {
    return b.Op("Gather", {x, b.Constant("i", Tensor::FromVector<int64_t>({0}, {}))}, {Attribute::Int("axis", 1)});
  });
  EXPECT_EQ(PlanThreads(*first_token, feed({8, 512, 768})), 1);
  auto third = one_op({8, 512, 2304}, [](GraphBuilder& b, Value* x) {
    auto ints = [&](const char* n, int64_t v) { return b.Constant(n, Tensor::FromVector<int64_t>({v}, {1})); };
    return b.Op("Slice", {x, ints("s", 768), ints("e", 1536), ints("a", 2)});
  });
  EXPECT_EQ(PlanThreads(*third, feed({8, 512, 2304})), 2);
}

// A memory-bound op of a few hundred kilobytes (Tanh over [1, 128, 768]
// moves 768 KiB, about 15 µs a thread here) is worth both threads; one over
// [1, 16, 768] (96 KiB) is not.
TEST(CpuExecutorTest, MemoryBoundOpsOfAFewHundredKilobytesTakeBothThreads) {
  auto tanh = [](int64_t rows) {
    GraphBuilder b;
    b.Output(b.Op("Tanh", {b.Input("x", DType::kFloat, {1, rows, 768})}));
    return b.Build(17);
  };
  auto feed = [](int64_t rows) {
    return std::map<std::string, RuntimeValue>{{"x", RuntimeValue(Tensor(DType::kFloat, {1, rows, 768}))}};
  };
  EXPECT_EQ(PlanThreads(*tanh(128), feed(128)), 2);
  EXPECT_EQ(PlanThreads(*tanh(16), feed(16)), 1);
}


}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A MatMul's bias add (a constant row, either operand order, any rank of
// [N]) is the matmul's own bias argument; an add that is not a row (a
// per-row operand, a Sub) stays a post-op or a step of its own. Each plan
// computes what the reference does, with the bias after the activation's
// input and a head-merging Transpose written by the matmul directly.
TEST(CpuExecutorTest, MatMulTakesItsBiasAsAnArgument) {
  struct Case {
    const char* name;
    bool bias_taken;
    std::function<Value*(GraphBuilder&, Value*)> tail;  // after MatMul [2, 3, 6, 16] x [16, 8]
  };
  const std::vector<Case> cases = {
      {"bias [8], GELU, residual", true,
       [](GraphBuilder& b, Value* m) {
         Value* h = b.Op("Gelu", {b.Op("Add", {m, b.Constant("c", RandomTensor({8}, 11))})});
         return b.Op("Add", {h, b.Constant("r", RandomTensor({2, 3, 6, 8}, 12))});
       }},
      {"bias [1, 1, 1, 8] first", true,
       [](GraphBuilder& b, Value* m) { return b.Op("Add", {b.Constant("c", RandomTensor({1, 1, 1, 8}, 13)), m}); }},
      {"bias then head-merging Transpose", true,
       [](GraphBuilder& b, Value* m) {
         Value* a = b.Op("Add", {m, b.Constant("c", RandomTensor({8}, 14))});
         return b.Op("Transpose", {a}, {Attribute::Ints("perm", {0, 2, 1, 3})});
       }},
      {"per-row operand [6, 8]", false,
       [](GraphBuilder& b, Value* m) { return b.Op("Add", {m, b.Constant("c", RandomTensor({6, 8}, 15))}); }},
      {"Sub of a row", false,
       [](GraphBuilder& b, Value* m) { return b.Op("Sub", {m, b.Constant("c", RandomTensor({8}, 16))}); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 3, 6, 16});
    Value* m = b.Op("MatMul", {x, b.Constant("w", RandomTensor({16, 8}, 10, 0.25f))});
    b.Output(c.tail(b, m));
    std::unique_ptr<Model> model = b.Build(20);
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({2, 3, 6, 16}, 17)}};
    Plan* plan = nullptr;
    CpuExecutor exec(*model);
    CompareWithReference(*model, feeds, 1e-4, 1e-5, &plan, &exec);
    ASSERT_NE(plan, nullptr);
    const std::string described = DescribePlan(*plan);
    EXPECT_EQ(described.find("+ bias") != std::string::npos, c.bias_taken) << described;
    EXPECT_EQ(StatsOf(*plan).fallback_steps, 0) << described;
  }
}

// A MatMul deeper than oneDNN's five dims, [.., M, K] x [K, N] (Twins'
// windowed attention: [1, 8, 8, 7, 7, 64] x [64, 192]), runs as one GEMM of
// the rows folded together, with its bias; a residual operand of the
// output's own shape stays with it too, a broadcast one runs as a step of
// its own. It ran the reference kernel.
TEST(CpuExecutorTest, MatMulsDeeperThanFiveDimsFoldTheirRows) {
  for (bool broadcast_residual : {false, true}) {
    SCOPED_TRACE(broadcast_residual ? "broadcast residual" : "residual of the output's shape");
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 2, 2, 3, 3, 8});
    Value* m = b.Op("MatMul", {x, b.Constant("w", RandomTensor({8, 5}, 31, 0.3f))});
    Value* biased = b.Op("Add", {m, b.Constant("c", RandomTensor({5}, 32))});
    std::vector<int64_t> rd = broadcast_residual ? std::vector<int64_t>{1, 2, 1, 3, 1, 5}
                                                 : std::vector<int64_t>{1, 2, 2, 3, 3, 5};
    b.Output(b.Op("Relu", {b.Op("Add", {biased, b.Constant("r", RandomTensor(rd, 33))})}));
    std::unique_ptr<Model> model = b.Build(17);
    const std::string described = PlanMatchingTheReference(*model, {{"x", RandomTensor({1, 2, 2, 3, 3, 8}, 34)}});
    EXPECT_NE(described.find("matmul\tMatMul"), std::string::npos) << described;
  }
}

// A BatchNormalization that cannot fold into a conv (after a Concat of two,
// channel-blocked) with a residual Add after it (MixNet's blocks): oneDNN
// 2.6's binary kernel with its per-channel operand on that layout is its
// reference one (3.8 ms for [1, 80, 14, 14]); the native kernel runs the norm
// and the Add is a step of its own.
TEST(CpuExecutorTest, BatchNormBeforeAResidualAddNeverRunsAReferencePath) {
  GraphBuilder b;
  const int64_t c = 16;
  Value* x = b.Input("x", DType::kFloat, {1, c, 8, 8});
  Value* c1 = b.Op("Conv", {x, b.Constant("w1", RandomTensor({8, c, 1, 1}, 41, 0.3f))});
  Value* c2 = b.Op("Conv", {x, b.Constant("w2", RandomTensor({8, c, 1, 1}, 42, 0.3f))});
  Value* cat = b.Op("Concat", {c1, c2}, {Attribute::Int("axis", 1)});
  Value* bn = b.Op("BatchNormalization", {cat, b.Constant("s", RandomTensor({c}, 44)), b.Constant("t", RandomTensor({c}, 45)),
                                          b.Constant("m", RandomTensor({c}, 46)), b.Constant("v", RandomVariance(c, 43))});
  b.Output(b.Op("Add", {bn, x}));
  std::unique_ptr<Model> model = b.Build(17);
  const std::string described = PlanMatchingTheReference(*model, {{"x", RandomTensor({1, c, 8, 8}, 47)}});
  EXPECT_EQ(described.find("impl=ref"), std::string::npos) << described;
}

// Convs of 2 or 4 channels per group (DPN, ResNeXt, RegNet-style stems)
// run on oneDNN's direct kernel with neighbouring groups merged (weights
// block-diagonal), not on im2col + GEMM group by group: each computes the
// reference's function, with a bias, a folded BatchNormalization, more
// outputs than inputs per group, a stride, 1-D; 3 groups of 4 cannot merge
// into blocks and stay as they were.
TEST(CpuExecutorTest, ConvsOfSmallGroupsMergeIntoWholeChannelBlocks) {
  struct Case {
    const char* name;
    std::vector<int64_t> x, w;
    int64_t groups, stride;
    bool bias, bn, merges;
  };
  const std::vector<Case> cases = {
      {"4 per group, 3x3", {1, 16, 10, 10}, {16, 4, 3, 3}, 4, 1, true, false, true},
      {"2 per group, stride 2, BN", {1, 16, 9, 9}, {16, 2, 3, 3}, 8, 2, false, true, true},
      {"4 in, 8 out per group", {1, 16, 8, 8}, {32, 4, 3, 3}, 4, 1, true, false, true},
      {"1-D, 4 per group", {1, 32, 20}, {32, 4, 3}, 8, 1, true, false, true},
      {"3 groups of 4", {1, 12, 8, 8}, {12, 4, 3, 3}, 3, 1, true, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, std::vector<Dim>(c.x.begin(), c.x.end()));
    const size_t spatial = c.x.size() - 2;
    std::vector<Value*> inputs = {x, b.Constant("w", RandomTensor(c.w, 21, 0.3f))};
    if (c.bias) inputs.push_back(b.Constant("b", RandomTensor({c.w[0]}, 22)));
    Value* y = b.Op("Conv", inputs,
                    {Attribute::Int("group", c.groups), Attribute::Ints("pads", std::vector<int64_t>(2 * spatial, 1)),
                     Attribute::Ints("strides", std::vector<int64_t>(spatial, c.stride))});
    if (c.bn) {
      y = b.Op("BatchNormalization", {y, b.Constant("s", RandomTensor({c.w[0]}, 24)), b.Constant("t", RandomTensor({c.w[0]}, 25)),
                                      b.Constant("m", RandomTensor({c.w[0]}, 26)), b.Constant("v", RandomVariance(c.w[0], 23))});
    }
    b.Output(b.Op("Relu", {y}));
    std::unique_ptr<Model> model = b.Build(17);
    const std::string described = PlanMatchingTheReference(*model, {{"x", RandomTensor(c.x, 27)}}, 1e-4, 1e-4);
    if (c.merges) {
      EXPECT_EQ(described.find("gemm"), std::string::npos) << described;
    }
  }
}

// GEMM-based primitives leave binary post-ops to a step of their own, under
// both names oneDNN gives them: the matmul's "gemm:jit" and the convolution's
// "x64:gemm:jit" (SqueezeBERT's 1x1 Conv1d with its residual add ran 2.5 ms
// a step that way, 0.2 apart). Eltwise post-ops stay.
TEST(CpuExecutorTest, GemmBasedPrimitivesTakeNoBinaryPostOps) {
  PostOp relu;
  relu.alg = dnnl::algorithm::eltwise_relu;
  PostOp add;
  add.binary = true;
  add.alg = dnnl::algorithm::binary_add;
  const std::vector<PostOp> chain = {relu, add};
  EXPECT_TRUE(BinaryPostOpsRunApart(chain, 2, "gemm:jit"));
  EXPECT_TRUE(BinaryPostOpsRunApart(chain, 2, "x64:gemm:jit"));
  EXPECT_FALSE(BinaryPostOpsRunApart(chain, 1, "x64:gemm:jit"));
  EXPECT_FALSE(BinaryPostOpsRunApart(chain, 2, "jit:avx2"));
  EXPECT_FALSE(BinaryPostOpsRunApart(chain, 2, "jit_1x1:avx2"));
}


}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// An output copied out of the arena (here a view Reshape of the input) is
// written into the last run's copy once the caller has let it go, and into
// a fresh tensor while the caller still holds the last one, which keeps its
// values.
TEST(CpuExecutorTest, CopiedOutputsReuseTheLastRunsBufferOnlyWhenReleased) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
  b.Output(b.Op("Reshape", {x, b.Constant("shape", Tensor::FromVector<int64_t>({6, 4}, {2}))}));
  std::unique_ptr<Model> model = b.Build(14);
  CpuExecutor exec(*model);
  const Tensor x1 = RandomTensor({2, 3, 4}, 31), x2 = RandomTensor({2, 3, 4}, 32);
  const void* first = nullptr;
  {
    auto r1 = exec.Run({{"x", x1}});
    ASSERT_TRUE(r1.ok()) << r1.status();
    first = (*r1)[0].tensor.raw_data();
  }  // released
  auto r2 = exec.Run({{"x", x2}});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ((*r2)[0].tensor.raw_data(), first);
  EXPECT_EQ(std::memcmp((*r2)[0].tensor.raw_data(), x2.raw_data(), x2.byte_size()), 0);
  auto r3 = exec.Run({{"x", x1}});  // r2 still held
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_NE((*r3)[0].tensor.raw_data(), (*r2)[0].tensor.raw_data());
  EXPECT_EQ(std::memcmp((*r2)[0].tensor.raw_data(), x2.raw_data(), x2.byte_size()), 0);
  EXPECT_EQ(std::memcmp((*r3)[0].tensor.raw_data(), x1.raw_data(), x1.byte_size()), 0);
}


// After NonZero the row count is known only at run time, so these steps
// cannot be lowered when the plan compiles: a detector's box stage (rows of
// kept proposals through Linear layers, RoiAlign over them, Expand,
// ScatterElements, ConstantOfShape of a computed shape). They run as
// fallback steps calling fast kernels on each run's shapes
// (fast_fallback.h), not the reference kernels; two runs keep 3 and then 5
// rows, and both match the reference.
TEST(CpuExecutorTest, DataDependentShapesRunFastKernels) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {6, 16});
  Value* score = b.Input("score", DType::kFloat, {6});
  Value* boxes = b.Input("boxes", DType::kFloat, {6, 4});
  Value* features = b.Input("features", DType::kFloat, {1, 4, 10, 10});
  Value* kept = b.Op("NonZero", {b.Op("Greater", {score, b.Constant("zero", Tensor::Scalar<float>(0.f))})});
  Value* idx = b.Op("Squeeze", {kept, b.Constant("ax0", Tensor::FromVector<int64_t>({0}, {1}))});
  Value* rows = b.Op("Gather", {x, idx}, {Attribute::Int("axis", 0)});
  b.Output(b.Op("MatMul", {rows, b.Constant("w", RandomTensor({16, 8}, 61))}));
  Value* w2 = b.Constant("w2", RandomTensor({8, 16}, 62));
  Value* c2 = b.Constant("c2", RandomTensor({8}, 63));
  b.Output(b.Op("Gemm", {rows, w2, c2}, {Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f)}));
  b.Output(b.OpN("FusedLinearReLU", {rows, w2, c2}, 1, {Attribute::Int("transB", 1)}, "ai.aic")[0]);
  Value* count = b.Op("Shape", {idx});
  Value* zeros = b.Op("ConstantOfShape", {count}, {Attribute::TensorValue("value", Tensor::FromVector<int64_t>({0}, {1}))});
  Value* rois = b.Op("Mul", {b.Op("Gather", {boxes, idx}, {Attribute::Int("axis", 0)}),
                             b.Constant("ten", Tensor::Scalar<float>(10.f))});
  b.Output(b.Op("RoiAlign", {features, rois, zeros},
                {Attribute::Int("output_height", 3), Attribute::Int("output_width", 3),
                 Attribute::Int("sampling_ratio", 2), Attribute::Float("spatial_scale", 0.5f)}));
  Value* wide = b.Op("Concat", {count, b.Constant("five", Tensor::FromVector<int64_t>({5}, {1}))},
                     {Attribute::Int("axis", 0)});
  b.Output(b.Op("Expand", {b.Op("Slice", {rows, b.Constant("s0", Tensor::FromVector<int64_t>({0}, {1})),
                                          b.Constant("s1", Tensor::FromVector<int64_t>({1}, {1})),
                                          b.Constant("s2", Tensor::FromVector<int64_t>({1}, {1}))}),
                           wide}));
  Value* shape16 = b.Op("Concat", {count, b.Constant("sixteen", Tensor::FromVector<int64_t>({16}, {1}))},
                        {Attribute::Int("axis", 0)});
  Value* column = b.Op("ConstantOfShape", {shape16},
                       {Attribute::TensorValue("value", Tensor::FromVector<int64_t>({3}, {1}))});
  b.Output(b.Op("ScatterElements", {rows, column, b.Op("Neg", {rows})}, {Attribute::Int("axis", 1)}));
  std::unique_ptr<Model> model = b.Build(17);
  model->opset_imports.push_back({"ai.aic", 1});
  CpuExecutor exec(*model);
  for (const std::vector<float>& s : {std::vector<float>{1, -1, 2, -1, 3, -1}, std::vector<float>{1, 1, -1, 2, 2, 3}}) {
    SCOPED_TRACE(::testing::Message() << "kept " << std::count_if(s.begin(), s.end(), [](float v) { return v > 0; }));
    Tensor box_table = RandomTensor({6, 4}, 64);
    for (int64_t r = 0; r < 6; ++r) {  // x1 < x2, y1 < y2 inside the image
      float* p = box_table.mutable_data<float>() + r * 4;
      for (int k = 0; k < 4; ++k) p[k] = std::fabs(p[k]) * 0.4f + (k >= 2 ? 0.5f : 0.0f);
    }
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomTensor({6, 16}, 65)},
                                                 {"score", Tensor::FromVector<float>(s, {6})},
                                                 {"boxes", box_table},
                                                 {"features", RandomTensor({1, 4, 10, 10}, 66)}};
    Plan* plan = nullptr;
    CompareWithReference(*model, feeds, 1e-4, 1e-5, &plan, &exec);
    ASSERT_NE(plan, nullptr);
    const std::string described = DescribePlan(*plan);
    for (const char* kind : {"dynamic_gemm", "roi_align", "expand", "fill", "scatter_elements"}) {
      EXPECT_NE(described.find(kind), std::string::npos) << kind << " missing in\n" << described;
    }
    for (const std::string& op : plan->stats.fallback_ops) {
      for (const char* fast : {"MatMul", "Gemm", "FusedLinearReLU", "RoiAlign", "Expand", "ConstantOfShape",
                               "ScatterElements"}) {
        EXPECT_NE(op, fast) << "on the reference kernel";
      }
    }
  }
}


// 1-D convolutions oneDNN 2.6 runs as im2col + GEMM (no direct kernel for 11
// taps without AVX-512) take our direct kernel (kernels/conv1d.h): HiFiGAN's dilated
// resblocks. Output channels not a multiple of 4, lengths not a multiple of
// 24, asymmetric pads, dilation, two samples, no bias; the activation after
// it stays a step of its own.
TEST(CpuExecutorTest, WideOneDimConvsRunTheDirectKernel) {
  struct Case {
    int64_t batch, cin, cout, len, kernel, dilation, pad_l, pad_r;
    bool bias;
  };
  for (const Case& c : {Case{1, 8, 8, 1000, 11, 1, 5, 5, true}, Case{2, 5, 7, 333, 11, 3, 15, 14, false},
                        Case{1, 16, 6, 97, 11, 2, 10, 7, true}}) {
    SCOPED_TRACE(::testing::Message() << c.cin << "->" << c.cout << " x" << c.len << " k" << c.kernel << " d"
                                      << c.dilation);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {c.batch, c.cin, c.len});
    std::vector<Value*> ins = {x, b.Constant("w", RandomTensor({c.cout, c.cin, c.kernel}, 71, 0.2f))};
    if (c.bias) ins.push_back(b.Constant("b", RandomTensor({c.cout}, 72)));
    Value* y = b.Op("Conv", ins,
                    {Attribute::Ints("kernel_shape", {c.kernel}), Attribute::Ints("dilations", {c.dilation}),
                     Attribute::Ints("pads", {c.pad_l, c.pad_r})});
    b.Output(b.Op("LeakyRelu", {y}, {Attribute::Float("alpha", 0.1f)}));
    std::unique_ptr<Model> model = b.Build(17);
    const std::string described = PlanMatchingTheReference(*model, {{"x", RandomTensor({c.batch, c.cin, c.len}, 73)}});
    // With AVX-512 oneDNN has a direct kernel for these (brgconv), which
    // stays; im2col + GEMM (AVX2 only) is what must not run.
    const bool onednn_direct =
        described.find("impl=brgconv") != std::string::npos || described.find("impl=jit") != std::string::npos;
    EXPECT_TRUE(described.find("conv1d") != std::string::npos || onednn_direct) << described;
    EXPECT_EQ(described.find("gemm"), std::string::npos) << described;
  }
}

// A RoiAlign whose batch index is out of range fails with the reference
// kernel's error naming the node (the fast kernel declines it).
TEST(CpuExecutorTest, RoiAlignBadBatchIndexNamesTheNode) {
  GraphBuilder b;
  Value* features = b.Input("features", DType::kFloat, {1, 2, 6, 6});
  Value* rois = b.Input("rois", DType::kFloat, {2, 4});
  Value* batch = b.Input("batch", DType::kInt64, {2});
  b.Output(b.Op("RoiAlign", {features, rois, batch}, {Attribute::Int("output_height", 2), Attribute::Int("output_width", 2)},
                "pooled"));
  std::unique_ptr<Model> model = b.Build(17);
  CpuExecutor exec(*model);
  auto r = exec.Run({{"features", RandomTensor({1, 2, 6, 6}, 81)},
                     {"rois", Tensor::FromVector<float>({0, 0, 3, 3, 1, 1, 4, 4}, {2, 4})},
                     {"batch", Tensor::FromVector<int64_t>({0, 3}, {2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("RoiAlign 'RoiAlign_node_0'"), std::string::npos) << r.status();
  EXPECT_NE(std::string(r.status().message()).find("batch index"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace aic::cpu

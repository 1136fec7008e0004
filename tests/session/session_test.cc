// The session is the one pipeline: the rewriter runs inside it with the rules
// its backend can execute, so a model as exported compiles to the same fused
// plan as its `opt` output; feeds are checked up front against the declared
// inputs; -O0 runs the graph as loaded.
#include "session/session.h"

#include <cmath>
#include <random>
#include <string>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/fused/standard_aliases.h"
#include "tests/testing/op_test_util.h"

namespace aic::session {
namespace {

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed, float scale = 1.0f) {
  return testing::NormalTensor(dims, seed, scale);
}

Value* Scalar(GraphBuilder& b, const char* name, float v) { return b.Constant(name, Tensor::Scalar<float>(v)); }

// MatMul + bias, then GELU as exporters spell it, at `opset`.
std::unique_ptr<Model> MatMulGelu(int64_t opset) {
  GraphBuilder b;
  Value* in = b.Input("in", DType::kFloat, {4, 16});
  Value* x = b.Op("MatMul", {in, b.Constant("W", Random({16, 32}, 11, 0.3f))});
  x = b.Op("Add", {x, b.Constant("c", Random({32}, 12))});
  Value* erf = b.Op("Erf", {b.Op("Div", {x, Scalar(b, "s2", 1.4142135f)})});
  Value* a = b.Op("Add", {erf, Scalar(b, "one", 1.0f)});
  b.Output(b.Op("Mul", {b.Op("Mul", {x, a}), Scalar(b, "half", 0.5f)}));
  return b.Build(opset);
}

// LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) at opset 13.
std::unique_ptr<Model> DecomposedLayerNorm() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 8, 32});
  auto mean = [&](Value* v) { return b.Op("ReduceMean", {v}, {Attribute::Ints("axes", {-1})}); };
  Value* d = b.Op("Sub", {x, mean(x)});
  Value* var = mean(b.Op("Pow", {d, Scalar(b, "two", 2.0f)}));
  Value* norm = b.Op("Div", {d, b.Op("Sqrt", {b.Op("Add", {var, Scalar(b, "eps", 1e-5f)})})});
  Value* y = b.Op("Add", {b.Op("Mul", {norm, b.Constant("g", Random({32}, 3))}), b.Constant("beta", Random({32}, 4))});
  b.Output(y);
  return b.Build(13);
}

// Conv then HardSwish spelled x * Clip(x + 3, 0, 6) / 6, at opset 13.
std::unique_ptr<Model> ConvHardSwish() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 10, 10});
  Value* c = b.Op("Conv", {x, b.Constant("w", Random({8, 4, 3, 3}, 5, 0.3f)), b.Constant("bias", Random({8}, 6))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* clip = b.Op("Clip", {b.Op("Add", {c, Scalar(b, "three", 3.0f)}), Scalar(b, "zero", 0.0f), Scalar(b, "six", 6.0f)});
  b.Output(b.Op("Div", {b.Op("Mul", {c, clip}), Scalar(b, "six2", 6.0f)}));
  return b.Build(13);
}

double MaxDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dims(), b.dims());
  double m = 0;
  for (int64_t i = 0; i < a.num_elements() && i < b.num_elements(); ++i) {
    m = std::max(m, std::fabs(a.ElementAsDouble(i) - b.ElementAsDouble(i)));
  }
  return m;
}

// Runs `model` through a session on `device` and compares with the reference
// interpreter on the model as built; returns the session.
std::unique_ptr<Session> RunAndCompare(const Model& model, const Feeds& feeds, const std::string& device = "cpu",
                                       std::optional<int> level = std::nullopt) {
  SessionOptions o;
  o.device = device;
  o.opt_level = level;
  auto s = Session::Create(model, o);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  auto got = (*s)->Run(feeds);
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(want.ok()) << want.status();
  if (got.ok() && want.ok()) {
    for (size_t i = 0; i < got->size(); ++i) EXPECT_LE(MaxDiff((*got)[i].tensor, (*want)[i].tensor), 1e-4);
  }
  return std::move(*s);
}

int CountOps(const Model& m, const std::string& op, const std::string& domain) {
  int n = 0;
  for (const auto& node : m.graph->nodes()) n += node->op_type == op && node->domain == domain;
  return n;
}

TEST(SessionTest, ExportedGeluRunsAsOneFusedStepOnCpu) {
  auto model = MatMulGelu(13);
  Feeds feeds = {{"in", Random({4, 16}, 1)}};
  auto s = RunAndCompare(*model, feeds);
  ASSERT_NE(s, nullptr);
  // The rules fired inside the session: opset 13 has no Gelu, so the backend gets ai.aic's alias.
  EXPECT_EQ(s->optimize_stats().rule_counts.count("fuse_gelu"), 1u) << s->Describe();
  EXPECT_EQ(CountOps(s->model(), "Gelu", kAicDomain), 1);
  EXPECT_EQ(CountOps(s->model(), "Erf", ""), 0);
  auto plan = s->Prepare(feeds);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->steps, 1) << plan->text;  // MatMul with bias and GELU as post-ops
  EXPECT_EQ(plan->fallback_steps, 0) << plan->text;
  EXPECT_NE(plan->text.find("gelu"), std::string::npos) << plan->text;
}

// Every grouping exporters write, with and without a producer to fuse into,
// dividing by √2 or multiplying by 1/√2: one step for it all.
TEST(SessionTest, ExportedGeluInAnyGroupingIsOneStep) {
  for (bool producer : {true, false}) {
    for (int grouping = 0; grouping < 3; ++grouping) {
      for (bool rsqrt : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "producer=" << producer << " grouping=" << grouping << " rsqrt=" << rsqrt);
        GraphBuilder b;
        Value* in = b.Input("in", DType::kFloat, {4, 16});
        Value* x = in;
        if (producer) {
          x = b.Op("MatMul", {in, b.Constant("W", Random({16, 32}, 11, 0.3f))});
          x = b.Op("Add", {x, b.Constant("c", Random({32}, 12))});
        }
        Value* s = rsqrt ? b.Op("Mul", {x, Scalar(b, "r2", 0.70710678f)}) : b.Op("Div", {x, Scalar(b, "s2", 1.4142135f)});
        Value* a = b.Op("Add", {Scalar(b, "one", 1.0f), b.Op("Erf", {s})});
        Value* y = nullptr;
        if (grouping == 0) y = b.Op("Mul", {b.Op("Mul", {x, a}), Scalar(b, "half", 0.5f)});  // (x*A)*0.5
        if (grouping == 1) y = b.Op("Mul", {b.Op("Mul", {x, Scalar(b, "half", 0.5f)}), a});  // (x*0.5)*A
        if (grouping == 2) y = b.Op("Mul", {x, b.Op("Mul", {Scalar(b, "half", 0.5f), a})});  // x*(0.5*A)
        b.Output(y);
        auto model = b.Build(13);
        Feeds feeds = {{"in", Random({4, 16}, 13)}};
        auto session = RunAndCompare(*model, feeds);
        ASSERT_NE(session, nullptr);
        auto plan = session->Prepare(feeds);
        ASSERT_TRUE(plan.ok());
        EXPECT_EQ(plan->text.find("Erf"), std::string::npos) << plan->text;
        EXPECT_NE(plan->text.find("elu"), std::string::npos) << plan->text;  // gelu post-op or Gelu step
        EXPECT_EQ(plan->steps, 1) << plan->text;
      }
    }
  }
}

// A near miss (another scale than √2) is not GELU: its Erf stays a step of its own.
TEST(SessionTest, GeluPatternWithAnotherScaleIsLeftAlone) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {8});
  Value* s = b.Op("Div", {x, Scalar(b, "s", 1.5f)});
  Value* a = b.Op("Add", {b.Op("Erf", {s}), Scalar(b, "one", 1.0f)});
  b.Output(b.Op("Mul", {b.Op("Mul", {x, a}), Scalar(b, "half", 0.5f)}));
  auto model = b.Build(13);
  Feeds feeds = {{"x", Random({8}, 1)}};
  auto session = RunAndCompare(*model, feeds);
  ASSERT_NE(session, nullptr);
  auto plan = session->Prepare(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->text.find("Erf"), std::string::npos) << plan->text;
}

// GPT-2's "gelu_new" (the tanh form) at opset 13 runs as one gelu_tanh post-op of its MatMul.
TEST(SessionTest, TanhGeluBelowOpset20IsOneFusedStep) {
  GraphBuilder b;
  Value* in = b.Input("in", DType::kFloat, {4, 16});
  Value* x = b.Op("Add", {b.Op("MatMul", {in, b.Constant("W", Random({16, 32}, 21, 0.3f))}),
                          b.Constant("c", Random({32}, 22))});
  Value* cube = b.Op("Pow", {x, Scalar(b, "three", 3.0f)});
  Value* inner = b.Op("Add", {x, b.Op("Mul", {Scalar(b, "k1", 0.044715f), cube})});
  Value* t = b.Op("Tanh", {b.Op("Mul", {Scalar(b, "k2", 0.7978845608f), inner})});
  Value* half_x = b.Op("Mul", {Scalar(b, "half", 0.5f), x});
  b.Output(b.Op("Mul", {half_x, b.Op("Add", {Scalar(b, "one", 1.0f), t})}));
  auto model = b.Build(13);
  Feeds feeds = {{"in", Random({4, 16}, 23)}};
  auto s = RunAndCompare(*model, feeds);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->optimize_stats().rule_counts.count("fuse_gelu_tanh"), 1u) << s->Describe();
  auto plan = s->Prepare(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->steps, 1) << plan->text;
  EXPECT_NE(plan->text.find("gelu_tanh"), std::string::npos) << plan->text;
}

TEST(SessionTest, AtOpset20TheStandardGeluIsEmitted) {
  auto s = RunAndCompare(*MatMulGelu(20), {{"in", Random({4, 16}, 2)}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(CountOps(s->model(), "Gelu", ""), 1);
  EXPECT_EQ(CountOps(s->model(), "Gelu", kAicDomain), 0);
}

// Fusions reach into If bodies; the model then imports ai.aic even though
// no node of the main graph is one (the body's fused MatMul + Add + Relu had
// no kernel version to run at: "opset -1").
TEST(SessionTest, FusedOpsInsideABranchImportTheirDomain) {
  GraphBuilder b;
  Value* cond = b.Input("cond", TypeInfo::Tensor(DType::kBool, Shape::Scalar()));
  Value* x = b.Input("x", DType::kFloat, {4, 16});
  std::vector<std::shared_ptr<Graph>> branches;
  for (uint32_t seed : {21u, 31u}) {
    auto body = std::make_shared<Graph>(&b.graph());
    GraphBuilder bb(body.get());
    Value* h = bb.Op("Add", {bb.Op("MatMul", {x, bb.Constant("W", Random({16, 8}, seed))}), bb.Constant("c", Random({8}, seed + 1))});
    Value* y = bb.Op("Relu", {h});
    y->set_type(TypeInfo::Tensor(DType::kFloat, Shape::FromValues({4, 8})));
    bb.Output(y);
    branches.push_back(body);
  }
  b.Output(b.Op("If", {cond},
                {Attribute::GraphValue("then_branch", branches[0]), Attribute::GraphValue("else_branch", branches[1])}));
  std::unique_ptr<Model> m = b.Build(17);
  for (bool c : {true, false}) {
    std::unique_ptr<Session> s = RunAndCompare(*m, {{"cond", RuntimeValue(Tensor::Scalar<bool>(c))}, {"x", RuntimeValue(Random({4, 16}, 7))}});
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->model().OpsetFor("ai.aic"), 1);
  }
}

TEST(SessionTest, NoOptRunsTheGraphAsLoaded) {
  auto model = MatMulGelu(13);
  Feeds feeds = {{"in", Random({4, 16}, 3)}};
  auto s = RunAndCompare(*model, feeds, "cpu", 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->opt_level(), 0);
  EXPECT_TRUE(s->optimize_stats().rule_counts.empty());
  EXPECT_EQ(s->model().graph->num_nodes(), model->graph->num_nodes());
  auto plan = s->Prepare(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->text.find("Erf"), std::string::npos) << plan->text;  // its own step
}

TEST(SessionTest, TheReferenceOracleRunsTheModelAsWrittenByDefault) {
  auto s = RunAndCompare(*MatMulGelu(13), {{"in", Random({4, 16}, 4)}}, "reference");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->opt_level(), 0);
  EXPECT_EQ(CountOps(s->model(), "Erf", ""), 1);
  // Asked for, the reference backend runs the rewritten graph too (its kernels cover every ai.aic op).
  auto o2 = RunAndCompare(*MatMulGelu(13), {{"in", Random({4, 16}, 4)}}, "reference", 2);
  ASSERT_NE(o2, nullptr);
  EXPECT_EQ(CountOps(o2->model(), "Gelu", kAicDomain), 1);
}

TEST(SessionTest, DecomposedLayerNormBelowOpset17BecomesOneNode) {
  auto s = RunAndCompare(*DecomposedLayerNorm(), {{"x", Random({2, 8, 32}, 5)}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(CountOps(s->model(), "LayerNormalization", kAicDomain), 1) << s->Describe();
  EXPECT_EQ(s->model().graph->num_nodes(), 1u) << s->Describe();  // scale and bias folded in
  auto plan = s->Prepare({{"x", Random({2, 8, 32}, 5)}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fallback_steps, 0) << plan->text;
}

TEST(SessionTest, SpelledOutHardSwishIsAPostOpOfTheConv) {
  Feeds feeds = {{"x", Random({1, 4, 10, 10}, 6)}};
  auto s = RunAndCompare(*ConvHardSwish(), feeds);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(CountOps(s->model(), "HardSwish", kAicDomain), 1) << s->Describe();
  auto plan = s->Prepare(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->text.find("hardswish"), std::string::npos) << plan->text;
  EXPECT_EQ(plan->fallback_steps, 0) << plan->text;
}

// Conv then SiLU spelled x * Sigmoid(x) (EfficientNet), at opset 17.
TEST(SessionTest, SpelledOutSiluIsASwishPostOpOfTheConv) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 10, 10});
  Value* c = b.Op("Conv", {x, b.Constant("w", Random({8, 4, 3, 3}, 5, 0.3f)), b.Constant("bias", Random({8}, 6))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(b.Op("Mul", {c, b.Op("Sigmoid", {c})}));
  auto model = b.Build(17);
  Feeds feeds = {{"x", Random({1, 4, 10, 10}, 6)}};
  auto s = RunAndCompare(*model, feeds);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(CountOps(s->model(), "Swish", kAicDomain), 1) << s->Describe();
  auto plan = s->Prepare(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->text.find("+ [swish]"), std::string::npos) << plan->text;
  EXPECT_EQ(plan->compute_steps, 1) << plan->text;  // the conv; the rest are reorders
}

TEST(SessionTest, FeedsAreCheckedUpFrontNamingTheInput) {
  auto s = Session::Create(*MatMulGelu(13));
  ASSERT_TRUE(s.ok()) << s.status();
  auto expect_error = [&](const Feeds& feeds, const std::string& want) {
    auto r = (*s)->Run(feeds);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    EXPECT_NE(std::string(r.status().message()).find(want), std::string::npos) << r.status();
  };
  expect_error({}, "input 'in' (float[4, 16]) is not fed");
  expect_error({{"in", Random({4, 16}, 1)}, {"other", Random({1}, 1)}}, "'other' is not an input of the model");
  expect_error({{"in", Random({4, 15}, 1)}}, "input 'in': expected float[4, 16], got float[4, 15]");
  expect_error({{"in", Random({64}, 1)}}, "input 'in': expected float[4, 16], got float[64]");
  Tensor ints(DType::kInt64, {4, 16});
  expect_error({{"in", ints}}, "input 'in': expected float[4, 16], got int64[4, 16]");
  EXPECT_TRUE((*s)->Run({{"in", Random({4, 16}, 1)}}).ok());
}

TEST(SessionTest, SymbolicDimsTakeAnySizeAndGetAPlanEach) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, std::vector<Dim>{Dim::Symbol("batch"), Dim(8)});
  b.Output(b.Op("Relu", {x}));
  auto model = b.Build(13);
  auto s = Session::Create(*model);
  ASSERT_TRUE(s.ok());
  for (int64_t batch : {1, 3}) {
    auto r = (*s)->Run({{"x", Random({batch, 8}, 1)}});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].tensor.dims(), (std::vector<int64_t>{batch, 8}));
  }
  auto bad = (*s)->Run({{"x", Random({3, 9}, 1)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("expected float[batch, 8], got float[3, 9]"),
            std::string::npos)
      << bad.status();
}

TEST(SessionTest, UnknownDeviceIsRefusedNamingTheAvailableOnes) {
  SessionOptions o;
  o.device = "tpu";
  auto s = Session::Create(*MatMulGelu(13), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("device 'tpu' is not available"), std::string::npos);
  EXPECT_NE(std::string(s.status().message()).find("reference, cpu"), std::string::npos);
}

}  // namespace
}  // namespace aic::session

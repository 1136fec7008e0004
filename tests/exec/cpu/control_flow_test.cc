// Control flow on the fast CPU executor: If, Loop and Scan run as fallback
// steps whose bodies run as nested compiled plans (or on the reference
// interpreter where a plan cannot take them), reading outer values from the
// plan's slots (oneDNN results included, blocked ones through their plain
// twin), and sequences flowing between fallback steps. Every model is
// compared with the reference executor.
#include <random>

#include "exec/cpu/fallback_step.h"
#include "exec/cpu/internal.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/testing/op_test_util.h"

namespace aic::cpu {
namespace {

TypeInfo F32(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(std::move(dims))); }
TypeInfo I64Scalar() { return TypeInfo::Tensor(DType::kInt64, Shape::Scalar()); }
TypeInfo Bool() { return TypeInfo::Tensor(DType::kBool, Shape::Scalar()); }

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  for (float& v : t.mutable_span<float>()) v = dist(rng);
  return t;
}

// A body graph nested in `parent`.
struct Body {
  Body(Graph* parent, const std::string& name) : graph(std::make_shared<Graph>(parent)), b(graph.get()) {
    graph->name = name;
  }
  void Out(Value* v, TypeInfo type) {
    v->set_type(std::move(type));
    b.Output(v);
  }
  std::shared_ptr<Graph> graph;
  GraphBuilder b;
};

::testing::AssertionResult SameTensor(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    return ::testing::AssertionFailure() << DTypeName(got.dtype()) << DimsToString(got.dims()) << " vs "
                                         << DTypeName(want.dtype()) << DimsToString(want.dims());
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (a == b) continue;
    if (!(std::fabs(a - b) <= 1e-5 + 1e-4 * std::fabs(b))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs reference " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs `model` on both executors (the cpu one twice: a plan reruns cleanly)
// and returns the cpu plan's stats.
PlanStats ExpectSameAsReference(const Model& model, const std::map<std::string, RuntimeValue>& feeds,
                                std::string* plan_text = nullptr) {
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(model);
  for (int run = 0; run < 2; ++run) {
    auto got = cpu.Run(feeds);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || !want.ok()) return {};
    EXPECT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
      const RuntimeValue& g = (*got)[i];
      const RuntimeValue& w = (*want)[i];
      EXPECT_EQ(g.kind, w.kind) << "output " << i;
      if (g.is_tensor()) {
        EXPECT_TRUE(SameTensor(g.tensor, w.tensor)) << "output " << i << ", run " << run;
      }
      EXPECT_EQ(g.sequence.size(), w.sequence.size());
      for (size_t k = 0; k < g.sequence.size() && k < w.sequence.size(); ++k) {
        EXPECT_TRUE(SameTensor(g.sequence[k], w.sequence[k])) << "output " << i << " item " << k;
      }
    }
  }
  auto plan = cpu.PlanFor(feeds);
  EXPECT_TRUE(plan.ok());
  if (!plan.ok()) return {};
  if (plan_text != nullptr) *plan_text = DescribePlan(**plan);
  return StatsOf(**plan);
}

// How the bodies of the plan's control-flow steps ran, over all runs so far.
std::pair<int, int> BodyRuns(CpuExecutor& cpu, const std::map<std::string, RuntimeValue>& feeds) {
  auto plan = cpu.PlanFor(feeds);
  EXPECT_TRUE(plan.ok());
  int compiled = 0, reference = 0;
  for (const auto& step : (*plan)->steps) {
    const auto* fb = dynamic_cast<const FallbackStep*>(step.get());
    if (fb == nullptr || fb->bodies() == nullptr) continue;
    compiled += fb->bodies()->compiled_runs();
    reference += fb->bodies()->reference_runs();
  }
  return {compiled, reference};
}

int Count(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<int>(std::count(v.begin(), v.end(), s));
}

// h = MatMul(x, W) (a oneDNN step); y = cond ? h * 2 : h (the else branch
// yields the outer value itself); z = Relu(h) + y. h's only explicit consumer
// is the Relu: the branches' reads must keep it from being fused away.
std::unique_ptr<Model> IfModel() {
  GraphBuilder b;
  Value* cond = b.Input("cond", Bool());
  Value* x = b.Input("x", DType::kFloat, {2, 8});
  Value* h = b.Op("MatMul", {x, b.Constant("W", Random({8, 4}, 1))}, {}, "h");
  Body then_b(&b.graph(), "then");
  then_b.Out(then_b.b.Op("Mul", {h, then_b.b.Constant("two", Tensor::FromVector<float>({2}, {1}))}),
             F32({Dim(2), Dim(4)}));
  Body else_b(&b.graph(), "else");
  else_b.Out(else_b.b.Op("Identity", {h}), F32({Dim(2), Dim(4)}));
  Value* y = b.Op("If", {cond},
                  {Attribute::GraphValue("then_branch", then_b.graph),
                   Attribute::GraphValue("else_branch", else_b.graph)},
                  "y");
  Value* z = b.Op("Add", {b.Op("Relu", {h}), y}, {}, "z");
  b.Output(y);
  b.Output(z);
  return b.Build(13);
}

TEST(CpuControlFlowTest, IfRunsBothBranchesLikeTheReference) {
  auto model = IfModel();
  for (bool c : {true, false}) {
    SCOPED_TRACE(c ? "then" : "else");
    PlanStats st = ExpectSameAsReference(*model, {{"cond", Tensor::Scalar<bool>(c)}, {"x", Random({2, 8}, 7)}});
    EXPECT_EQ(Count(st.fallback_ops, "If"), 1);
    EXPECT_EQ(st.fallback_steps, 1);  // the MatMul, Relu and Add stay on oneDNN
    EXPECT_GE(st.dnnl_steps, 2);
  }
}

// A branch that yields an outer value itself hands back the arena bytes of
// that value; they are free for reuse once the If has run (h dies there), so
// the result must not alias them: t, computed after the If, may take them.
TEST(CpuControlFlowTest, BranchYieldingAnOuterValueKeepsItsBytes) {
  GraphBuilder b;
  Value* cond = b.Input("cond", Bool());
  Value* x = b.Input("x", DType::kFloat, {2, 8});
  Value* h = b.Op("MatMul", {x, b.Constant("W", Random({8, 4}, 1))}, {}, "h");
  Body then_b(&b.graph(), "then");
  then_b.Out(then_b.b.Op("Identity", {h}), F32({Dim(2), Dim(4)}));
  Body else_b(&b.graph(), "else");
  else_b.Out(else_b.b.Op("Neg", {h}), F32({Dim(2), Dim(4)}));
  Value* y = b.Op("If", {cond},
                  {Attribute::GraphValue("then_branch", then_b.graph),
                   Attribute::GraphValue("else_branch", else_b.graph)},
                  "y");
  Value* t = b.Op("Tanh", {b.Op("MatMul", {x, b.Constant("W2", Random({8, 4}, 2))})}, {}, "t");
  b.Output(y);
  b.Output(t);
  auto model = b.Build(13);
  ExpectSameAsReference(*model, {{"cond", Tensor::Scalar<bool>(true)}, {"x", Random({2, 8}, 7)}});
}

// An If's result goes to the caller without a copy (the branch's own
// output buffer), and each run's result is a buffer of its own while the
// caller holds the last one; a branch yielding the graph input itself gives
// the caller a copy, never the input's own bytes.
TEST(CpuControlFlowTest, IfResultsAreHandedOverAndStayTheCallers) {
  GraphBuilder b;
  Value* cond = b.Input("cond", Bool());
  Value* x = b.Input("x", DType::kFloat, {64, 64});
  Body then_b(&b.graph(), "then");
  then_b.Out(then_b.b.Op("Identity", {x}), F32({Dim(64), Dim(64)}));
  Body else_b(&b.graph(), "else");
  else_b.Out(else_b.b.Op("Relu", {x}), F32({Dim(64), Dim(64)}));
  b.Output(b.Op("If", {cond},
                {Attribute::GraphValue("then_branch", then_b.graph),
                 Attribute::GraphValue("else_branch", else_b.graph)},
                "y"));
  auto model = b.Build(13);
  CpuExecutor cpu(*model);
  Tensor x1 = Random({64, 64}, 3), x2 = Random({64, 64}, 4);
  auto first = cpu.Run({{"cond", Tensor::Scalar<bool>(false)}, {"x", x1}});
  ASSERT_TRUE(first.ok()) << first.status();
  Tensor held = (*first)[0].tensor;
  Tensor want = held.Clone();
  for (int run = 0; run < 3; ++run) {
    auto again = cpu.Run({{"cond", Tensor::Scalar<bool>(false)}, {"x", x2}});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_NE((*again)[0].tensor.raw_data(), held.raw_data());
  }
  EXPECT_EQ(std::memcmp(held.raw_data(), want.raw_data(), want.byte_size()), 0);  // untouched by later runs
  auto identity = cpu.Run({{"cond", Tensor::Scalar<bool>(true)}, {"x", x1}});
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_NE((*identity)[0].tensor.raw_data(), x1.raw_data());
  EXPECT_EQ(std::memcmp((*identity)[0].tensor.raw_data(), x1.raw_data(), x1.byte_size()), 0);
}

// o = MatMul(x, W) + Relu (oneDNN); Loop M times carrying s (float[1,4]) with
// s' = s * 0.5 + o (o read from the outer scope) and scanning s'.
std::unique_ptr<Model> LoopModel() {
  GraphBuilder b;
  Value* m = b.Input("M", I64Scalar());
  Value* x = b.Input("x", DType::kFloat, {1, 8});
  Value* s0 = b.Input("s0", DType::kFloat, {1, 4});
  Value* o = b.Op("Relu", {b.Op("MatMul", {x, b.Constant("W", Random({8, 4}, 2))})}, {}, "o");
  Body body(&b.graph(), "loop_body");
  body.b.Input("i", I64Scalar());
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("s_in", F32({Dim(1), Dim(4)}));
  body.Out(body.b.Op("Identity", {c}), Bool());
  Value* half = body.b.Constant("half", Tensor::FromVector<float>({0.5f}, {1}));
  Value* next = body.b.Op("Add", {body.b.Op("Mul", {s, half}), o});
  body.Out(next, F32({Dim(1), Dim(4)}));
  body.Out(body.b.Op("Identity", {next}), F32({Dim(1), Dim(4)}));
  std::vector<Value*> outs = b.OpN("Loop", {m, nullptr, s0}, 2, {Attribute::GraphValue("body", body.graph)});
  b.Output(outs[0]);
  b.Output(outs[1]);
  b.Output(b.Op("Sigmoid", {outs[0]}));  // a oneDNN step after the loop
  return b.Build(13);
}

TEST(CpuControlFlowTest, LoopCarriesStateAndScansLikeTheReference) {
  auto model = LoopModel();
  for (int64_t trips : {0, 1, 5}) {
    SCOPED_TRACE(trips);
    PlanStats st = ExpectSameAsReference(
        *model, {{"M", Tensor::Scalar<int64_t>(trips)}, {"x", Random({1, 8}, 3)}, {"s0", Random({1, 4}, 4)}});
    EXPECT_EQ(Count(st.fallback_ops, "Loop"), 1);
    EXPECT_EQ(st.fallback_steps, 1);
  }
  // The body (tensors only) ran as a compiled plan.
  std::map<std::string, RuntimeValue> feeds = {
      {"M", Tensor::Scalar<int64_t>(3)}, {"x", Random({1, 8}, 3)}, {"s0", Random({1, 4}, 4)}};
  CpuExecutor cpu(*model);
  ASSERT_TRUE(cpu.Run(feeds).ok());
  EXPECT_EQ(BodyRuns(cpu, feeds), std::make_pair(3, 0));
}

// Running sum over the rows of t = Tanh(x) (oneDNN), each step adding the
// outer bias o as well; the state and the per-row sums come out.
TEST(CpuControlFlowTest, ScanLikeTheReference) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {5, 3});
  Value* s0 = b.Input("s0", DType::kFloat, {3});
  Value* t = b.Op("Tanh", {x});
  Value* o = b.Op("Abs", {b.Input("bias", DType::kFloat, {3})}, {}, "o");
  Body body(&b.graph(), "scan_body");
  Value* s = body.b.Input("s_in", F32({Dim(3)}));
  Value* row = body.b.Input("row", F32({Dim(3)}));
  Value* sum = body.b.Op("Add", {body.b.Op("Add", {s, row}), o});
  body.Out(sum, F32({Dim(3)}));
  body.Out(body.b.Op("Identity", {sum}), F32({Dim(3)}));
  std::vector<Value*> outs = b.OpN("Scan", {s0, t}, 2,
                                   {Attribute::Int("num_scan_inputs", 1), Attribute::GraphValue("body", body.graph)});
  b.Output(outs[0]);
  b.Output(outs[1]);
  auto model = b.Build(16);
  PlanStats st =
      ExpectSameAsReference(*model, {{"x", Random({5, 3}, 5)}, {"s0", Random({3}, 6)}, {"bias", Random({3}, 8)}});
  EXPECT_EQ(Count(st.fallback_ops, "Scan"), 1);
}

// A body reading a Conv output that oneDNN keeps blocked (it also feeds a
// second Conv): the step reads the value's plain twin made by a reorder.
TEST(CpuControlFlowTest, BodyReadsABlockedOneDnnValue) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 16, 8, 8});
  Value* cond = b.Input("cond", Bool());
  Attribute pads = Attribute::Ints("pads", {1, 1, 1, 1});
  Value* c1 = b.Op("Conv", {x, b.Constant("w1", Random({16, 16, 3, 3}, 9))}, {pads}, "c1");
  Value* c2 = b.Op("Conv", {c1, b.Constant("w2", Random({16, 16, 3, 3}, 10))}, {pads}, "c2");
  TypeInfo out_type = F32({Dim(1), Dim(16), Dim(8), Dim(8)});
  Body then_b(&b.graph(), "then");
  then_b.Out(then_b.b.Op("Sigmoid", {c1}), out_type);
  Body else_b(&b.graph(), "else");
  else_b.Out(else_b.b.Op("Neg", {c1}), out_type);
  Value* y = b.Op("If", {cond},
                  {Attribute::GraphValue("then_branch", then_b.graph),
                   Attribute::GraphValue("else_branch", else_b.graph)});
  b.Output(b.Op("Add", {c2, y}));
  auto model = b.Build(13);
  for (bool c : {true, false}) {
    std::string text;
    PlanStats st =
        ExpectSameAsReference(*model, {{"x", Random({1, 16, 8, 8}, 11)}, {"cond", Tensor::Scalar<bool>(c)}}, &text);
    EXPECT_EQ(st.fallback_steps, 1);
    // Whether oneDNN picks a blocked layout depends on the machine's ISA;
    // where it does, c1 must reach the If through a reorder.
    if (text.find("c1[1, 16, 8, 8] (blocked)") != std::string::npos) {
      EXPECT_GE(st.reorder_steps, 1) << text;
    }
  }
}

// A sequence built by a Loop flows into another fallback step and out of
// the graph; a sequence-typed graph input passes through.
TEST(CpuControlFlowTest, SequencesFlowBetweenFallbackSteps) {
  GraphBuilder b;
  Value* m = b.Input("M", I64Scalar());
  Value* x = b.Input("x", DType::kFloat, {2, 3});
  Value* seq_in = b.Input("seq_in", TypeInfo::SequenceOf(F32({Dim(2), Dim(3)})));
  Value* sx = b.Op("Exp", {x}, {}, "sx");
  Value* seq0 = b.Op("SequenceEmpty", {}, {Attribute::Int("dtype", 1)});
  Body body(&b.graph(), "body");
  Value* i = body.b.Input("i", I64Scalar());
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("seq", TypeInfo::SequenceOf(F32({Dim(2), Dim(3)})));
  body.Out(body.b.Op("Identity", {c}), Bool());
  Value* scaled = body.b.Op("Mul", {sx, body.b.Op("Cast", {i}, {Attribute::Int("to", 1)})});
  body.Out(body.b.Op("SequenceInsert", {s, scaled}), TypeInfo::SequenceOf(F32({Dim(2), Dim(3)})));
  Value* seq = b.Op("Loop", {m, nullptr, seq0}, {Attribute::GraphValue("body", body.graph)}, "seq");
  b.Output(seq);
  b.Output(b.Op("ConcatFromSequence", {seq}, {Attribute::Int("axis", 0)}));
  b.Output(b.Op("SequenceLength", {seq_in}));
  auto model = b.Build(13);
  RuntimeValue fed = RuntimeValue::Sequence({Random({2, 3}, 12), Random({2, 3}, 13)}, DType::kFloat);
  PlanStats st = ExpectSameAsReference(
      *model, {{"M", Tensor::Scalar<int64_t>(3)}, {"x", Random({2, 3}, 14)}, {"seq_in", fed}});
  EXPECT_EQ(Count(st.fallback_ops, "Loop"), 1);
  CpuExecutor cpu(*model);
  std::map<std::string, RuntimeValue> feeds = {{"M", Tensor::Scalar<int64_t>(3)}, {"x", Random({2, 3}, 14)}, {"seq_in", fed}};
  ASSERT_TRUE(cpu.Run(feeds).ok());
  EXPECT_EQ(BodyRuns(cpu, feeds), std::make_pair(0, 3));  // a carried sequence: no plan takes it
}

// An optional input, fed a tensor or nothing, read by a reference kernel and
// handed straight back as a graph output.
TEST(CpuControlFlowTest, OptionalInputsPassThrough) {
  GraphBuilder b;
  Value* opt = b.Input("opt", TypeInfo::OptionalOf(F32({Dim(2)})));
  b.Output(b.Op("OptionalHasElement", {opt}));
  b.Output(opt);
  auto model = b.Build(18);
  ExpectSameAsReference(*model, {{"opt", Tensor::FromVector<float>({1, 2}, {2})}});
  ExpectSameAsReference(*model, {{"opt", RuntimeValue::None()}});
}

// A call of a model-local function (a body of another kind) between two
// oneDNN steps: f(a) = LeakyRelu(a, alpha=@alpha), called with alpha=0.5.
TEST(CpuControlFlowTest, ModelLocalFunctionCallsRun) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3});
  auto outs = b.OpN("MyLeaky", {b.Op("Tanh", {x})}, 1, {Attribute::Float("alpha", 0.5f)}, "local");
  b.Output(b.Op("Exp", {outs[0]}));
  auto model = b.Build(17);
  model->opset_imports.push_back({"local", 1});
  model->functions.push_back(testing::LocalLeakyReluFunction());
  PlanStats st = ExpectSameAsReference(*model, {{"x", Random({2, 3}, 20)}});
  EXPECT_EQ(Count(st.fallback_ops, "MyLeaky"), 1);
}

// An If nested in a Loop body reads a value of the main graph two scopes up.
TEST(CpuControlFlowTest, NestedBodiesReadTheMainGraph) {
  GraphBuilder b;
  Value* m = b.Input("M", I64Scalar());
  Value* x = b.Input("x", DType::kFloat, {4});
  Value* o = b.Op("Sqrt", {b.Op("Abs", {x})}, {}, "o");
  Body body(&b.graph(), "body");
  Value* i = body.b.Input("i", I64Scalar());
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("s", F32({Dim(4)}));
  body.Out(body.b.Op("Identity", {c}), Bool());
  Value* odd = body.b.Op("Cast", {body.b.Op("Mod", {i, body.b.Constant("two", Tensor::Scalar<int64_t>(2))})},
                         {Attribute::Int("to", 9)});
  Body then_b(body.graph.get(), "then");
  then_b.Out(then_b.b.Op("Add", {s, o}), F32({Dim(4)}));
  Body else_b(body.graph.get(), "else");
  else_b.Out(else_b.b.Op("Sub", {s, o}), F32({Dim(4)}));
  Value* next = body.b.Op("If", {odd},
                          {Attribute::GraphValue("then_branch", then_b.graph),
                           Attribute::GraphValue("else_branch", else_b.graph)});
  body.Out(next, F32({Dim(4)}));
  b.Output(b.Op("Loop", {m, nullptr, x}, {Attribute::GraphValue("body", body.graph)}));
  auto model = b.Build(13);
  ExpectSameAsReference(*model, {{"M", Tensor::Scalar<int64_t>(5)}, {"x", Random({4}, 15)}});
}

// A Loop body doing real work on weights from the outer scope: it runs as a
// compiled plan (the outer initializer becomes the nested plan's constant,
// packed for oneDNN), once per iteration, and agrees with the reference.
TEST(CpuControlFlowTest, LoopBodyRunsAsACompiledPlan) {
  GraphBuilder b;
  Value* m = b.Input("M", I64Scalar());
  Value* s0 = b.Input("s0", DType::kFloat, {4, 32});
  Value* w = b.Constant("W", Random({32, 32}, 16));
  Value* o = b.Op("Sigmoid", {b.Input("bias", DType::kFloat, {1, 32})}, {}, "o");
  Body body(&b.graph(), "body");
  body.b.Input("i", I64Scalar());
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("s", F32({Dim(4), Dim(32)}));
  body.Out(body.b.Op("Identity", {c}), Bool());
  body.Out(body.b.Op("Add", {body.b.Op("Tanh", {body.b.Op("MatMul", {s, w})}), o}), F32({Dim(4), Dim(32)}));
  b.Output(b.Op("Loop", {m, nullptr, s0}, {Attribute::GraphValue("body", body.graph)}));
  auto model = b.Build(13);
  std::map<std::string, RuntimeValue> feeds = {
      {"M", Tensor::Scalar<int64_t>(6)}, {"s0", Random({4, 32}, 17)}, {"bias", Random({1, 32}, 18)}};
  ExpectSameAsReference(*model, feeds);
  CpuExecutor cpu(*model);
  ASSERT_TRUE(cpu.Run(feeds).ok());
  EXPECT_EQ(BodyRuns(cpu, feeds), std::make_pair(6, 0));
}

// A carried value that grows every iteration gives the body a new signature
// each time: past a few, the body runs on the reference interpreter.
TEST(CpuControlFlowTest, GrowingLoopStateFallsBackToTheInterpreter) {
  GraphBuilder b;
  Value* m = b.Input("M", I64Scalar());
  Value* s0 = b.Input("s0", DType::kFloat, {1, 3});
  Body body(&b.graph(), "body");
  body.b.Input("i", I64Scalar());
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("s", F32({Dim::Symbol("n"), Dim(3)}));
  body.Out(body.b.Op("Identity", {c}), Bool());
  Value* grown = body.b.Op("Concat", {s, body.b.Op("Neg", {s})}, {Attribute::Int("axis", 0)});
  body.Out(grown, F32({Dim::Symbol("m"), Dim(3)}));
  b.Output(b.Op("Loop", {m, nullptr, s0}, {Attribute::GraphValue("body", body.graph)}));
  auto model = b.Build(13);
  std::map<std::string, RuntimeValue> feeds = {{"M", Tensor::Scalar<int64_t>(7)}, {"s0", Random({1, 3}, 19)}};
  ExpectSameAsReference(*model, feeds);
  CpuExecutor cpu(*model);
  ASSERT_TRUE(cpu.Run(feeds).ok());
  auto [compiled, reference] = BodyRuns(cpu, feeds);
  EXPECT_EQ(compiled, 4);
  EXPECT_EQ(reference, 3);
}

}  // namespace
}  // namespace aic::cpu

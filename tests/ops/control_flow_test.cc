#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"

namespace aic {
namespace {

TypeInfo F32(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(std::move(dims))); }
TypeInfo I64(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kInt64, Shape(std::move(dims))); }
TypeInfo Bool() { return TypeInfo::Tensor(DType::kBool, Shape::Scalar()); }

// A body graph nested in `parent`, built with its own GraphBuilder.
struct Body {
  explicit Body(Graph* parent, const std::string& name)
      : graph(std::make_shared<Graph>(parent)), b(graph.get()) {
    graph->name = name;
  }
  // Declares an output with its type, as ONNX files do.
  void Out(Value* v, TypeInfo type) {
    v->set_type(std::move(type));
    b.Output(v);
  }
  std::shared_ptr<Graph> graph;
  GraphBuilder b;
};

absl::StatusOr<std::vector<RuntimeValue>> RunModel(const Model& m,
                                              const std::map<std::string, RuntimeValue>& feeds) {
  ReferenceExecutor exec(m);
  return exec.Run(feeds);
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.ElementAsDouble(i));
  return v;
}

// Traits and cost of `node` after inference, as the analyzer sees them.
std::pair<Traits, Cost> StaticHooks(const Model& m, const Node& node) {
  const int64_t opset = m.OpsetFor("");
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (const Value* v : node.inputs()) {
    types.push_back(v ? v->type() : TypeInfo());
    consts.push_back(v && v->is_initializer() ? v->initializer() : nullptr);
  }
  OpContext ctx(node, opset, types, consts, nullptr);
  const OpDef* def = OpRegistry::Global().Find("", node.op_type, opset);
  EXPECT_TRUE(def->infer(ctx).ok());
  return {def->traits(ctx), def->cost(ctx)};
}

// ---- If -------------------------------------------------------------------

// y = cond ? x + 10 : x, both branches reading x from the enclosing graph.
std::unique_ptr<Model> IfModel(TypeInfo x_type, int64_t opset = 13) {
  GraphBuilder b;
  Value* cond = b.Input("cond", Bool());
  Value* x = b.Input("x", x_type);
  Body then_b(&b.graph(), "then");
  Value* ten = then_b.b.Constant("ten", Tensor::FromVector<float>({10}, {1}));
  then_b.Out(then_b.b.Op("Add", {x, ten}), x_type);
  Body else_b(&b.graph(), "else");
  else_b.Out(else_b.b.Op("Identity", {x}), x_type);
  Value* y = b.Op("If", {cond},
                  {Attribute::GraphValue("then_branch", then_b.graph),
                   Attribute::GraphValue("else_branch", else_b.graph)},
                  "y");
  b.Output(y);
  return b.Build(opset);
}

TEST(ControlFlowTest, IfRunsTheTakenBranchWithOuterValues) {
  auto m = IfModel(F32({Dim(2)}));
  Tensor x = Tensor::FromVector<float>({1, 2}, {2});
  auto yes = RunModel(*m, {{"cond", Tensor::Scalar<bool>(true)}, {"x", x}});
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_EQ(Values((*yes)[0].tensor), (std::vector<double>{11, 12}));
  auto no = RunModel(*m, {{"cond", Tensor::Scalar<bool>(false)}, {"x", x}});
  ASSERT_TRUE(no.ok()) << no.status();
  EXPECT_EQ(Values((*no)[0].tensor), (std::vector<double>{1, 2}));
}

TEST(ControlFlowTest, IfCondMustHoldOneElement) {
  auto m = IfModel(F32({Dim(2)}));
  auto r = RunModel(*m, {{"cond", Tensor::FromVector<bool>({true, false}, {2})},
                    {"x", Tensor::FromVector<float>({1, 2}, {2})}});
  EXPECT_FALSE(r.ok());
}

TEST(ControlFlowTest, IfInferKeepsSymbolsAndMergesBranches) {
  auto m = IfModel(F32({Dim::Symbol("batch"), Dim(3)}));
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(m->graph->outputs()[0]->type().ToString(), "float[batch, 3]");

  // Branches of different widths: the dim becomes a fresh symbol.
  GraphBuilder b;
  Value* cond = b.Input("cond", Bool());
  Body t(&b.graph(), "then");
  t.b.Output(t.b.Constant("a", Tensor(DType::kFloat, {2, 3})));
  Body e(&b.graph(), "else");
  e.b.Output(e.b.Constant("b", Tensor(DType::kFloat, {2, 4})));
  Value* y = b.Op("If", {cond},
                  {Attribute::GraphValue("then_branch", t.graph),
                   Attribute::GraphValue("else_branch", e.graph)});
  b.Output(y);
  auto merged = b.Build(13);
  ASSERT_TRUE(InferShapes(*merged, {.best_effort = false}).ok());
  const Shape& s = y->shape();
  ASSERT_EQ(s.rank(), 2);
  EXPECT_EQ(s[0], Dim(2));
  EXPECT_TRUE(s[1].is_symbol());
}

TEST(ControlFlowTest, IfRejectsNonBoolCondAndMismatchedBranches) {
  GraphBuilder b;
  Value* cond = b.Input("cond", TypeInfo::Tensor(DType::kInt32, Shape::Scalar()));
  Body t(&b.graph(), "then");
  t.b.Output(t.b.Constant("a", Tensor(DType::kFloat, {1})));
  Body e(&b.graph(), "else");
  e.b.Output(e.b.Constant("b", Tensor(DType::kInt64, {1})));
  b.Output(b.Op("If", {cond},
                {Attribute::GraphValue("then_branch", t.graph),
                 Attribute::GraphValue("else_branch", e.graph)}));
  auto m = b.Build(13);
  absl::Status s = InferShapes(*m, {.best_effort = false});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("If"), std::string::npos);
}

TEST(ControlFlowTest, IfTraits) {
  auto m = IfModel(F32({Dim(2)}));
  auto [traits, cost] = StaticHooks(*m, *m->graph->nodes()[0]);
  EXPECT_EQ(traits.semantic_name, "If");
  EXPECT_EQ(traits.linearity, Linearity::kUnknown);
  EXPECT_EQ(traits.meaning, "y = cond ? then_branch (1 nodes) : else_branch (1 nodes)");
  EXPECT_TRUE(traits.PropertyWords().empty());
  EXPECT_TRUE(cost.known);
  EXPECT_EQ(cost.bytes_read, 1);  // cond; what the branches read is theirs to count
  EXPECT_EQ(cost.bytes_written, 8);
}

// ---- Loop -----------------------------------------------------------------

struct LoopSpec {
  bool with_m = true;
  bool with_cond = true;
  bool body_stops_at_2 = false;  // body cond_out = (i < 2)
};

// Carries y (int64 scalar): y += i; scans y after each step.
std::unique_ptr<Model> LoopModel(const LoopSpec& spec) {
  GraphBuilder b;
  Value* m = spec.with_m ? b.Input("M", I64({})) : nullptr;
  Value* cond = spec.with_cond ? b.Input("cond", Bool()) : nullptr;
  Value* y0 = b.Input("y0", I64({}));
  Body body(&b.graph(), "loop_body");
  Value* i = body.b.Input("i", I64({}));
  Value* c = body.b.Input("cond_in", Bool());
  Value* y = body.b.Input("y_in", I64({}));
  Value* cond_out = spec.body_stops_at_2
                        ? body.b.Op("Less", {i, body.b.Constant("two", Tensor::Scalar<int64_t>(2))})
                        : body.b.Op("Identity", {c});
  body.Out(cond_out, Bool());
  Value* y_out = body.b.Op("Add", {y, i});
  body.Out(y_out, I64({}));
  body.Out(body.b.Op("Identity", {y_out}), I64({}));
  std::vector<Value*> outs =
      b.OpN("Loop", {m, cond, y0}, 2, {Attribute::GraphValue("body", body.graph)});
  b.Output(outs[0]);
  b.Output(outs[1]);
  return b.Build(13);
}

TEST(ControlFlowTest, LoopForCountCarriesAndScans) {
  auto m = LoopModel({.with_cond = false});
  auto r = RunModel(*m, {{"M", Tensor::Scalar<int64_t>(4)}, {"y0", Tensor::Scalar<int64_t>(10)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0].tensor), (std::vector<double>{16}));
  EXPECT_EQ((*r)[1].tensor.dims(), (std::vector<int64_t>{4}));
  EXPECT_EQ(Values((*r)[1].tensor), (std::vector<double>{10, 11, 13, 16}));
}

TEST(ControlFlowTest, LoopWhileStopsOnBodyCond) {
  auto m = LoopModel({.with_m = false, .body_stops_at_2 = true});
  auto r = RunModel(*m, {{"cond", Tensor::Scalar<bool>(true)}, {"y0", Tensor::Scalar<int64_t>(0)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[1].tensor), (std::vector<double>{0, 1, 3}));
}

TEST(ControlFlowTest, LoopWithBothStopsAtTheFirstLimit) {
  auto m = LoopModel({.body_stops_at_2 = true});
  auto r = RunModel(*m, {{"M", Tensor::Scalar<int64_t>(2)},
                    {"cond", Tensor::Scalar<bool>(true)},
                    {"y0", Tensor::Scalar<int64_t>(0)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[1].tensor), (std::vector<double>{0, 1}));
}

TEST(ControlFlowTest, LoopWithNoIterationsGivesInitialValuesAndEmptyScans) {
  auto m = LoopModel({});
  auto zero_m = RunModel(*m, {{"M", Tensor::Scalar<int64_t>(0)},
                         {"cond", Tensor::Scalar<bool>(true)},
                         {"y0", Tensor::Scalar<int64_t>(7)}});
  ASSERT_TRUE(zero_m.ok()) << zero_m.status();
  EXPECT_EQ(Values((*zero_m)[0].tensor), (std::vector<double>{7}));
  EXPECT_EQ((*zero_m)[1].tensor.dtype(), DType::kInt64);
  EXPECT_EQ((*zero_m)[1].tensor.dims(), (std::vector<int64_t>{0}));
  auto false_cond = RunModel(*m, {{"M", Tensor::Scalar<int64_t>(5)},
                             {"cond", Tensor::Scalar<bool>(false)},
                             {"y0", Tensor::Scalar<int64_t>(7)}});
  ASSERT_TRUE(false_cond.ok()) << false_cond.status();
  EXPECT_EQ((*false_cond)[1].tensor.num_elements(), 0);
}

TEST(ControlFlowTest, LoopCarriesASequence) {
  GraphBuilder b;
  Value* m = b.Input("M", I64({}));
  Value* seq0 = b.Op("SequenceEmpty", {}, {Attribute::Int("dtype", 7)});
  Body body(&b.graph(), "body");
  Value* i = body.b.Input("i", I64({}));
  Value* c = body.b.Input("cond_in", Bool());
  Value* s = body.b.Input("seq_in", TypeInfo::SequenceOf(I64({})));
  body.Out(body.b.Op("Identity", {c}), Bool());
  body.Out(body.b.Op("SequenceInsert", {s, i}), TypeInfo::SequenceOf(I64({})));
  Value* out = b.Op("Loop", {m, nullptr, seq0}, {Attribute::GraphValue("body", body.graph)});
  b.Output(out);
  auto model = b.Build(13);
  auto r = RunModel(*model, {{"M", Tensor::Scalar<int64_t>(3)}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE((*r)[0].is_sequence());
  ASSERT_EQ((*r)[0].sequence.size(), 3u);
  EXPECT_EQ((*r)[0].sequence[2].data<int64_t>()[0], 2);
  ASSERT_TRUE(InferShapes(*model, {.best_effort = false}).ok());
  // The initial (empty) sequence says nothing of rank; the body's says scalar.
  ASSERT_EQ(out->type().kind, TypeInfo::Kind::kSequence);
  EXPECT_EQ(out->type().element->dtype, DType::kInt64);
  EXPECT_FALSE(out->type().element->shape.has_rank());
}

TEST(ControlFlowTest, LoopInferScanRowsFromConstantTripCount) {
  auto m = LoopModel({.with_cond = false});
  Graph& g = *m->graph;
  // Make M a constant 6: the scan output has exactly 6 rows.
  g.SetInitializer(g.inputs()[0], Tensor::Scalar<int64_t>(6));
  g.set_inputs({g.inputs()[1]});
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "int64[]");
  EXPECT_EQ(g.outputs()[1]->type().ToString(), "int64[6]");
  auto [traits, cost] = StaticHooks(*m, *g.nodes()[0]);
  EXPECT_EQ(traits.semantic_name, "Loop");
  EXPECT_NE(traits.meaning.find("up to 6 times"), std::string::npos);
  EXPECT_TRUE(cost.known);

  auto with_cond = LoopModel({});
  ASSERT_TRUE(InferShapes(*with_cond, {.best_effort = false}).ok());
  const Shape& rows = with_cond->graph->outputs()[1]->shape();
  ASSERT_EQ(rows.rank(), 1);
  EXPECT_TRUE(rows[0].is_symbol());
  auto [t2, c2] = StaticHooks(*with_cond, *with_cond->graph->nodes()[0]);
  EXPECT_FALSE(c2.known);
}

TEST(ControlFlowTest, LoopBodyArityMismatchIsAnError) {
  GraphBuilder b;
  Value* m = b.Input("M", I64({}));
  Value* y0 = b.Input("y0", I64({}));
  Body body(&b.graph(), "body");
  body.b.Input("i", I64({}));
  Value* c = body.b.Input("cond_in", Bool());
  body.Out(body.b.Op("Identity", {c}), Bool());  // no carried value in or out
  b.Output(b.Op("Loop", {m, nullptr, y0}, {Attribute::GraphValue("body", body.graph)}));
  auto model = b.Build(13);
  EXPECT_FALSE(InferShapes(*model, {.best_effort = false}).ok());
  auto r = RunModel(*model, {{"M", Tensor::Scalar<int64_t>(1)}, {"y0", Tensor::Scalar<int64_t>(0)}});
  EXPECT_FALSE(r.ok());
}

// ---- Scan -----------------------------------------------------------------

// Running sum over the scan axis: state s (float[2]), scan input x.
std::unique_ptr<Model> ScanSumModel(int64_t opset, TypeInfo x_type, std::vector<Attribute> attrs,
                                    bool with_lens = false) {
  GraphBuilder b;
  Value* lens = with_lens ? b.Input("lens", TypeInfo::Tensor(DType::kInt32, Shape({Dim(2)})))
                          : nullptr;
  Value* s0 = b.Input("s0", opset < 9 ? F32({Dim(2), Dim(2)}) : F32({Dim(2)}));
  Value* x = b.Input("x", std::move(x_type));
  Body body(&b.graph(), "scan_body");
  Value* s = body.b.Input("s_in", F32({Dim(2)}));
  Value* step = body.b.Input("x_t", F32({Dim(2)}));
  Value* sum = body.b.Op("Add", {s, step});
  body.Out(sum, F32({Dim(2)}));
  body.Out(body.b.Op("Identity", {sum}), F32({Dim(2)}));
  attrs.push_back(Attribute::Int("num_scan_inputs", 1));
  attrs.push_back(Attribute::GraphValue("body", body.graph));
  std::vector<Value*> ins = {s0, x};
  if (opset < 9) ins.insert(ins.begin(), lens);
  std::vector<Value*> outs = b.OpN("Scan", ins, 2, attrs);
  b.Output(outs[0]);
  b.Output(outs[1]);
  return b.Build(opset);
}

TEST(ControlFlowTest, ScanSumsForward) {
  auto m = ScanSumModel(9, F32({Dim(3), Dim(2)}), {});
  auto r = RunModel(*m, {{"s0", Tensor::FromVector<float>({0, 0}, {2})},
                    {"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0].tensor), (std::vector<double>{9, 12}));
  EXPECT_EQ((*r)[1].tensor.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values((*r)[1].tensor), (std::vector<double>{1, 2, 4, 6, 9, 12}));
}

TEST(ControlFlowTest, ScanAxesAndDirections) {
  // x is [2, 3]: scanned along axis 1 backwards; outputs stacked on axis 1, prepended.
  auto m = ScanSumModel(11, F32({Dim(2), Dim(3)}),
                        {Attribute::Ints("scan_input_axes", {1}),
                         Attribute::Ints("scan_input_directions", {1}),
                         Attribute::Ints("scan_output_axes", {-1}),
                         Attribute::Ints("scan_output_directions", {1})});
  auto r = RunModel(*m, {{"s0", Tensor::FromVector<float>({0, 0}, {2})},
                    {"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status();
  // Steps read columns 2, 1, 0: sums [3,6], [5,11], [6,15]; prepending reverses them.
  EXPECT_EQ(Values((*r)[0].tensor), (std::vector<double>{6, 15}));
  EXPECT_EQ((*r)[1].tensor.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values((*r)[1].tensor), (std::vector<double>{6, 5, 3, 15, 11, 6}));
}

TEST(ControlFlowTest, Scan8RunsPerBatchEntryAndPads) {
  auto m = ScanSumModel(8, F32({Dim(2), Dim(3), Dim(2)}), {}, /*with_lens=*/true);
  auto r = RunModel(*m, {{"lens", Tensor::FromVector<int32_t>({3, 1}, {2})},
                    {"s0", Tensor::FromVector<float>({0, 0, 100, 100}, {2, 2})},
                    {"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 1, 1, 9, 9, 9, 9},
                                                    {2, 3, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0].tensor), (std::vector<double>{9, 12, 101, 101}));
  EXPECT_EQ((*r)[1].tensor.dims(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(Values((*r)[1].tensor),
            (std::vector<double>{1, 2, 4, 6, 9, 12, 101, 101, 0, 0, 0, 0}));
}

TEST(ControlFlowTest, ScanInferTakesLengthFromTheInput) {
  auto m = ScanSumModel(9, F32({Dim::Symbol("T"), Dim(2)}), {});
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(m->graph->outputs()[0]->type().ToString(), "float[2]");
  EXPECT_EQ(m->graph->outputs()[1]->type().ToString(), "float[T, 2]");
  auto m8 = ScanSumModel(8, F32({Dim::Symbol("B"), Dim::Symbol("T"), Dim(2)}), {}, true);
  ASSERT_TRUE(InferShapes(*m8, {.best_effort = false}).ok());
  EXPECT_EQ(m8->graph->outputs()[1]->type().ToString(), "float[B, T, 2]");
  auto [traits, cost] = StaticHooks(*m, *m->graph->nodes()[0]);
  EXPECT_EQ(traits.semantic_name, "Scan");
}

// skl2onnx's k-NN distance Scan declares its body inputs with unknown dims:
// the body is typed from the outer values (the state [4, 3], slices [3] of
// x), so the distances stack to [5, 4]. A state that grows every iteration
// (a Concat) breaks the assumption: its type stays unknown, not [4, 3].
std::unique_ptr<Model> ScanDistanceModel(bool growing_state) {
  GraphBuilder b;
  Value* q = b.Input("q", F32({Dim(4), Dim(3)}));
  Value* x = b.Input("x", F32({Dim(5), Dim(3)}));
  Body body(&b.graph(), "scan_body");
  Value* s = body.b.Input("s_in", F32({Dim::Unknown(), Dim(3)}));
  Value* row = body.b.Input("x_t", F32({Dim::Unknown()}));
  Value* d = body.b.Op("ReduceSumSquare", {body.b.Op("Sub", {s, row})},
                       {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 0)});
  Value* next = growing_state ? body.b.Op("Concat", {s, s}, {Attribute::Int("axis", 0)}) : body.b.Op("Identity", {s});
  body.Out(next, F32({Dim::Unknown(), Dim(3)}));
  body.Out(d, F32({Dim::Unknown()}));
  std::vector<Value*> outs = b.OpN("Scan", {q, x}, 2,
                                   {Attribute::Int("num_scan_inputs", 1), Attribute::GraphValue("body", body.graph)});
  b.Output(outs[0]);
  b.Output(outs[1]);
  return b.Build(17);
}

TEST(ControlFlowTest, ScanInferTypesTheBodyFromTheOuterValues) {
  auto m = ScanDistanceModel(false);
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(m->graph->outputs()[0]->type().ToString(), "float[4, 3]");
  EXPECT_EQ(m->graph->outputs()[1]->type().ToString(), "float[5, 4]");
  auto grows = ScanDistanceModel(true);
  ASSERT_TRUE(InferShapes(*grows, {.best_effort = false}).ok());
  EXPECT_NE(grows->graph->outputs()[0]->type().ToString(), "float[4, 3]");
  EXPECT_NE(grows->graph->outputs()[1]->type().ToString(), "float[5, 4]");
}

TEST(ControlFlowTest, ScanAxisOutOfRangeIsAnError) {
  auto bad = ScanSumModel(9, F32({Dim(3), Dim(2)}), {Attribute::Ints("scan_input_axes", {2})});
  EXPECT_FALSE(InferShapes(*bad, {.best_effort = false}).ok());
  auto r = RunModel(*bad, {{"s0", Tensor::FromVector<float>({0, 0}, {2})},
                      {"x", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2})}});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace aic

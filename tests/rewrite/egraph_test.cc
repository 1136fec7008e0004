// The e-graph engine through Optimize: CSE from hashconsing, DCE from
// extraction, duplicate initializers merging, opaque and multi-output nodes,
// names and opsets kept.
#include "gtest/gtest.h"
#include "rewrite/egraph/convert.h"
#include "rewrite/egraph/egraph.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using testing::MaxOutputDiff;
using testing::OpCounts;
using testing::OptimizeWith;

TEST(EGraphTest, UnionFindAndCongruence) {
  EGraph g(17);
  ClassId x = g.AddInput(0, TypeInfo::Tensor(DType::kFloat, Shape::FromValues({2})), "x");
  ClassId y = g.AddInput(1, TypeInfo::Tensor(DType::kFloat, Shape::FromValues({2})), "y");
  ClassId rx = g.AddOp("Relu", "", {x});
  ClassId ry = g.AddOp("Relu", "", {y});
  EXPECT_NE(g.Find(rx), g.Find(ry));
  EXPECT_EQ(g.AddOp("Relu", "", {x}), rx);  // hashcons
  EXPECT_TRUE(g.Union(x, y));
  EXPECT_FALSE(g.Union(x, y));
  g.Rebuild();
  EXPECT_EQ(g.Find(rx), g.Find(ry));  // congruence after rebuild
  EXPECT_EQ(g.type(rx).shape, Shape::FromValues({2}));
}

TEST(EGraphTest, ConstantsMergeByContentAndFold) {
  EGraph g(17);
  ClassId a = g.AddConst(Tensor::FromVector<float>({1, 2}, {2}), "a");
  ClassId b = g.AddConst(Tensor::FromVector<float>({1, 2}, {2}), "b");
  ClassId c = g.AddConst(Tensor::FromVector<float>({1, 3}, {2}), "c");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ClassId sum = g.AddOp("Add", "", {a, c});
  ASSERT_NE(g.value(sum), nullptr);
  EXPECT_EQ(g.value(sum)->data<float>()[1], 5.f);
  EXPECT_TRUE(g.weight_only(sum));
}

// Contents are told apart by comparison, not by their 64-bit hash alone:
// [1, -1, 4] and [-1, 1, 4] hashed alike once, and two Constant ops keyed by
// the hash became one, so a detector's Reshape took the other's target
// (torchvision's Faster R-CNN: "split sizes sum to 1, axis has 3375").
TEST(EGraphTest, ConstantsWithEqualHashesStayApart) {
  const Tensor first = Tensor::FromVector<int64_t>({1, -1, 4}, {3});
  const Tensor second = Tensor::FromVector<int64_t>({-1, 1, 4}, {3});
  EGraph g(17);
  ClassId a = g.AddConst(first);
  ClassId b = g.AddConst(second);
  EXPECT_NE(g.Find(a), g.Find(b));
  ClassId ca = g.AddOp("Constant", "", {}, {Attribute::TensorValue("value", first)});
  ClassId cb = g.AddOp("Constant", "", {}, {Attribute::TensorValue("value", second)});
  EXPECT_NE(g.Find(ca), g.Find(cb));
  ASSERT_NE(g.value(cb), nullptr);
  EXPECT_TRUE(g.value(cb)->BitwiseEquals(second));
  g.Rebuild();
  EXPECT_EQ(g.Find(g.AddConst(second)), g.Find(b));  // still found by content after a rebuild
}

TEST(OptimizeTest, ReshapesByConstantOpsWithEqualHashesKeepTheirTargets) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {3, 1, 4});
    Value* to_row = b.Op("Constant", {}, {Attribute::TensorValue("value", Tensor::FromVector<int64_t>({1, -1, 4}, {3}))});
    Value* to_col = b.Op("Constant", {}, {Attribute::TensorValue("value", Tensor::FromVector<int64_t>({-1, 1, 4}, {3}))});
    b.Output(b.Op("Reshape", {b.Op("Relu", {x}), to_row}));
    b.Output(b.Op("Reshape", {b.Op("Neg", {x}), to_col}));
    return b.Build(17);
  };
  for (const char* level : {"-O1", "-O2"}) {
    SCOPED_TRACE(level);
    auto r = OptimizeWith(build, "", {}, level[2] - '0');
    EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);  // infinite where a shape differs
  }
}

// Where nothing may fold a quantized weight, its float value is not computed
// (that was most of `opt`'s time on int8 models); scales and other small
// dequantized values still are.
TEST(EGraphTest, LargeDequantizedWeightsGetNoValueUnlessFoldable) {
  for (bool foldable : {false, true}) {
    EGraph g(13);
    g.set_value_dequantized_weights(foldable);
    Tensor big(DType::kInt8, {64, 80});
    for (int64_t i = 0; i < big.num_elements(); ++i) big.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 5);
    ClassId scale = g.AddConst(Tensor::Scalar<float>(0.5f));
    ClassId weight = g.AddOp("DequantizeLinear", "", {g.AddConst(big), scale});
    ClassId small = g.AddOp("DequantizeLinear", "", {g.AddConst(Tensor::FromVector<int8_t>({2, 4}, {2})), scale});
    EXPECT_EQ(g.value(weight) != nullptr, foldable);
    EXPECT_EQ(g.type(weight).shape, Shape::FromValues({64, 80}));
    EXPECT_TRUE(g.weight_only(weight));
    ASSERT_NE(g.value(small), nullptr);
    EXPECT_EQ(g.value(small)->data<float>()[1], 2.f);
  }
}

TEST(OptimizeTest, CommonSubexpressionsMerge) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 3});
    Value* r1 = b.Op("Relu", {x});
    Value* r2 = b.Op("Relu", {x});
    b.Output(b.Op("Add", {r1, r2}));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "none");
  EXPECT_EQ(OpCounts(*r.model->graph)["Relu"], 1);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

TEST(OptimizeTest, DeadNodesAndDuplicateInitializersGo) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 3});
    b.Op("Sigmoid", {x});  // dead
    Value* w1 = b.Constant("w1", Tensor::FromVector<float>({1, 2, 3}, {3}));
    Value* w2 = b.Constant("w2", Tensor::FromVector<float>({1, 2, 3}, {3}));
    b.Output(b.Op("Sub", {b.Op("Mul", {x, w1}), b.Op("Mul", {x, w2})}, {}, "out"));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "none");
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Sigmoid"], 0);
  EXPECT_EQ(counts["Mul"], 1);
  EXPECT_EQ(r.model->graph->initializers().size(), 1u);
  EXPECT_EQ(r.model->graph->outputs()[0]->name(), "out");
  EXPECT_EQ(r.model->graph->inputs()[0]->name(), "x");
  EXPECT_EQ(r.model->OpsetFor(""), 17);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

// A QDQ Conv as onnxruntime.quantization writes it: int8 weights and an
// int32 bias through DequantizeLinear. A file keeps them quantized (folding
// would undo the int8 model ONNX Runtime runs); a session's float backend
// may fold them.
std::unique_ptr<Model> QdqConv() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
  Tensor wq(DType::kInt8, {3, 2, 3, 3});
  for (int64_t i = 0; i < wq.num_elements(); ++i) wq.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 7 - 3);
  Value* w = b.Op("DequantizeLinear", {b.Constant("wq", wq), b.Constant("ws", Tensor::Scalar<float>(0.1f))});
  Value* bias = b.Op("DequantizeLinear", {b.Constant("bq", Tensor::FromVector<int32_t>({5, -3, 7}, {3})),
                                          b.Constant("bs", Tensor::Scalar<float>(0.01f))});
  Value* t = b.Op("Transpose", {b.Op("DequantizeLinear", {b.Constant("tq", wq), b.Constant("ts", Tensor::Scalar<float>(0.2f))})},
                  {Attribute::Ints("perm", {1, 0, 2, 3})});
  Value* c = b.Op("Conv", {x, w, bias});
  b.Output(b.Op("Conv", {c, t}));
  return b.Build(13);
}

TEST(OptimizeTest, QuantizedWeightsStayQuantizedUnlessAsked) {
  auto kept = OptimizeWith(QdqConv, "fold_constants");
  EXPECT_EQ(OpCounts(*kept.model->graph)["DequantizeLinear"], 3);
  EXPECT_EQ(OpCounts(*kept.model->graph)["Transpose"], 1);  // reads a dequantized weight: not folded either
  EXPECT_EQ(MaxOutputDiff(QdqConv, *kept.model, true), 0.0);
  auto m = QdqConv();
  OptimizeOptions o;
  o.only_rules = {"fold_constants"};
  o.fold_dequantize = true;
  o.fold_limit = int64_t{1} << 20;
  ASSERT_TRUE(Optimize(*m, o).ok());
  EXPECT_EQ(OpCounts(*m->graph)["DequantizeLinear"], 0);
}

// As a session optimizes (session.cc OptimizeOptionsFor): small dequantized
// constants fold, a large dequantized weight is left to the backend, which
// folds it at compile time one weight at a time, or reads it as 8 bits
// (resnet50_int8 held all of its weights in float at once: 100 MB).
TEST(OptimizeTest, ASessionLeavesLargeDequantizedWeightsToItsBackend) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 80, 4, 4});
    Tensor wq(DType::kInt8, {64, 80, 1, 1});  // 5120 values: over the analysis' 4096
    for (int64_t i = 0; i < wq.num_elements(); ++i) wq.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 11 - 5);
    Value* w = b.Op("DequantizeLinear", {b.Constant("wq", wq), b.Constant("ws", Tensor::Scalar<float>(0.1f))});
    Tensor bq(DType::kInt32, {64});
    for (int64_t i = 0; i < 64; ++i) bq.mutable_data<int32_t>()[i] = static_cast<int32_t>(i * 3 - 90);
    Value* bias = b.Op("DequantizeLinear", {b.Constant("bq", bq), b.Constant("bs", Tensor::Scalar<float>(0.01f))});
    b.Output(b.Op("Conv", {x, w, bias}));
    return b.Build(13);
  };
  for (bool in_rewriter : {true, false}) {
    auto m = build();
    OptimizeOptions o;
    o.fold_dequantize = true;
    o.fold_large_dequantized_in_rewriter = in_rewriter;
    o.fold_limit = int64_t{1} << 20;
    ASSERT_TRUE(Optimize(*m, o).ok());
    EXPECT_EQ(OpCounts(*m->graph)["DequantizeLinear"], in_rewriter ? 0 : 1) << (in_rewriter ? "folded" : "left");
    EXPECT_EQ(MaxOutputDiff(build, *m, true), 0.0);
  }
}

TEST(OptimizeTest, OpaqueAndMultiOutputNodesSurvive) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {4, 3});
    std::vector<Value*> parts = b.OpN("Split", {x}, 2, {Attribute::Int("axis", 0)});
    std::vector<Value*> custom = b.OpN("Mystery", {parts[0]}, 1, {}, "com.example");
    b.Output(b.Op("Add", {parts[0], parts[1]}));
    b.Output(custom[0]);
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "");
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Split"], 1);
  EXPECT_EQ(counts["Mystery"], 1);
  EXPECT_GE(r.stats.opaque_nodes, 1);
}

TEST(OptimizeTest, OutputThatIsAnInputGetsAnIdentity) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2});
    b.Output(b.Op("Identity", {x}, {}, "y"));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "");
  ASSERT_EQ(r.model->graph->outputs().size(), 1u);
  EXPECT_EQ(r.model->graph->outputs()[0]->name(), "y");
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

TEST(OptimizeTest, BodiesAreOptimizedAsGraphsOfTheirOwn) {
  auto build = [] {
    GraphBuilder b;
    Value* c = b.Input("c", DType::kBool, {});
    Value* x = b.Input("x", DType::kFloat, {2});
    auto then_g = std::make_shared<Graph>(&b.graph());
    {
      GraphBuilder tb(then_g.get());
      tb.Output(tb.Op("Identity", {tb.Op("Identity", {x}, {}, "t_mid")}, {}, "t_out"));
    }
    auto else_g = std::make_shared<Graph>(&b.graph());
    {
      GraphBuilder eb(else_g.get());
      eb.Output(eb.Op("Neg", {eb.Op("Identity", {x}, {}, "e_mid")}, {}, "e_out"));
    }
    b.Output(b.Op("If", {c}, {Attribute::GraphValue("then_branch", then_g), Attribute::GraphValue("else_branch", else_g)},
                  "y"));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "");
  ASSERT_EQ(r.model->graph->num_nodes(), 1u);
  const Node& if_node = *r.model->graph->nodes()[0];
  std::vector<Graph*> bodies = if_node.Subgraphs();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]->num_nodes(), 1u);  // Identity(Identity(x)) -> an Identity naming the output
  EXPECT_EQ(OpCounts(*bodies[1])["Identity"], 0);
  EXPECT_EQ(OpCounts(*bodies[1])["Neg"], 1);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

// A branch body reading outer constants: Concat(a, b) then a Slice of it.
std::shared_ptr<Graph> SliceOfOuterConcat(GraphBuilder& b, Value* x, Value* a, Value* c, const std::string& tag) {
  auto body = std::make_shared<Graph>(&b.graph());
  GraphBuilder bb(body.get());
  Value* cat = bb.Op("Concat", {a, c}, {Attribute::Int("axis", 0)}, tag + "_cat");
  Value* starts = bb.Constant(tag + "_s", Tensor::FromVector<int64_t>({1}, {1}));
  Value* ends = bb.Constant(tag + "_e", Tensor::FromVector<int64_t>({3}, {1}));
  Value* part = bb.Op("Slice", {cat, starts, ends}, {}, tag + "_part");
  bb.Output(bb.Op("Add", {x, part}, {}, tag + "_out"));
  return body;
}

TEST(OptimizeTest, BodiesFoldOverOuterConstants) {
  auto build = [] {
    GraphBuilder b;
    Value* c = b.Input("c", DType::kBool, {});
    Value* x = b.Input("x", DType::kFloat, {2});
    Value* a = b.Constant("a", Tensor::FromVector<float>({1.f, 2.f}, {2}));
    Value* k = b.Constant("k", Tensor::FromVector<float>({3.f, 4.f}, {2}));
    auto then_g = SliceOfOuterConcat(b, x, a, k, "t");
    auto else_g = SliceOfOuterConcat(b, x, k, a, "e");
    b.Output(b.Op("If", {c}, {Attribute::GraphValue("then_branch", then_g), Attribute::GraphValue("else_branch", else_g)},
                  "y"));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "");
  ASSERT_EQ(r.model->graph->num_nodes(), 1u);
  for (Graph* body : r.model->graph->nodes()[0]->Subgraphs()) {
    EXPECT_EQ(OpCounts(*body), (std::map<std::string, int>{{"Add", 1}}));
  }
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

TEST(OptimizeTest, AnIfWhoseConditionFoldsBecomesItsBranch) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 3});
    // The condition is shape arithmetic that folds: dim 1 of x == 3.
    Value* dim = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("one", Tensor::Scalar<int64_t>(1))});
    Value* cond = b.Op("Equal", {dim, b.Constant("three", Tensor::Scalar<int64_t>(3))});
    auto then_g = std::make_shared<Graph>(&b.graph());
    {
      GraphBuilder tb(then_g.get());
      tb.Output(tb.Op("Relu", {x}, {}, "t_out"));
    }
    auto else_g = std::make_shared<Graph>(&b.graph());
    {
      GraphBuilder eb(else_g.get());
      eb.Output(eb.Op("Neg", {x}, {}, "e_out"));
    }
    Value* y = b.Op("If", {cond}, {Attribute::GraphValue("then_branch", then_g),
                                  Attribute::GraphValue("else_branch", else_g)});
    b.Output(b.Op("Sigmoid", {y}, {}, "y"));
    return b.Build(17);
  };
  auto r = OptimizeWith(build, "");
  EXPECT_EQ(r.stats.rule_counts["inline_known_if"], 1);
  EXPECT_EQ(OpCounts(*r.model->graph), (std::map<std::string, int>{{"Relu", 1}, {"Sigmoid", 1}}));
  EXPECT_EQ(MaxOutputDiff(build, *r.model, true), 0.0);
}

TEST(OptimizeTest, LevelZeroChangesNothing) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  b.Output(b.Op("Identity", {x}));
  auto m = b.Build(17);
  OptimizeOptions o;
  o.level = 0;
  auto stats = Optimize(*m, o);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(m->graph->num_nodes(), 1u);
  EXPECT_FALSE(stats->changed());
}

}  // namespace
}  // namespace aic::rewrite

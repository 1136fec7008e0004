#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/clone.h"
#include "graph/printer.h"
#include "graph/topo.h"
#include "graph/verify.h"
#include "support/half.h"

namespace aic {
namespace {

TEST(DimTest, SymbolsAndValues) {
  EXPECT_TRUE(Dim(3).SameAs(Dim(3)));
  EXPECT_FALSE(Dim(3).SameAs(Dim(4)));
  EXPECT_TRUE(Dim::Symbol("batch").SameAs(Dim::Symbol("batch")));
  EXPECT_FALSE(Dim::Unknown().SameAs(Dim::Unknown()));
  EXPECT_EQ(Shape({Dim::Symbol("batch"), 3, Dim::Unknown()}).ToString(), "[batch, 3, ?]");
  EXPECT_EQ(Shape::UnknownRank().ToString(), "unknown rank");
  EXPECT_EQ(Shape::FromValues({2, 3}).NumElements(), 6);
  EXPECT_FALSE(Shape({Dim::Symbol("n"), 3}).NumElements().has_value());
}

TEST(DTypeTest, SizesAndNames) {
  EXPECT_EQ(ElementSize(DType::kFloat), 4u);
  EXPECT_EQ(ElementSize(DType::kBFloat16), 2u);
  EXPECT_EQ(ElementSize(DType::kComplex128), 16u);
  EXPECT_EQ(ByteSizeOf(DType::kInt4, 5), 3u);
  EXPECT_STREQ(DTypeName(DType::kFloat8E5M2), "float8e5m2");
  EXPECT_TRUE(IsOpaqueStorageOnly(DType::kFloat8E4M3FN));
  EXPECT_FALSE(IsKnownDType(99));
}

TEST(HalfTest, RoundTripsAndRounds) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);  // overflow to inf
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 4096), FloatToHalf(1.0f));  // ties to even
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(3.140625f)), 3.140625f);
}

TEST(TensorTest, OwnedAlignedAndShallowCopies) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  Tensor view = t.WithDims({3, 2});
  EXPECT_EQ(view.raw_data(), t.raw_data());
  Tensor copy = t.Clone();
  EXPECT_NE(copy.raw_data(), t.raw_data());
  EXPECT_TRUE(copy.BitwiseEquals(t));
  EXPECT_FALSE(view.BitwiseEquals(t));  // dims differ
}

TEST(TensorTest, BorrowedBufferIsReadOnly) {
  static const float kData[4] = {1, 2, 3, 4};
  auto keep = std::make_shared<int>(0);
  Tensor t(DType::kFloat, {4}, Buffer::Borrow(kData, sizeof kData, keep));
  EXPECT_TRUE(t.buffer()->borrowed());
  EXPECT_FALSE(t.buffer()->writable());
  EXPECT_EQ(t.data<float>()[2], 3.0f);
}

// A deferred buffer holds no bytes until first read, is filled once, and
// can give its bytes up again like any owned one (Release).
TEST(TensorTest, DeferredBufferIsFilledOnFirstRead) {
  int fills = 0;
  Tensor t(DType::kFloat, {3}, Buffer::Deferred(3 * sizeof(float), [&fills](uint8_t* dst) {
             ++fills;
             const float v[3] = {1.5f, -2, 4};
             std::memcpy(dst, v, sizeof v);
           }));
  EXPECT_TRUE(t.buffer()->released());
  EXPECT_EQ(fills, 0);
  EXPECT_EQ(t.data<float>()[1], -2.0f);
  EXPECT_EQ(t.data<float>()[2], 4.0f);
  EXPECT_EQ(fills, 1);
  EXPECT_FALSE(t.buffer()->released());
  EXPECT_TRUE(t.buffer()->writable());
  t.buffer()->Release([](uint8_t* dst) { std::memset(dst, 0, 3 * sizeof(float)); });
  EXPECT_EQ(t.data<float>()[0], 0.0f);
  EXPECT_EQ(fills, 1);
}

// A fill or restore may read another released buffer (a deferred float
// weight widening its released half original): restores nest.
TEST(TensorTest, ARestoreMayReadAnotherReleasedBuffer) {
  Tensor half = Tensor::FromVector<float>({1, 2, 3}, {3});
  half.buffer()->Release([](uint8_t* dst) {
    const float v[3] = {1, 2, 3};
    std::memcpy(dst, v, sizeof v);
  });
  Tensor wide(DType::kFloat, {3}, Buffer::Deferred(3 * sizeof(float), [half](uint8_t* dst) {
                const float* h = half.data<float>();
                float* out = reinterpret_cast<float*>(dst);
                for (int i = 0; i < 3; ++i) out[i] = 2 * h[i];
              }));
  EXPECT_EQ(wide.data<float>()[2], 6.0f);
  EXPECT_FALSE(half.buffer()->released());
}

// y = Relu(x @ w)
std::unique_ptr<Model> SmallModel() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 4});
  Value* w = b.Constant("w", Tensor(DType::kFloat, {4, 2}));
  Value* m = b.Op("MatMul", {x, w});
  Value* y = b.Op("Relu", {m}, {}, "y");
  b.Output(y);
  return b.Build();
}

TEST(VerifyTest, ValidGraphPasses) {
  auto model = SmallModel();
  EXPECT_TRUE(Verify(*model->graph).ok());
}

TEST(VerifyTest, ReportsCycleWithNodeName) {
  auto model = SmallModel();
  Graph& g = *model->graph;
  Node* matmul = g.nodes()[0].get();
  matmul->set_input(0, g.nodes()[1]->output(0));  // MatMul reads Relu's output
  absl::Status s = Verify(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("cycle"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("MatMul"), std::string::npos) << s;
}

TEST(VerifyTest, ReportsUndefinedInput) {
  auto model = SmallModel();
  Graph& g = *model->graph;
  g.nodes()[1]->set_input(0, g.AddValue("ghost"));
  absl::Status s = Verify(g);
  EXPECT_NE(std::string(s.message()).find("'ghost' is not defined"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("Relu"), std::string::npos) << s;
}

TEST(VerifyTest, ReportsTwoProducers) {
  auto model = SmallModel();
  Graph& g = *model->graph;
  Value* m = g.nodes()[0]->output(0);
  g.AddNode("Identity", {g.inputs()[0]}, {m}, "dup");
  absl::Status s = Verify(g);
  EXPECT_NE(std::string(s.message()).find("two producers"), std::string::npos) << s;
}

TEST(VerifyTest, ReportsUnproducedOutput) {
  auto model = SmallModel();
  Graph& g = *model->graph;
  g.AddOutput(g.AddValue("nothing"));
  absl::Status s = Verify(g);
  EXPECT_NE(std::string(s.message()).find("'nothing' is not produced"), std::string::npos) << s;
}

TEST(TopoTest, SortsOutOfOrderNodesStably) {
  auto model = SmallModel();
  Graph& g = *model->graph;
  g.SetNodeOrder({g.nodes()[1].get(), g.nodes()[0].get()});
  ASSERT_TRUE(SortTopologically(g).ok());
  EXPECT_EQ(g.nodes()[0]->op_type, "MatMul");
  EXPECT_EQ(g.nodes()[1]->op_type, "Relu");
}

TEST(TopoTest, SubgraphOuterReadsAreDependencies) {
  GraphBuilder b;
  Value* c = b.Input("c", DType::kBool, {});
  Value* x = b.Input("x", DType::kFloat, {2});
  // If's branches read `r`, produced by a node listed after the If.
  auto then_g = std::make_shared<Graph>(&b.graph());
  auto else_g = std::make_shared<Graph>(&b.graph());
  Value* out_if = b.graph().AddValue("if_out");
  Node* if_node = b.graph().AddNode("If", {c}, {out_if}, "if");
  Value* r = b.Op("Relu", {x}, {}, "r");
  for (auto* g : {then_g.get(), else_g.get()}) {
    Value* o = g->AddValue(g == then_g.get() ? "t" : "e");
    g->AddNode("Identity", {r}, {o});
    g->AddOutput(o);
  }
  if_node->attributes = {Attribute::GraphValue("then_branch", then_g),
                         Attribute::GraphValue("else_branch", else_g)};
  b.Output(out_if);
  auto model = b.Build();
  EXPECT_EQ(if_node->ImplicitInputs().size(), 1u);
  auto order = TopologicalOrder(*model->graph);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ((*order)[0]->op_type, "Relu");
  EXPECT_EQ((*order)[1]->op_type, "If");
  EXPECT_TRUE(Verify(*model->graph).ok());
  auto clone = CloneGraph(*model->graph, nullptr);
  EXPECT_EQ(clone->TotalNodeCount(), model->graph->TotalNodeCount());
}

TEST(PrinterTest, SummaryShowsSymbolicDimsAndHistogram) {
  auto model = SmallModel();
  std::string s = PrintModelSummary(*model, "m.onnx");
  EXPECT_NE(s.find("x: float[batch, 4]"), std::string::npos) << s;
  EXPECT_NE(s.find("initializers: 1 (32 B)"), std::string::npos) << s;
  EXPECT_NE(s.find("MatMul"), std::string::npos);
  EXPECT_NE(s.find("%y = Relu(%MatMul_0)"), std::string::npos) << s;
}

}  // namespace
}  // namespace aic

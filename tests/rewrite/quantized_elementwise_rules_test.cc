// fuse_qdq_lookup, fuse_qdq_add and fuse_qdq_mul: the elementwise steps of a
// statically quantized model (DequantizeLinear -> float ops ->
// QuantizeLinear) become ai.aic QLinearLookup / QLinearAdd / QLinearMul for
// targets that run them (a session on the CPU backend), bitwise equal to the
// QDQ original on the reference executor. The lookup covers any pointwise
// expression of one 8-bit tensor (HardSwish, and the x * Q(HardSigmoid(x))
// quantize_static leaves of an inlined one), and declines where a leaf is
// per channel; files keep QDQ form; a second run changes nothing.
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using testing::ModelFn;

OptimizeOptions SessionLike() {
  OptimizeOptions o;
  o.aic_ops = {"QLinearLookup", "QLinearAdd", "QLinearMul"};
  o.qoperator_ops = {"QLinearConv", "QLinearMatMul"};
  o.fold_dequantize = true;
  return o;
}

// x -> QuantizeLinear -> DequantizeLinear: a quantized activation as
// quantize_static leaves it.
Value* QuantizedInput(GraphBuilder& b, const std::string& name, const std::vector<Dim>& dims, float scale,
                      uint8_t zero) {
  Value* x = b.Input(name, DType::kFloat, dims);
  Value* s = b.Constant(name + "_s", Tensor::Scalar<float>(scale));
  Value* z = b.Constant(name + "_z", Tensor::Scalar<uint8_t>(zero));
  return b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {x, s, z}), s, z});
}

// Q then DQ of a float value at (scale, zero).
Value* Requantized(GraphBuilder& b, Value* v, const std::string& name, float scale, uint8_t zero) {
  Value* s = b.Constant(name + "_s", Tensor::Scalar<float>(scale));
  Value* z = b.Constant(name + "_z", Tensor::Scalar<uint8_t>(zero));
  return b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {v, s, z}), s, z});
}

std::unique_ptr<Model> HardSwishModel() {
  GraphBuilder b;
  Value* x = QuantizedInput(b, "x", {1, 8, 6, 6}, 0.025f, 131);
  b.Output(Requantized(b, b.Op("HardSwish", {x}), "y", 0.019f, 20));
  return b.Build(17);
}

// HardSwish as an exporter inlines it and quantize_static quantizes it:
// x * Q(HardSigmoid(x)), with its own Q/DQ pair inside.
std::unique_ptr<Model> InlinedHardSwishModel() {
  GraphBuilder b;
  Value* x = QuantizedInput(b, "x", {1, 8, 6, 6}, 0.025f, 131);
  Value* hs = Requantized(b, b.Op("HardSigmoid", {x}, {Attribute::Float("alpha", 1.0f / 6)}), "h", 1.0f / 255, 0);
  b.Output(Requantized(b, b.Op("Mul", {x, hs}), "y", 0.019f, 20));
  return b.Build(17);
}

std::unique_ptr<Model> ResidualAddModel() {
  GraphBuilder b;
  Value* a = QuantizedInput(b, "a", {1, 8, 6, 6}, 0.031f, 125);
  Value* c = QuantizedInput(b, "c", {1, 8, 6, 6}, 0.017f, 140);
  b.Output(Requantized(b, b.Op("Relu", {b.Op("Add", {a, c})}), "y", 0.027f, 0));
  return b.Build(17);
}

std::unique_ptr<Model> ChannelScaleModel() {
  GraphBuilder b;
  Value* a = QuantizedInput(b, "a", {1, 8, 6, 6}, 0.031f, 125);
  Value* s = QuantizedInput(b, "s", {1, 8, 1, 1}, 1.0f / 255, 0);
  b.Output(Requantized(b, b.Op("Mul", {a, s}), "y", 0.02f, 128));
  return b.Build(17);
}

// Mul by a per-channel constant: not one function of x's 256 values.
std::unique_ptr<Model> PerChannelConstantModel() {
  GraphBuilder b;
  Value* x = QuantizedInput(b, "x", {1, 4, 3, 3}, 0.025f, 131);
  Value* k = b.Constant("k", Tensor::FromVector<float>({0.5f, 1.5f, -2.0f, 3.0f}, {1, 4, 1, 1}));
  b.Output(Requantized(b, b.Op("Mul", {x, k}), "y", 0.05f, 128));
  return b.Build(17);
}

struct Case {
  const char* name;
  ModelFn build;
  const char* rule;
  const char* op;
};

TEST(QuantizedElementwiseRulesTest, FireAndStayBitwiseEqual) {
  const Case cases[] = {
      {"hardswish", HardSwishModel, "fuse_qdq_lookup", "QLinearLookup"},
      {"inlined hardswish", InlinedHardSwishModel, "fuse_qdq_lookup", "QLinearLookup"},
      {"residual add + relu", ResidualAddModel, "fuse_qdq_add", "QLinearAdd"},
      {"per-channel scale", ChannelScaleModel, "fuse_qdq_mul", "QLinearMul"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto m = c.build();
    auto stats = Optimize(*m, SessionLike());
    ASSERT_TRUE(stats.ok()) << stats.status();
    auto ops = testing::OpCounts(*m->graph);
    EXPECT_GE(stats->rule_counts[c.rule], 1);
    EXPECT_EQ(ops[c.op], 1);
    // Only the graph's input quantizations and the output's DequantizeLinear stay.
    for (const char* gone : {"HardSwish", "HardSigmoid", "Mul", "Add", "Relu"}) EXPECT_EQ(ops.count(gone), 0u) << gone;
    EXPECT_EQ(testing::MaxOutputDiff(c.build, *m, /*bitwise=*/true), 0.0);
    EXPECT_EQ(testing::MaxOutputDiff(c.build, *m, /*bitwise=*/true, 99), 0.0);
    auto again = Optimize(*m, SessionLike());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(testing::OpCounts(*m->graph), ops);
  }
}

TEST(QuantizedElementwiseRulesTest, ReluIsFusedIntoTheAdd) {
  auto m = ResidualAddModel();
  ASSERT_TRUE(Optimize(*m, SessionLike()).ok());
  for (const auto& n : m->graph->nodes()) {
    if (n->op_type == "QLinearAdd") {
      EXPECT_EQ(n->GetInt("fuse_relu", 0), 1);
    }
  }
}

TEST(QuantizedElementwiseRulesTest, LookupDeclinesOnAPerChannelLeaf) {
  auto m = PerChannelConstantModel();
  OptimizeOptions o = SessionLike();
  o.explain_rule = "fuse_qdq_lookup";
  auto stats = Optimize(*m, o);
  ASSERT_TRUE(stats.ok());
  auto ops = testing::OpCounts(*m->graph);
  EXPECT_EQ(ops["QLinearLookup"], 0);
  EXPECT_EQ(ops["Mul"], 1);
  std::string explain;
  for (const std::string& line : stats->explain) explain += line + "\n";
  EXPECT_NE(explain.find("not a pointwise expression"), std::string::npos) << explain;
}

TEST(QuantizedElementwiseRulesTest, FilesKeepQdqForm) {
  for (ModelFn build : {ModelFn(HardSwishModel), ModelFn(ResidualAddModel), ModelFn(ChannelScaleModel)}) {
    auto m = build();
    ASSERT_TRUE(Optimize(*m, OptimizeOptions{}).ok());
    auto ops = testing::OpCounts(*m->graph);
    EXPECT_EQ(ops.count("QLinearLookup") + ops.count("QLinearAdd") + ops.count("QLinearMul"), 0u);
    EXPECT_GE(ops["QuantizeLinear"], 2);
  }
}

}  // namespace
}  // namespace aic::rewrite

#include <cmath>

#include <gtest/gtest.h>

#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::SingleNode;

SingleNode Spec(std::string op, std::vector<Attribute> attrs = {}, size_t outputs = 2,
                int64_t opset = 14) {
  SingleNode s;
  s.op_type = std::move(op);
  s.attributes = std::move(attrs);
  s.num_outputs = outputs;
  s.opset = opset;
  return s;
}

Tensor F(std::vector<float> v, std::vector<int64_t> dims) {
  return Tensor::FromVector<float>(v, std::move(dims));
}

// X = [1, 2] as [seq=2, batch=1, input=1]; W = R = 0.5, one hidden unit.
TEST(RnnTest, ForwardTanhHandComputed) {
  auto out = RunNode(Spec("RNN", {Attribute::Int("hidden_size", 1)}),
                     {F({1, 2}, {2, 1, 1}), F({0.5f}, {1, 1, 1}), F({0.5f}, {1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  const double h1 = std::tanh(0.5), h2 = std::tanh(1 + 0.5 * h1);
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_NEAR((*out)[0].data<float>()[0], h1, 1e-6);
  EXPECT_NEAR((*out)[0].data<float>()[1], h2, 1e-6);
  EXPECT_NEAR((*out)[1].data<float>()[0], h2, 1e-6);
}

TEST(RnnTest, BidirectionalRunsBackwardInSecondDirection) {
  auto out = RunNode(Spec("RNN", {Attribute::String("direction", "bidirectional")}),
                     {F({1, 2}, {2, 1, 1}), F({0.5f, 0.5f}, {2, 1, 1}), F({0.5f, 0.5f}, {2, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2, 1, 1}));
  const double b1 = std::tanh(1.0), b2 = std::tanh(0.5 + 0.5 * b1);  // steps s=1 then s=0
  EXPECT_NEAR((*out)[0].data<float>()[3], b1, 1e-6);  // Y[s=1, d=1]
  EXPECT_NEAR((*out)[0].data<float>()[1], b2, 1e-6);  // Y[s=0, d=1]
  EXPECT_NEAR((*out)[1].data<float>()[1], b2, 1e-6);  // Y_h[d=1]
}

TEST(RnnTest, SequenceLensZeroFillsAndLayoutIsBatchFirst) {
  // batch 2 (lengths 2 and 1), layout 1: X is [batch, seq, input].
  Tensor lens = Tensor::FromVector<int32_t>({2, 1}, {2});
  auto out = RunNode(Spec("RNN", {Attribute::Int("layout", 1)}),
                     {F({1, 2, 3, 4}, {2, 2, 1}), F({0.5f}, {1, 1, 1}), F({0.5f}, {1, 1, 1}),
                      Tensor(), lens});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2, 1, 1}));  // [batch, seq, dirs, H]
  EXPECT_NEAR((*out)[0].data<float>()[2], std::tanh(1.5), 1e-6);     // b=1, s=0
  EXPECT_EQ((*out)[0].data<float>()[3], 0.0f);                       // b=1, s=1: padding
  ASSERT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 1, 1}));      // [batch, dirs, H]
  EXPECT_NEAR((*out)[1].data<float>()[1], std::tanh(1.5), 1e-6);
}

TEST(GruTest, ZeroWeightsHalveTheState) {
  // z = r = σ(0) = 0.5, candidate tanh(0) = 0, so h_t = 0.5·h_{t−1}.
  std::vector<float> zeros3(3, 0.0f);
  for (int lbr : {0, 1}) {
    auto out = RunNode(Spec("GRU", {Attribute::Int("linear_before_reset", lbr)}),
                       {F({7, 9}, {2, 1, 1}), F(zeros3, {1, 3, 1}), F(zeros3, {1, 3, 1}), Tensor(),
                        Tensor(), F({1}, {1, 1, 1})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_NEAR((*out)[0].data<float>()[0], 0.5, 1e-6);
    EXPECT_NEAR((*out)[1].data<float>()[0], 0.25, 1e-6);
  }
}

TEST(LstmTest, ZeroWeightsWithInitialCellAndPeepholes) {
  // i = o = f = σ(0) = 0.5, g = 0: c_1 = 0.5·c_0 = 0.5, h_1 = 0.5·tanh(0.5).
  std::vector<float> zeros4(4, 0.0f);
  auto out = RunNode(Spec("LSTM", {}, 3),
                     {F({3}, {1, 1, 1}), F(zeros4, {1, 4, 1}), F(zeros4, {1, 4, 1}), Tensor(),
                      Tensor(), Tensor(), F({1}, {1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[1].data<float>()[0], 0.5 * std::tanh(0.5), 1e-6);
  EXPECT_NEAR((*out)[2].data<float>()[0], 0.5, 1e-6);
  // Peephole on the input gate only: i = σ(1·c_0) = σ(1).
  auto peep = RunNode(Spec("LSTM", {}, 3),
                      {F({3}, {1, 1, 1}), F(zeros4, {1, 4, 1}), F(zeros4, {1, 4, 1}), Tensor(),
                       Tensor(), Tensor(), F({1}, {1, 1, 1}), F({1, 0, 0}, {1, 3})});
  ASSERT_TRUE(peep.ok()) << peep.status();
  EXPECT_NEAR((*peep)[2].data<float>()[0], 0.5, 1e-6);  // g = 0: i does not matter for c
}

TEST(RnnTest, ActivationsWithAlpha) {
  // LeakyRelu with alpha 0.1 on W·x = −2: −0.2.
  auto out = RunNode(Spec("RNN", {Attribute::Strings("activations", {"LeakyRelu"}),
                                  Attribute::Floats("activation_alpha", {0.1f})}),
                     {F({-2}, {1, 1, 1}), F({1}, {1, 1, 1}), F({0}, {1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], -0.2, 1e-6);
}

TEST(RnnTest, InferSymbolicBatchBidirectional) {
  auto types = InferNode(Spec("LSTM", {Attribute::Int("hidden_size", 4),
                                       Attribute::String("direction", "bidirectional")}, 3),
                         {TypeInfo::Tensor(DType::kFloat, Shape({5, Dim::Symbol("batch"), 3})),
                          TypeInfo::Tensor(DType::kFloat, Shape({2, 16, 3})),
                          TypeInfo::Tensor(DType::kFloat, Shape({2, 16, 4}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[5, 2, batch, 4]");
  EXPECT_EQ((*types)[1].shape.ToString(), "[2, batch, 4]");
  EXPECT_EQ((*types)[2].shape.ToString(), "[2, batch, 4]");
}

TEST(RnnTest, BadDirectionIsAnError) {
  auto types = InferNode(Spec("RNN", {Attribute::String("direction", "sideways")}),
                         {TypeInfo::Tensor(DType::kFloat, Shape({5, 1, 3})),
                          TypeInfo::Tensor(DType::kFloat, Shape({1, 4, 3})),
                          TypeInfo::Tensor(DType::kFloat, Shape({1, 4, 4}))});
  EXPECT_FALSE(types.ok());
  auto run = RunNode(Spec("RNN"), {F({1}, {1, 1, 1}), F({1, 1}, {1, 2, 1}), F({1}, {1, 1, 1})});
  EXPECT_FALSE(run.ok());  // W rows do not match R's hidden size
}

TEST(RnnTest, TraitsAndCost) {
  const OpDef* def = OpRegistry::Global().Find("", "LSTM", 14);
  ASSERT_NE(def, nullptr);
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {5, 2, 3});
  Value* w = b.Constant("w", Tensor(DType::kFloat, {1, 16, 3}));
  Value* r = b.Constant("r", Tensor(DType::kFloat, {1, 16, 4}));
  b.OpN("LSTM", {x, w, r}, 1, {Attribute::Int("hidden_size", 4)});
  OpContext ctx(*b.last_node(), 14, {x->type(), w->type(), r->type()},
                {nullptr, w->initializer(), r->initializer()}, [] { return std::string("s"); });
  ctx.set_output(0, DType::kFloat, Shape({5, 1, 2, 4}));
  Traits t = def->traits(ctx);
  EXPECT_EQ(t.semantic_name, "LSTM");
  EXPECT_TRUE(t.trainable);
  EXPECT_EQ(t.linearity, Linearity::kNonlinear);
  Cost c = def->cost(ctx);
  EXPECT_EQ(c.params, 16 * 3 + 16 * 4);
  // Per step: batch 2 · 4 gates · 4 hidden · (3 + 4) + peepholes 2·3·4; 5 steps.
  EXPECT_EQ(c.macs, 5 * (2 * 16 * 7 + 2 * 3 * 4));
}

TEST(RnnTest, MissingRequiredInputIsAnError) {
  auto out = RunNode(Spec("GRU"), {F({1}, {1, 1, 1}), F({0, 0, 0}, {1, 3, 1}), Tensor()});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace aic

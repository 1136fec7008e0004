// Tests of the state-carrying sequence ops (ops/nn/causal_conv_with_state.cc,
// linear_attention.cc, opset 27): CausalConvWithState's causal window over
// past_state ++ input, its bias, SiLU and the shifted carry state;
// LinearAttention's four update rules, the default scale, grouped-query
// heads and a given past state. Expected values are worked by hand from the
// formulas of the ONNX spec (the comments show the arithmetic); both ops'
// shape inference with symbolic dims and their input errors.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/op_expect.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::F32;
using testing::ExpectErrorNaming;
using testing::ExpectValues;
using testing::InferNode;
using testing::NodeTraits;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }

// ---- CausalConvWithState ----

SingleNode ConvOp(std::vector<Attribute> attrs = {}) {
  return Op("CausalConvWithState", std::move(attrs), 27, 2);
}

// One batch, two channels, L = 3, k = 3: x = [[1, 2, 3], [4, 5, 6]],
// weight [[0.5, −1, 2], [1, 1, 1]], bias [0.25, −1].
Tensor ConvX() { return F({1, 2, 3, 4, 5, 6}, {1, 2, 3}); }
Tensor ConvW() { return F({0.5f, -1, 2, 1, 1, 1}, {2, 1, 3}); }
Tensor ConvBias() { return F({0.25f, -1}, {2}); }

TEST(CausalConvWithStateTest, WindowOverPastStateWithBias) {
  // padded c0 = [10, 20, 1, 2, 3]: 0.5·10 − 20 + 2·1 = −13, 0.5·20 − 1 + 2·2 = 13,
  // 0.5·1 − 2 + 2·3 = 4.5, each + 0.25; padded c1 = [0, 1, 4, 5, 6]: 5, 10, 15, each − 1.
  Tensor past = F({10, 20, 0, 1}, {1, 2, 2});
  auto out = RunNode(ConvOp(), {ConvX(), ConvW(), ConvBias(), past});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 2, 3}));
  ExpectValues((*out)[0], {-12.75, 13.25, 4.75, 4, 9, 14}, "output");
  // present_state: the last k − 1 = 2 positions of padded.
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 2, 2}));
  ExpectValues((*out)[1], {2, 3, 5, 6}, "present_state", 0);

  // One decode step (L = 1 < k − 1): the state shifts by one position.
  auto step = RunNode(ConvOp(), {F({1, 4}, {1, 2, 1}), ConvW(), ConvBias(), past});
  ASSERT_TRUE(step.ok()) << step.status();
  ExpectValues((*step)[0], {-12.75, 4}, "step output");
  ExpectValues((*step)[1], {20, 1, 1, 4}, "step present_state", 0);
}

TEST(CausalConvWithStateTest, ZeroPastAndSilu) {
  // No past: k − 1 zeros in front. c0: 2, 0.5·0 − 1 + 2·2 = 3, 4.5; c1: 4, 9, 15.
  auto plain = RunNode(ConvOp(), {ConvX(), ConvW()});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ExpectValues((*plain)[0], {2, 3, 4.5, 4, 9, 15}, "output");
  ExpectValues((*plain)[1], {2, 3, 5, 6}, "present_state", 0);
  // SiLU (and its alias swish): x / (1 + e⁻ˣ).
  const std::vector<double> silu = {1.761594, 2.857722, 4.450559, 3.928055, 8.998889, 15};
  for (const char* act : {"silu", "swish"}) {
    auto out = RunNode(ConvOp({Attribute::String("activation", act)}), {ConvX(), ConvW()});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], silu, act);
  }
}

TEST(CausalConvWithStateTest, InfersSymbolicShapesAndCost) {
  auto types = InferNode(ConvOp(), {F32({Dim::Symbol("B"), 4, Dim::Symbol("L")}), F32({4, 1, 3})});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, 4, L]");
  EXPECT_EQ((*types)[1].shape.ToString(), "[B, 4, 2]");
  EXPECT_EQ((*types)[1].dtype, DType::kFloat);
  // A symbolic kernel width: the state length comes from past_state, else a
  // fresh symbol (never the weight's own "K", which is the width, not k − 1).
  auto from_past = InferNode(ConvOp(), {F32({Dim::Symbol("B"), 4, 7}), F32({4, 1, Dim::Symbol("K")}),
                                        TypeInfo(), F32({Dim::Symbol("B"), 4, 3})});
  ASSERT_TRUE(from_past.ok()) << from_past.status();
  EXPECT_EQ((*from_past)[1].shape.ToString(), "[B, 4, 3]");
  auto fresh = InferNode(ConvOp(), {TypeInfo::Tensor(DType::kFloat16, Shape({2, Dim::Symbol("C"), 7})),
                                    TypeInfo::Tensor(DType::kFloat16, Shape({Dim::Symbol("C"), 1, Dim::Symbol("K")}))});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)[0].dtype, DType::kFloat16);
  EXPECT_EQ((*fresh)[0].shape.ToString(), "[2, C, 7]");
  const Dim& state = (*fresh)[1].shape[2];
  EXPECT_TRUE(state.is_symbol());
  EXPECT_NE(state.symbol(), "K");
  // k MACs per output element; bias and SiLU add FLOPs.
  Tensor w = Tensor::FromVector<float>(std::vector<float>(12, 1), {4, 1, 3});
  auto tc = NodeTraits(ConvOp({Attribute::String("activation", "silu")}), {F32({2, 4, 8}), F32({4, 1, 3})},
                       {nullptr, &w});
  EXPECT_TRUE(tc.cost.known);
  EXPECT_EQ(tc.cost.macs, 2 * 4 * 8 * 3);
  EXPECT_EQ(tc.cost.flops, 2 * tc.cost.macs + 2 * 4 * 8 * 7);
  EXPECT_EQ(tc.cost.params, 12);
  EXPECT_EQ(tc.traits.linearity, Linearity::kNonlinear);
  EXPECT_TRUE(tc.traits.trainable);
}

TEST(CausalConvWithStateTest, BadInputsAreErrorsNamingTheNode) {
  const char* op = "CausalConvWithState";
  ExpectErrorNaming(RunNode(ConvOp(), {ConvX(), F(std::vector<float>(12, 1), {2, 2, 3})}).status(), op,
                    "not depthwise");
  ExpectErrorNaming(RunNode(ConvOp(), {ConvX(), ConvW(), Tensor(), F({1, 2, 3, 4, 5, 6}, {1, 2, 3})}).status(), op,
                    "past_state has 3 positions");
  ExpectErrorNaming(RunNode(ConvOp(), {ConvX(), F({1, 1, 1}, {1, 1, 3})}).status(), op, "channels is 2");
  ExpectErrorNaming(RunNode(ConvOp({Attribute::String("activation", "relu")}), {ConvX(), ConvW()}).status(), op,
                    "activation 'relu'");
  ExpectErrorNaming(InferNode(ConvOp(), {F32({1, 2, 3, 1}), F32({2, 1, 3})}).status(), op, "input");
}

// ---- LinearAttention ----

SingleNode LinOp(const std::string& rule, std::vector<Attribute> extra = {}, int64_t q_heads = 1,
                 int64_t kv_heads = 1) {
  std::vector<Attribute> attrs = {Attribute::String("update_rule", rule), Attribute::Int("q_num_heads", q_heads),
                                  Attribute::Int("kv_num_heads", kv_heads)};
  for (Attribute& a : extra) attrs.push_back(std::move(a));
  return Op("LinearAttention", std::move(attrs), 27, 2);
}

Attribute Scale1() { return Attribute::Float("scale", 1.0f); }

// One batch and head, T = 2, d_k = 2, d_v = 1: q = (1, 0), (1, 1);
// k = (1, 0), (1, 1); v = 2, 3. State S is a column [S0; S1].
Tensor LinQ() { return F({1, 0, 1, 1}, {1, 2, 2}); }
Tensor LinK() { return F({1, 0, 1, 1}, {1, 2, 2}); }
Tensor LinV() { return F({2, 3}, {1, 2, 1}); }
const float kLnHalf = std::log(0.5f);

TEST(LinearAttentionTest, EveryUpdateRule) {
  // linear: S = [2; 0], o = 2; S = [2 + 3; 0 + 3] = [5; 3], o = 5 + 3 = 8.
  auto linear = RunNode(LinOp("linear", {Scale1()}), {LinQ(), LinK(), LinV()});
  ASSERT_TRUE(linear.ok()) << linear.status();
  ExpectValues((*linear)[0], {2, 8}, "linear output");
  EXPECT_EQ((*linear)[1].dims(), (std::vector<int64_t>{1, 1, 2, 1}));
  ExpectValues((*linear)[1], {5, 3}, "linear present_state");

  // gated, per-head decay g = ln ½: S = [2; 0]; S = ½·[2; 0] + [3; 3] = [4; 3], o = 7.
  Tensor g = F({kLnHalf, kLnHalf}, {1, 2, 1});
  auto gated = RunNode(LinOp("gated", {Scale1()}), {LinQ(), LinK(), LinV(), Tensor(), g});
  ASSERT_TRUE(gated.ok()) << gated.status();
  ExpectValues((*gated)[0], {2, 7}, "gated output");
  ExpectValues((*gated)[1], {4, 3}, "gated present_state");
  // Decay per key feature ([B, T, H·d_k]); at t = 1 feature 0 keeps its
  // state: S = [2 + 3; ½·0 + 3] = [5; 3], o = 8.
  Tensor g_key = F({kLnHalf, kLnHalf, 0, kLnHalf}, {1, 2, 2});
  auto per_key = RunNode(LinOp("gated", {Scale1()}), {LinQ(), LinK(), LinV(), Tensor(), g_key});
  ASSERT_TRUE(per_key.ok()) << per_key.status();
  ExpectValues((*per_key)[0], {2, 8}, "per-key gated output");
  ExpectValues((*per_key)[1], {5, 3}, "per-key gated present_state");

  // delta, β = 1: Sᵀk = 0, u = 2, S = [2; 0], o = 2; Sᵀk = 2, u = 3 − 2 = 1,
  // S = [3; 1], o = 4.
  Tensor beta1 = F({1, 1}, {1, 2, 1});
  auto delta = RunNode(LinOp("delta", {Scale1()}), {LinQ(), LinK(), LinV(), Tensor(), Tensor(), beta1});
  ASSERT_TRUE(delta.ok()) << delta.status();
  ExpectValues((*delta)[0], {2, 4}, "delta output");
  ExpectValues((*delta)[1], {3, 1}, "delta present_state");

  // gated_delta, g = ln ½, β = ½: u = ½·2 = 1, S = [1; 0], o = 1; S' = [½; 0],
  // S'ᵀk = ½, u = ½·(3 − ½) = 1.25, S = [1.75; 1.25], o = 3.
  Tensor beta_half = F({0.5f, 0.5f}, {1, 2, 1});
  auto gd = RunNode(LinOp("gated_delta", {Scale1()}), {LinQ(), LinK(), LinV(), Tensor(), g, beta_half});
  ASSERT_TRUE(gd.ok()) << gd.status();
  ExpectValues((*gd)[0], {1, 3}, "gated_delta output");
  ExpectValues((*gd)[1], {1.75, 1.25}, "gated_delta present_state");
}

TEST(LinearAttentionTest, DefaultScaleGroupedHeadsAndPastState) {
  // scale 0 (the default): 1/√d_k = 1/√2 times the linear outputs 2, 8.
  auto scaled = RunNode(LinOp("linear"), {LinQ(), LinK(), LinV()});
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  ExpectValues((*scaled)[0], {1.414214, 5.656854}, "default scale");
  // Two query heads over one KV head: head 1's queries (0, 1), (1, 0) read the
  // same states [2; 0], [5; 3]: 0 and 5. Output is [B, T, H_q·d_v].
  Tensor q2 = F({1, 0, 0, 1, 1, 1, 1, 0}, {1, 2, 4});
  auto gqa = RunNode(LinOp("linear", {Scale1()}, 2, 1), {q2, LinK(), LinV()});
  ASSERT_TRUE(gqa.ok()) << gqa.status();
  EXPECT_EQ((*gqa)[0].dims(), (std::vector<int64_t>{1, 2, 2}));
  ExpectValues((*gqa)[0], {2, 0, 8, 5}, "GQA output");
  // A past state [1; 1]: S = [3; 1], o = 3; S = [6; 4], o = 10.
  auto past = RunNode(LinOp("linear", {Scale1()}), {LinQ(), LinK(), LinV(), F({1, 1}, {1, 1, 2, 1})});
  ASSERT_TRUE(past.ok()) << past.status();
  ExpectValues((*past)[0], {3, 10}, "past output");
  ExpectValues((*past)[1], {6, 4}, "past present_state");
}

TEST(LinearAttentionTest, InfersSymbolicShapesAndCost) {
  Dim b = Dim::Symbol("B"), t = Dim::Symbol("T");
  auto half = [](std::vector<Dim> d) { return TypeInfo::Tensor(DType::kFloat16, Shape(std::move(d))); };
  // H_q = 4, H_kv = 2: d_k = 32/4 = 8, d_v = 24/2 = 12; the state keeps past_state's float.
  auto types = InferNode(LinOp("gated_delta", {}, 4, 2),
                         {half({b, t, 32}), half({b, t, 16}), half({b, t, 24}), F32({b, 2, 8, 12}),
                          half({b, t, 2}), half({b, t, 2})});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kFloat16);
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, T, 48]");
  EXPECT_EQ((*types)[1].dtype, DType::kFloat);
  EXPECT_EQ((*types)[1].shape.ToString(), "[B, 2, 8, 12]");
  // Without past_state the state is in the query's dtype; an unknown value
  // size gives fresh symbols for d_v and the output's hidden size.
  auto fresh = InferNode(LinOp("linear", {}, 4, 2),
                         {half({b, t, 32}), half({b, t, 16}), half({b, t, Dim::Symbol("V")})});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)[1].dtype, DType::kFloat16);
  EXPECT_TRUE((*fresh)[0].shape[2].is_symbol());
  EXPECT_NE((*fresh)[0].shape[2].symbol(), "V");
  EXPECT_EQ((*fresh)[1].shape[2].ToString(), "8");
  EXPECT_TRUE((*fresh)[1].shape[3].is_symbol());
  // MACs per token: KV heads' write (and delta read) plus each query head's read.
  auto tc = NodeTraits(LinOp("delta", {}, 4, 2),
                       {F32({2, 3, 32}), F32({2, 3, 16}), F32({2, 3, 24}), TypeInfo(), TypeInfo(), F32({2, 3, 2})}, {});
  EXPECT_TRUE(tc.cost.known);
  EXPECT_EQ(tc.cost.macs, 2 * 3 * (2 * 8 * 12 * 2 + 4 * 8 * 12));
  EXPECT_EQ(tc.traits.semantic_name, "LinearAttention");
}

TEST(LinearAttentionTest, BadInputsAreErrorsNamingTheNode) {
  const char* op = "LinearAttention";
  Tensor g = F({0, 0}, {1, 2, 1});
  ExpectErrorNaming(RunNode(LinOp("gated"), {LinQ(), LinK(), LinV()}).status(), op, "needs decay");
  ExpectErrorNaming(RunNode(LinOp("linear"), {LinQ(), LinK(), LinV(), Tensor(), Tensor(), g}).status(), op,
                    "takes no beta");
  ExpectErrorNaming(RunNode(LinOp("linear", {}, 3, 2), {LinQ(), LinK(), LinV()}).status(), op,
                    "not a positive multiple");
  ExpectErrorNaming(RunNode(LinOp("rwkv"), {LinQ(), LinK(), LinV()}).status(), op, "update_rule 'rwkv'");
  ExpectErrorNaming(RunNode(LinOp("gated"), {LinQ(), LinK(), LinV(), Tensor(), F({0, 0, 0, 0, 0, 0}, {1, 2, 3})})
                        .status(),
                    op, "decay's last dim 3");
  ExpectErrorNaming(RunNode(LinOp("linear"), {LinQ(), LinK(), LinV(), F({1, 1, 1, 1}, {1, 2, 2, 1})}).status(), op,
                    "past_state has 2 heads");
  ExpectErrorNaming(RunNode(Op("LinearAttention", {Attribute::String("update_rule", "linear")}, 27, 2),
                            {LinQ(), LinK(), LinV()})
                        .status(),
                    op, "required");
  ExpectErrorNaming(InferNode(LinOp("linear", {}, 2, 1), {F32({1, 2, 5}), F32({1, 2, 2}), F32({1, 2, 1})}).status(),
                    op, "does not split into 2 heads");
}

}  // namespace
}  // namespace aic

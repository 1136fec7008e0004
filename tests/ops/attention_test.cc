// Tests of the attention family (ops/nn/attention.cc, rotary_embedding.cc):
// Attention's scores, causal frontier with and without a past, grouped-query
// heads, boolean vs numeric masks, softcap and the qk_matmul_output modes;
// RotaryEmbedding half-split vs interleaved, partial rotation, 3-D inputs.
// Expected values are numpy's (float64, the formulas of the ONNX spec, not
// onnx.reference), pasted as literals.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/op_expect.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::ExpectErrorNaming;
using testing::ExpectValues;
using testing::InferNode;
using testing::Op;
using testing::RunNode;
using testing::SingleNode;

constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }

SingleNode AttentionOp(std::vector<Attribute> attrs = {}, size_t outputs = 1, int64_t opset = 23) {
  return Op("Attention", std::move(attrs), opset, outputs);
}

// Q = [[1,0],[0,1]], K = [[1,0],[0,1],[1,1]], V = [[1,2],[3,4],[5,6]], one
// batch and head: scores Q·Kᵀ/√2 = [[.707, 0, .707], [0, .707, .707]].
Tensor Q() { return F({1, 0, 0, 1}, {1, 1, 2, 2}); }
Tensor K() { return F({1, 0, 0, 1, 1, 1}, {1, 1, 3, 2}); }
Tensor V() { return F({1, 2, 3, 4, 5, 6}, {1, 1, 3, 2}); }

TEST(AttentionTest, ScaledDotProductWithPresentAndScores) {
  auto out = RunNode(AttentionOp({}, 4), {Q(), K(), V()});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {3, 4, 3.406673, 4.406673}, "Y");
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 2, 2}));
  // No past: present_key/value are K and V.
  ExpectValues((*out)[1], {1, 0, 0, 1, 1, 1}, "present_key", 0);
  ExpectValues((*out)[2], {1, 2, 3, 4, 5, 6}, "present_value", 0);
  // Mode 0: the scaled product itself.
  ExpectValues((*out)[3], {0.7071068, 0, 0.7071068, 0, 0.7071068, 0.7071068}, "qk");
  // An explicit scale of 1/√2 is the default.
  auto scaled = RunNode(AttentionOp({Attribute::Float("scale", 1 / std::sqrt(2.0f))}), {Q(), K(), V()});
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  ExpectValues((*scaled)[0], {3, 4, 3.406673, 4.406673}, "Y scaled");
}

TEST(AttentionTest, CausalFrontierMovesWithThePast) {
  // Without a past, query 0 sees key 0 only: its output is V[0] exactly.
  auto causal = RunNode(AttentionOp({Attribute::Int("is_causal", 1)}), {Q(), K(), V()});
  ASSERT_TRUE(causal.ok()) << causal.status();
  ExpectValues((*causal)[0], {1, 2, 2.339523, 3.339523}, "causal Y");
  // The same keys, the first one as past: query i now sees keys <= i + 1.
  std::vector<Tensor> in = {Q(), F({0, 1, 1, 1}, {1, 1, 2, 2}), F({3, 4, 5, 6}, {1, 1, 2, 2}), Tensor(),
                            F({1, 0}, {1, 1, 1, 2}), F({1, 2}, {1, 1, 1, 2})};
  auto past = RunNode(AttentionOp({Attribute::Int("is_causal", 1)}, 3), in);
  ASSERT_TRUE(past.ok()) << past.status();
  ExpectValues((*past)[0], {1.660477, 2.660477, 3.406673, 4.406673}, "causal past Y");
  EXPECT_EQ((*past)[1].dims(), (std::vector<int64_t>{1, 1, 3, 2}));
  ExpectValues((*past)[1], {1, 0, 0, 1, 1, 1}, "present_key = past ++ K", 0);
  ExpectValues((*past)[2], {1, 2, 3, 4, 5, 6}, "present_value = past ++ V", 0);
}

TEST(AttentionTest, BoolMaskIsMinusInfinityWhereFalse) {
  Tensor bool_mask(DType::kBool, {2, 3});
  const bool keep[] = {true, false, true, true, true, false};
  for (int i = 0; i < 6; ++i) bool_mask.mutable_data<bool>()[i] = keep[i];
  auto by_bool = RunNode(AttentionOp(), {Q(), K(), V(), bool_mask});
  ASSERT_TRUE(by_bool.ok()) << by_bool.status();
  ExpectValues((*by_bool)[0], {3, 4, 2.339523, 3.339523}, "bool mask Y");
  // The same mask as 0 / -inf floats gives the same output ...
  auto by_float = RunNode(AttentionOp(), {Q(), K(), V(), F({0, -kInf, 0, 0, 0, -kInf}, {2, 3})});
  ASSERT_TRUE(by_float.ok()) << by_float.status();
  ExpectValues((*by_float)[0], {3, 4, 2.339523, 3.339523}, "float mask Y");
  // ... while a numeric mask is added to the scores, not read as keep/drop.
  auto added = RunNode(AttentionOp(), {Q(), K(), V(), F({0.5f, 0, -1, 0, 1, 0}, {2, 3})});
  ASSERT_TRUE(added.ok()) << added.status();
  ExpectValues((*added)[0], {1.979274, 2.979274, 3.240745, 4.240745}, "additive mask Y");
  // A mask shorter than the keys: the keys past its end are masked.
  auto short_mask = RunNode(AttentionOp(), {Q(), K(), V(), F({0.5f, 0, 0, 1}, {2, 2})});
  ASSERT_TRUE(short_mask.ok()) << short_mask.status();
  ExpectValues((*short_mask)[0], {1.460427, 2.460427, 2.692921, 3.692921}, "short mask Y");
}

TEST(AttentionTest, FullyMaskedRowGivesZeros) {
  Tensor mask(DType::kBool, {2, 3});
  const bool keep[] = {false, false, false, true, true, true};
  for (int i = 0; i < 6; ++i) mask.mutable_data<bool>()[i] = keep[i];
  auto out = RunNode(AttentionOp(), {Q(), K(), V(), mask});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {0, 0, 3.406673, 4.406673}, "Y");
  EXPECT_FALSE(std::isnan((*out)[0].ElementAsDouble(0)));
}

TEST(AttentionTest, SoftcapAndEveryScoreOutputMode) {
  // softcap 0.5: s -> 0.5·tanh(s / 0.5), before the additive mask.
  Tensor mask = F({0.5f, 0, -1, 0, 1, 0}, {2, 3});
  const std::vector<std::vector<double>> want = {
      {0.7071068, 0, 0.7071068, 0, 0.7071068, 0.7071068},                  // 0: Q·Kᵀ·scale
      {0.4441928, 0, 0.4441928, 0, 0.4441928, 0.4441928},                  // 1: softcapped
      {0.9441928, 0, -0.5558072, 0, 1.444193, 0.4441928},                  // 2: + mask
      {0.6202998, 0.2412926, 0.1384076, 0.1471094, 0.623513, 0.2293776}};  // 3: softmax
  for (int64_t mode = 0; mode < 4; ++mode) {
    auto out = RunNode(AttentionOp({Attribute::Float("softcap", 0.5f), Attribute::Int("qk_matmul_output_mode", mode)}, 4),
                       {Q(), K(), V(), mask});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], {2.036216, 3.036216, 3.164536, 4.164536}, "softcapped Y");
    ExpectValues((*out)[3], want[static_cast<size_t>(mode)], "qk mode " + std::to_string(mode));
  }
}

TEST(AttentionTest, GroupedQueryHeadsShareKeyValueHeads) {
  // 3-D, 4 query heads over 2 KV heads: query heads 0, 1 read KV head 0; 2, 3 read head 1.
  Tensor q = F({0.27f, -0.46f, -0.92f, -0.97f, 0.63f, 0.83f, 0.21f, 0.46f, 0.09f, 0.87f, 0.63f, -0.99f, 0.71f,
                -0.93f, 0.46f, -0.65f},
               {1, 2, 8});
  Tensor k = F({0.73f, 0.08f, -0.4f, -0.15f, -0.94f, -0.75f, 0.34f, 0.29f, 0.23f, -0.23f, 0.99f, 0.96f}, {1, 3, 4});
  Tensor v = F({0.37f, 0.3f, 0.38f, -0.22f, -0.73f, 0.44f, 0.05f, -0.38f, -0.03f, 0.78f, 0.87f, -0.28f}, {1, 3, 4});
  auto out = RunNode(AttentionOp({Attribute::Int("q_num_heads", 4), Attribute::Int("kv_num_heads", 2)}, 3), {q, k, v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 2, 8}));
  ExpectValues((*out)[0],
               {-0.1201441, 0.5082395, -0.4408249, 0.495631, 0.5610233, -0.2988606, 0.488411, -0.2969779,
                -0.02048674, 0.4964791, -0.09848325, 0.5096419, 0.4180675, -0.2959014, 0.4200368, -0.2947249},
               "GQA Y");
  // present_key is head-major [B, kv_heads, S, head].
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 2, 3, 2}));
  ExpectValues((*out)[1], {0.73, 0.08, -0.94, -0.75, 0.23, -0.23, -0.4, -0.15, 0.34, 0.29, 0.99, 0.96},
               "present_key");
  auto types = InferNode(AttentionOp({Attribute::Int("q_num_heads", 4), Attribute::Int("kv_num_heads", 2)}, 4),
                         {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("B"), 2, 8})),
                          TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("B"), 3, 4})),
                          TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("B"), 3, 4}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, 2, 8]");
  EXPECT_EQ((*types)[3].shape.ToString(), "[B, 4, 2, 3]");
}

TEST(AttentionTest, NonpadKvSeqlenHidesTheCachePadding) {
  // Opset 24: only the first 2 of the 3 keys are valid; causal ends the query
  // block at the last valid key (offset 2 - q_len = 0).
  std::vector<Tensor> in = {Q(), K(), V(), Tensor(), Tensor(), Tensor(), Tensor::FromVector<int64_t>({2}, {1})};
  auto out = RunNode(AttentionOp({}, 1, 24), in);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {1.660477, 2.660477, 2.339523, 3.339523}, "nonpad Y");
  auto causal = RunNode(AttentionOp({Attribute::Int("is_causal", 1)}, 1, 24), in);
  ASSERT_TRUE(causal.ok()) << causal.status();
  ExpectValues((*causal)[0], {1, 2, 2.339523, 3.339523}, "nonpad causal Y");
  in[4] = F({1, 0}, {1, 1, 1, 2});
  in[5] = F({1, 2}, {1, 1, 1, 2});
  ExpectErrorNaming(RunNode(AttentionOp({}, 1, 24), in).status(), "Attention", "cannot be combined");
}

TEST(AttentionTest, BadInputsAreErrorsNamingTheNode) {
  ExpectErrorNaming(RunNode(AttentionOp(), {Q(), F({1, 0, 0, 1, 1, 1}, {1, 3, 2}), V()}).status(), "Attention",
                    "same rank");
  ExpectErrorNaming(RunNode(AttentionOp(), {F({1, 0}, {1, 1, 2}), F({1, 0}, {1, 1, 2}), F({1, 0}, {1, 1, 2})}).status(),
                    "Attention", "q_num_heads");
  // 3 query heads cannot group over 2 KV heads.
  ExpectErrorNaming(RunNode(AttentionOp(), {F(std::vector<float>(6, 1), {1, 3, 1, 2}), F({1, 0, 0, 1}, {1, 2, 1, 2}),
                                            F({1, 0, 0, 1}, {1, 2, 1, 2})})
                        .status(),
                    "Attention", "do not group");
  ExpectErrorNaming(RunNode(AttentionOp(), {Q(), K(), V(), F(std::vector<float>(9, 0), {3, 3})}).status(), "Attention",
                    "does not broadcast");
  ExpectErrorNaming(RunNode(AttentionOp(), {Q(), K(), V(), Tensor(), F({1, 0}, {1, 1, 1, 2})}).status(), "Attention",
                    "together");
  ExpectErrorNaming(RunNode(AttentionOp({Attribute::Int("qk_matmul_output_mode", 4)}), {Q(), K(), V()}).status(),
                    "Attention", "qk_matmul_output_mode");
  EXPECT_FALSE(InferNode(AttentionOp(), {TypeInfo::Tensor(DType::kFloat, Shape({1, 3, 1, 2})),
                                         TypeInfo::Tensor(DType::kFloat, Shape({1, 2, 1, 2})),
                                         TypeInfo::Tensor(DType::kFloat, Shape({1, 2, 1, 2}))})
                   .ok());
}

// ---- RotaryEmbedding ----

// X [1, 1, 2, 4] = [[1,2,3,4], [5,6,7,8]]; caches [3, 2] of angles
// [[0, 0], [0.5, 1], [1, 2]]; position_ids [[2, 0]] (token 1 is not rotated).
Tensor RopeX() { return F({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}); }
Tensor Cos() { return F({1, 1, 0.8775826f, 0.5403023f, 0.5403023f, -0.4161468f}, {3, 2}); }
Tensor Sin() { return F({0, 0, 0.4794255f, 0.841471f, 0.841471f, 0.9092974f}, {3, 2}); }
Tensor Positions() { return Tensor::FromVector<int64_t>({2, 0}, {1, 2}); }

TEST(RotaryEmbeddingTest, HalfSplitAndInterleavedPairs) {
  // Half split pairs (x0, x2), (x1, x3); interleaved pairs (x0, x1), (x2, x3).
  auto split = RunNode(Op("RotaryEmbedding", {}, 23), {RopeX(), Cos(), Sin(), Positions()});
  ASSERT_TRUE(split.ok()) << split.status();
  ExpectValues((*split)[0], {-1.984111, -4.469483, 2.462378, 0.1540075, 5, 6, 7, 8}, "half split");
  auto inter = RunNode(Op("RotaryEmbedding", {Attribute::Int("interleaved", 1)}, 23),
                       {RopeX(), Cos(), Sin(), Positions()});
  ASSERT_TRUE(inter.ok()) << inter.status();
  ExpectValues((*inter)[0], {-1.14264, 1.922076, -4.88563, 1.063305, 5, 6, 7, 8}, "interleaved");
}

TEST(RotaryEmbeddingTest, PartialRotationAndPerTokenCaches) {
  // rotary_embedding_dim 2: only (x0, x1) turns, by the first angle; x2, x3 pass.
  auto partial = RunNode(Op("RotaryEmbedding", {Attribute::Int("rotary_embedding_dim", 2)}, 23),
                         {RopeX(), F({1, 0.8775826f, 0.5403023f}, {3, 1}), F({0, 0.4794255f, 0.841471f}, {3, 1}),
                          Positions()});
  ASSERT_TRUE(partial.ok()) << partial.status();
  ExpectValues((*partial)[0], {-1.14264, 1.922076, 3, 4, 5, 6, 7, 8}, "partial");
  // 3-D [B, S, heads·head] with per-token caches [B, S, dim/2] and no
  // position_ids: both heads rotate like the 4-D case.
  Tensor x3 = F({1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8}, {1, 2, 8});
  Tensor cos3 = F({0.5403023f, -0.4161468f, 1, 1}, {1, 2, 2});
  Tensor sin3 = F({0.841471f, 0.9092974f, 0, 0}, {1, 2, 2});
  auto three = RunNode(Op("RotaryEmbedding", {Attribute::Int("num_heads", 2)}, 23), {x3, cos3, sin3});
  ASSERT_TRUE(three.ok()) << three.status();
  ExpectValues((*three)[0],
               {-1.984111, -4.469483, 2.462378, 0.1540075, -1.984111, -4.469483, 2.462378, 0.1540075, 5, 6, 7, 8, 5,
                6, 7, 8},
               "3-D");
}

TEST(RotaryEmbeddingTest, BadInputsAreErrorsNamingTheNode) {
  ExpectErrorNaming(RunNode(Op("RotaryEmbedding", {Attribute::Int("rotary_embedding_dim", 3)}, 23),
                            {RopeX(), Cos(), Sin(), Positions()})
                        .status(),
                    "RotaryEmbedding", "rotary_embedding_dim 3");
  ExpectErrorNaming(RunNode(Op("RotaryEmbedding", {}, 23),
                            {RopeX(), Cos(), Sin(), Tensor::FromVector<int64_t>({3, 0}, {1, 2})})
                        .status(),
                    "RotaryEmbedding", "position id 3");
  ExpectErrorNaming(RunNode(Op("RotaryEmbedding", {}, 23), {RopeX(), F({1, 1}, {1, 2}), F({0, 0}, {1, 2}),
                                                            Positions()})
                        .status(),
                    "RotaryEmbedding", "outside the cache");
  ExpectErrorNaming(RunNode(Op("RotaryEmbedding", {}, 23), {RopeX(), F({1, 1, 1}, {3, 1}), F({0, 0, 0}, {3, 1}),
                                                            Positions()})
                        .status(),
                    "RotaryEmbedding", "does not fit");
  EXPECT_FALSE(InferNode(Op("RotaryEmbedding", {}, 23), {TypeInfo::Tensor(DType::kFloat, Shape({1, 2, 8})),
                                                         TypeInfo::Tensor(DType::kFloat, Shape({1, 2, 4})),
                                                         TypeInfo::Tensor(DType::kFloat, Shape({1, 2, 4}))})
                   .ok());
}

}  // namespace
}  // namespace aic

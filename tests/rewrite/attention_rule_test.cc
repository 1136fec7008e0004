// fuse_attention: scaled dot-product attention per head, as exporters write
// it (MatMul(Softmax(MatMul(Q, Kᵀ) * s + M), V)), becomes one Attention node
// from opset 23 on (or ai.aic's alias below it, for targets that run it), with
// the scale from a Mul or Div of the scores or of Q and Kᵀ each, and an
// additive mask of the scores' shape up to 1s. Near misses (a mask that
// broadcasts its last dim, a softmax over another axis, a scale that is not a
// constant, MatMuls that broadcast over heads, rank 3, a float16 NaN guard,
// a scale after the mask, a row that masks every key) stay as they are,
// bitwise; a float NaN guard folds in.
// Outputs match the reference executor's on random inputs. absorb_kv_repeat
// then lets grouped-query attention read repeat_kv's source heads.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rewrite/rules/rule.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using testing::MaxOutputDiff;
using testing::ModelFn;
using testing::OpCounts;
using testing::OptimizeModel;
using testing::OptimizeWith;

constexpr char kRule[] = "fuse_attention";
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

enum class Scale { kNone, kMul, kDiv, kBothSides, kInput, kAfterMask };
enum class Mask { kNone, kPadding, kCausal, kLastDimOne, kFullyMaskedRow };

struct Sdpa {
  Scale scale = Scale::kMul;
  float factor = 0.35f;  // the scale (√ of it on each side for kBothSides)
  Mask mask = Mask::kNone;
  bool kt_by_transpose = true;  // Kt = Transpose(K); else Kt is the input
  bool fp16 = false;            // Q, K, V, mask cast to float16 inside
  bool bf16 = false;            // ... or to bfloat16
  int64_t softmax_axis = -1;
  int64_t kv_heads = 2;  // 1: the MatMuls broadcast K and V over Q's 2 heads
  bool rank3 = false;    // [B·H, S, D] tensors
  bool probs_output = false;  // the softmax is a graph output too
  bool nan_guard = false;     // Where(IsNaN(P), 0, P) before the product
  bool symbolic_batch = false;
  bool symbolic_queries = false;  // Q's rows "sq"
  int64_t opset = 23;
  // K and V as transformers' repeat_kv makes them from 1 head for Q's 2:
  // Reshape(Expand(Unsqueeze(x, [2]), [B, 1, 2, S, D]), [B, 2, S, D]); with
  // repeat_k_only, V is a 2-head input.
  bool repeat_kv = false;
  bool repeat_k_only = false;
};

constexpr int64_t kB = 2, kH = 2, kSq = 3, kSkv = 5, kD = 4, kDv = 6;

ModelFn Build(Sdpa s) {
  return [s] {
    GraphBuilder b;
    Dim batch = s.symbolic_batch ? Dim::Symbol("n") : Dim(kB);
    auto dims = [&](int64_t heads, int64_t rows, int64_t cols) -> std::vector<Dim> {
      if (s.rank3) return {kB * heads, rows, cols};
      return {batch, heads, rows, cols};
    };
    auto cast = [&](Value* v) {
      if (!s.fp16 && !s.bf16) return v;
      DType t = s.fp16 ? DType::kFloat16 : DType::kBFloat16;
      return b.Op("Cast", {v}, {Attribute::Int("to", static_cast<int64_t>(t))});
    };
    auto scalar = [&](const std::string& name, float v) { return cast(b.Constant(name, Tensor::Scalar<float>(v))); };
    std::vector<Dim> q_dims = dims(kH, kSq, kD);
    if (s.symbolic_queries) q_dims[q_dims.size() - 2] = Dim::Symbol("sq");
    Value* q = cast(b.Input("q", DType::kFloat, q_dims));
    auto repeated = [&](const std::string& name, int64_t cols) {
      Value* x = b.Input(name, DType::kFloat, dims(1, kSkv, cols));
      Value* u = b.Op("Unsqueeze", {x, b.Constant(name + "_axes", Tensor::FromVector<int64_t>({2}, {1}))});
      Value* e = b.Op("Expand", {u, b.Constant(name + "_to", Tensor::FromVector<int64_t>({kB, 1, kH, kSkv, cols}, {5}))});
      return b.Op("Reshape", {e, b.Constant(name + "_shape", Tensor::FromVector<int64_t>({kB, kH, kSkv, cols}, {4}))});
    };
    Value* k_in = s.repeat_kv ? cast(repeated("k", kD)) : cast(b.Input("k", DType::kFloat, dims(s.kv_heads, kSkv, kD)));
    Value* kt = s.kt_by_transpose
                    ? b.Op("Transpose", {k_in},
                           {Attribute::Ints("perm", s.rank3 ? std::vector<int64_t>{0, 2, 1}
                                                            : std::vector<int64_t>{0, 1, 3, 2})})
                    : cast(b.Input("kt", DType::kFloat, dims(s.kv_heads, kD, kSkv)));
    Value* v = s.repeat_kv && !s.repeat_k_only ? cast(repeated("v", kDv))
                                               : cast(b.Input("v", DType::kFloat, dims(s.kv_heads, kSkv, kDv)));
    if (s.scale == Scale::kBothSides) {
      q = b.Op("Mul", {q, scalar("sq", std::sqrt(s.factor))});
      kt = b.Op("Mul", {scalar("sk", std::sqrt(s.factor)), kt});
    }
    Value* scores = b.Op("MatMul", {q, kt});
    switch (s.scale) {
      case Scale::kMul: scores = b.Op("Mul", {scores, scalar("scale", s.factor)}); break;
      case Scale::kDiv: scores = b.Op("Div", {scores, scalar("scale", 1.f / s.factor)}); break;
      case Scale::kInput: {
        Value* k = cast(b.Input("scale", DType::kFloat, {}));
        scores = b.Op("Mul", {scores, k});
        break;
      }
      default: break;
    }
    Value* mask = nullptr;
    switch (s.mask) {
      case Mask::kPadding: mask = b.Input("mask", DType::kFloat, {batch, 1, 1, kSkv}); break;
      case Mask::kLastDimOne: mask = b.Input("mask", DType::kFloat, {batch, 1, kSq, 1}); break;
      case Mask::kCausal:
      case Mask::kFullyMaskedRow: {
        // Key j visible to query i iff j <= i + (Skv - Sq), bottom-right like a cache.
        std::vector<float> m(kSq * kSkv, 0.f);
        for (int64_t i = 0; i < kSq; ++i)
          for (int64_t j = 0; j < kSkv; ++j)
            if (j > i + (kSkv - kSq) || (s.mask == Mask::kFullyMaskedRow && i == 1)) m[i * kSkv + j] = kNegInf;
        mask = b.Constant("causal", Tensor::FromVector<float>(m, {1, 1, kSq, kSkv}));
        break;
      }
      case Mask::kNone: break;
    }
    if (mask != nullptr) scores = b.Op("Add", {scores, cast(mask)});
    if (s.scale == Scale::kAfterMask) scores = b.Op("Mul", {scores, scalar("scale", s.factor)});
    std::vector<Attribute> axis;
    if (s.softmax_axis != -1 || s.opset < 13) axis.push_back(Attribute::Int("axis", s.softmax_axis));
    Value* p = b.Op("Softmax", {scores}, axis);
    if (s.probs_output) b.Output(b.Op("Cast", {p}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}));
    if (s.nan_guard) {
      Value* zero = scalar("zero", 0.f);
      p = b.Op("Where", {b.Op("IsNaN", {p}), zero, p});
    }
    Value* y = b.Op("MatMul", {p, v});
    b.Output(s.fp16 || s.bf16 ? b.Op("Cast", {y}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}) : y);
    return b.Build(s.opset);
  };
}

const Node* FindNode(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes()) {
    if (n->op_type == op) return n.get();
  }
  return nullptr;
}

// A padding mask [B, 1, 1, Skv] is expanded over the queries (ONNX
// Runtime's Attention wants dim -2 to be the query count): by a constant
// shape, or by Q's shape where the query count is a symbol.
void ExpectFused(const Sdpa& s, double tolerance = 1e-4, int transposes = 0) {
  ModelFn build = Build(s);
  auto r = OptimizeWith(build, kRule, {"fold_constants", "compose_transposes"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts[kRule], 0) << kRule << " did not fire";
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Attention"], 1);
  EXPECT_EQ(counts["Softmax"], 0);
  EXPECT_EQ(counts["MatMul"], 0);
  EXPECT_EQ(counts["Transpose"], transposes);
  EXPECT_EQ(counts["Expand"], (s.mask == Mask::kPadding ? 1 : 0) + (s.repeat_kv ? (s.repeat_k_only ? 1 : 2) : 0));
  EXPECT_EQ(counts["Shape"], s.mask == Mask::kPadding && s.symbolic_queries ? 1 : 0);
  const Node* att = FindNode(*r.model->graph, "Attention");
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->domain, "");
  ASSERT_TRUE(att->HasAttr("scale"));
  // In float16 the scale is the product of the constants as rounded (√0.5 twice).
  EXPECT_NEAR(att->GetFloat("scale", 0), s.scale == Scale::kNone ? 1.0 : s.factor, s.fp16 || s.bf16 ? 1e-2 : 1e-6);
  EXPECT_EQ(att->num_outputs(), 1u);
  EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false), tolerance);
  EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false, /*seed=*/11), tolerance);
  // A second run finds nothing more.
  auto again = OptimizeModel(std::move(r.model), {kRule, "fold_constants", "compose_transposes"});
  EXPECT_EQ(again.stats.rule_counts.count(kRule), 0u);
}

void ExpectDeclined(const Sdpa& s) {
  ModelFn build = Build(s);
  auto r = OptimizeWith(build, kRule, {"fold_constants"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts.count(kRule), 0u);
  EXPECT_EQ(OpCounts(*r.model->graph)["Attention"], 0);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
}

TEST(FuseAttentionTest, PlainProduct) { ExpectFused({.scale = Scale::kNone}); }
TEST(FuseAttentionTest, MulScaled) { ExpectFused({.scale = Scale::kMul}); }
TEST(FuseAttentionTest, DivScaled) { ExpectFused({.scale = Scale::kDiv, .factor = 0.5f}); }
TEST(FuseAttentionTest, SqrtScaleOnBothSides) { ExpectFused({.scale = Scale::kBothSides, .factor = 0.125f}); }
TEST(FuseAttentionTest, PaddingMask) { ExpectFused({.mask = Mask::kPadding}); }
TEST(FuseAttentionTest, PaddingMaskSymbolicBatch) { ExpectFused({.mask = Mask::kPadding, .symbolic_batch = true}); }
TEST(FuseAttentionTest, PaddingMaskSymbolicQueries) {
  ExpectFused({.mask = Mask::kPadding, .symbolic_batch = true, .symbolic_queries = true});
}
TEST(FuseAttentionTest, CausalMask) { ExpectFused({.scale = Scale::kDiv, .mask = Mask::kCausal}); }
TEST(FuseAttentionTest, KtNotATranspose) { ExpectFused({.mask = Mask::kPadding, .kt_by_transpose = false}, 1e-4, 1); }
TEST(FuseAttentionTest, Float16) {
  ExpectFused({.scale = Scale::kBothSides, .factor = 0.5f, .mask = Mask::kCausal, .fp16 = true}, 2e-2);
}

TEST(FuseAttentionTest, BFloat16) {
  ExpectFused({.scale = Scale::kDiv, .factor = 0.5f, .mask = Mask::kPadding, .bf16 = true}, 1e-1);
}

// Near misses.
// absorb_kv_repeat: grouped-query attention reads the one key/value head
// itself; no repeat is left, the Attention's K and V have 1 head for Q's 2,
// and the outputs are bitwise the repeated form's.
TEST(AbsorbKvRepeatTest, GroupedQueryHeadsReadTheUnrepeatedKeysAndValues) {
  ExpectFused({.mask = Mask::kCausal, .repeat_kv = true});  // the repeat as given
  ModelFn build = Build({.mask = Mask::kCausal, .repeat_kv = true});
  auto fused = OptimizeWith(build, kRule, {"fold_constants"});
  ASSERT_NE(fused.model, nullptr);
  auto r = OptimizeModel(std::move(fused.model), {"absorb_kv_repeat"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts["absorb_kv_repeat"], 1);
  const Node* att = FindNode(*r.model->graph, "Attention");
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->input(1)->shape()[1], Dim(1));
  EXPECT_EQ(att->input(2)->shape()[1], Dim(1));
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Reshape"], 0);
  EXPECT_EQ(counts["Expand"], 0);
  EXPECT_LE(MaxOutputDiff(build, *r.model, /*bitwise=*/false), 1e-4);
  auto again = OptimizeModel(std::move(r.model), {"absorb_kv_repeat"});
  EXPECT_EQ(again.stats.rule_counts.count("absorb_kv_repeat"), 0u);
}
// Only K repeated: K and V must have the same heads, so both stay as given.
TEST(AbsorbKvRepeatTest, KeysRepeatedAloneStayRepeated) {
  ExpectFused({.repeat_kv = true, .repeat_k_only = true});
  auto fused = OptimizeWith(Build({.repeat_kv = true, .repeat_k_only = true}), kRule, {"fold_constants"});
  ASSERT_NE(fused.model, nullptr);
  auto r = OptimizeModel(std::move(fused.model), {"absorb_kv_repeat"});
  EXPECT_EQ(r.stats.rule_counts.count("absorb_kv_repeat"), 0u);
  EXPECT_EQ(OpCounts(*r.model->graph)["Expand"], 1);
}
TEST(FuseAttentionTest, DeclinesAMaskOfLastDimOne) { ExpectDeclined({.mask = Mask::kLastDimOne}); }
TEST(FuseAttentionTest, DeclinesSoftmaxOverAnotherAxis) { ExpectDeclined({.softmax_axis = 2}); }
TEST(FuseAttentionTest, DeclinesANonConstantScale) { ExpectDeclined({.scale = Scale::kInput}); }
TEST(FuseAttentionTest, DeclinesMatMulsBroadcastingOverHeads) { ExpectDeclined({.kv_heads = 1}); }
TEST(FuseAttentionTest, DeclinesRank3) { ExpectDeclined({.rank3 = true}); }
// torch's SDPA export guards the softmax with Where(IsNaN(P), 0, P): folded
// in for float (Attention zeroes a fully masked row by itself), kept for
// float16, whose scores can overflow to inf and make NaNs the guard hides.
TEST(FuseAttentionTest, FusesTheNanGuard) {
  Sdpa s{.mask = Mask::kCausal, .nan_guard = true};
  ExpectFused(s);
  auto r = OptimizeWith(Build(s), kRule, {"fold_constants", "compose_transposes"});
  ASSERT_NE(r.model, nullptr);
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Where"], 0);
  EXPECT_EQ(counts["IsNaN"], 0);
}
TEST(FuseAttentionTest, DeclinesAFloat16NanGuard) {
  ExpectDeclined({.scale = Scale::kDiv, .factor = 0.5f, .mask = Mask::kCausal, .fp16 = true, .nan_guard = true});
}
TEST(FuseAttentionTest, DeclinesAScaleAfterTheMask) { ExpectDeclined({.scale = Scale::kAfterMask, .mask = Mask::kPadding}); }
TEST(FuseAttentionTest, DeclinesAFullyMaskedRow) { ExpectDeclined({.mask = Mask::kFullyMaskedRow}); }
TEST(FuseAttentionTest, DeclinesBelowOpset23ForTheOnnxTarget) { ExpectDeclined({.opset = 17}); }
TEST(FuseAttentionTest, DeclinesOpset11SoftmaxOverAxis1) {
  Sdpa s{.softmax_axis = 1, .opset = 11};
  ModelFn build = Build(s);
  auto m = build();
  OptimizeOptions o;
  o.only_rules = {kRule};
  o.aic_ops = AllAicOps();
  ASSERT_TRUE(Optimize(*m, o).ok());
  EXPECT_EQ(OpCounts(*m->graph)["Attention"], 0);
}

// The softmax read by another node too: the rule need not require one use
// (the e-graph keeps the softmax for its other reader, and extraction pays
// for what it keeps), and the outputs stay.
TEST(FuseAttentionTest, SharedSoftmaxKeepsBothOutputs) {
  Sdpa s{.mask = Mask::kPadding, .probs_output = true};
  ModelFn build = Build(s);
  auto r = OptimizeWith(build, kRule, {"fold_constants"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts[kRule], 0);
  EXPECT_EQ(OpCounts(*r.model->graph)["Softmax"], 1);
  EXPECT_LE(MaxOutputDiff(build, *r.model, false), 1e-4);
}

// Below opset 23 the alias, for a target that runs it.
TEST(FuseAttentionTest, AliasBelowOpset23) {
  for (int64_t opset : {11, 17}) {
    Sdpa s{.scale = Scale::kDiv, .mask = Mask::kPadding, .softmax_axis = opset < 13 ? 3 : -1, .opset = opset};
    ModelFn build = Build(s);
    auto m = build();
    OptimizeOptions o;
    o.only_rules = {kRule, "fold_constants"};
    o.aic_ops = AllAicOps();
    ASSERT_TRUE(Optimize(*m, o).ok());
    const Node* att = FindNode(*m->graph, "Attention");
    ASSERT_NE(att, nullptr) << "opset " << opset;
    EXPECT_EQ(att->domain, "ai.aic");
    EXPECT_EQ(m->OpsetFor("ai.aic"), 1);
    EXPECT_LE(MaxOutputDiff(build, *m, false), 1e-4);
  }
}

// A BERT-like block through every rule: projections, heads split by
// Reshape/Transpose, K transposed straight to [B, H, D, S] (perm 0,2,3,1, so
// the rule adds a transpose that composes with it), Div by √D, a padding
// mask; extraction must pick the Attention over the pattern.
ModelFn BertBlock(int64_t opset) {
  return [opset] {
    constexpr int64_t B = 2, S = 7, H = 2, D = 4, E = H * D;
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {B, S, E});
    Value* mask = b.Input("mask", DType::kFloat, {B, 1, 1, S});
    auto weight = [&](const std::string& name, int seed) {
      std::vector<float> w(E * E);
      for (int64_t i = 0; i < E * E; ++i) w[i] = 0.05f * static_cast<float>((i * 7 + seed) % 13 - 6);
      return b.Constant(name, Tensor::FromVector<float>(w, {E, E}));
    };
    Value* shape = b.Constant("heads", Tensor::FromVector<int64_t>({B, S, H, D}, {4}));
    auto heads = [&](const std::string& name, int seed, std::vector<int64_t> perm) {
      Value* p = b.Op("MatMul", {x, weight(name, seed)});
      return b.Op("Transpose", {b.Op("Reshape", {p, shape})}, {Attribute::Ints("perm", perm)});
    };
    Value* q = heads("wq", 1, {0, 2, 1, 3});
    Value* kt = heads("wk", 2, {0, 2, 3, 1});
    Value* v = heads("wv", 3, {0, 2, 1, 3});
    Value* s = b.Op("Div", {b.Op("MatMul", {q, kt}), b.Constant("sqrt_d", Tensor::Scalar<float>(2.f))});
    Value* p = b.Op("Softmax", {b.Op("Add", {s, mask})}, {Attribute::Int("axis", -1)});
    Value* y = b.Op("Transpose", {b.Op("MatMul", {p, v})}, {Attribute::Ints("perm", {0, 2, 1, 3})});
    b.Output(b.Op("Reshape", {y, b.Constant("merged", Tensor::FromVector<int64_t>({B, S, E}, {3}))}));
    return b.Build(opset);
  };
}

TEST(FuseAttentionTest, BertBlockThroughEveryRule) {
  auto r = OptimizeWith(BertBlock(23), "");
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts[kRule], 0);
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["Attention"], 1);
  EXPECT_EQ(counts["Softmax"], 0);
  // The projections stay; the scores' products go.
  EXPECT_EQ(counts["MatMul"], 3);
  const Node* att = FindNode(*r.model->graph, "Attention");
  ASSERT_NE(att, nullptr);
  EXPECT_NEAR(att->GetFloat("scale", 0), 0.5, 1e-7);
  EXPECT_LE(MaxOutputDiff(BertBlock(23), *r.model, false), 1e-4);
}

TEST(FuseAttentionTest, BertBlockOpset17StaysForTheOnnxTarget) {
  auto r = OptimizeWith(BertBlock(17), "");
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(OpCounts(*r.model->graph)["Attention"], 0);
  EXPECT_EQ(OpCounts(*r.model->graph)["Softmax"], 1);
}

}  // namespace
}  // namespace aic::rewrite

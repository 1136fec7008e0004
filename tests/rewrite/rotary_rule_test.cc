// fuse_rotary_embedding: HF transformers' rotate-half RoPE,
//   x * cos + Concat(Neg(x[..., D/2:]), x[..., :D/2]) * sin,
// becomes RotaryEmbedding(x, cos_half, sin_half) from opset 23 on (or ai.aic's
// alias below it, for targets that run it), with cos/sin constant, built as
// Cos(Concat(f, f)) or Concat(Cos f, Cos f), or gathered from a constant table
// by position ids; operands in either order; the caches expanded over x's
// batch (known or symbolic) when they have batch 1. The rule is exact: outputs
// match the reference executor's bit for bit. Near misses (halves swapped in
// the Concat, Neg on the wrong half, slices not at D/2, cos with unequal
// halves or not provably equal ones, a 3-D x, a head axis not 1) stay as
// they are, bitwise. Partial rotation (the first r features rotated, the rest
// concatenated back) folds into rotary_embedding_dim; concatenated the other
// way round it does not.
#include <cmath>
#include <string>
#include <vector>

#include "graph/printer.h"
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

constexpr char kRule[] = "fuse_rotary_embedding";
constexpr char kPartialRule[] = "fuse_partial_rotary_embedding";

enum class Cache {
  kConst,          // constant [1, 1, S, D] with equal halves
  kConstBatch,     // constant [B, 1, S, D]
  kCosOfConcat,    // Unsqueeze(Cos(Concat(f, f)), 1), f an input [1, S, D/2]
  kConcatOfCos,    // Unsqueeze(Concat(Cos f, Cos f), 1)
  kGathered,       // Unsqueeze(Gather(table, position_ids), 1), table constant [P, D]
  kUnequalHalves,  // constant whose halves differ (near miss)
  kInput,          // a graph input: halves not provable (near miss)
  kHeads,          // constant [1, H, S, D] (near miss: head axis not 1)
};
enum class Rotate { kHalf, kSwapped, kNegFirstHalf, kOffCenter };

struct Rope {
  Cache cache = Cache::kConst;
  Rotate rotate = Rotate::kHalf;
  bool mirrored = false;  // Add(rot * sin, x * cos) with Mul(cos, x), Mul(sin, rot)
  bool rank3 = false;     // x [B, S, D] (near miss)
  bool symbolic_batch = false;
  bool q_and_k = false;  // two rotations sharing cos and sin
  // Partial rotation: the first kPartial features rotated, the rest
  // concatenated back (kPassFirst: in the wrong order, a near miss).
  enum { kFull, kPartial, kPassFirst } part = kFull;
  int64_t opset = 23;
  DType dtype = DType::kFloat;  // x and the caches cast to it inside the graph
};

constexpr int64_t kB = 2, kH = 3, kS = 5, kD = 8, kPositions = 9, kRot = 4;

// Angles (or anything) with equal halves on the last axis: [rows, D].
std::vector<float> EqualHalves(int64_t rows, float phase, int64_t width, bool equal = true) {
  std::vector<float> v(static_cast<size_t>(rows * width));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < width / 2; ++k) {
      float a = std::cos(phase + 0.37f * static_cast<float>(r) + 1.3f * static_cast<float>(k));
      v[r * width + k] = a;
      v[r * width + k + width / 2] = equal ? a : a + 0.25f;
    }
  }
  return v;
}

ModelFn Build(Rope s) {
  return [s] {
    GraphBuilder b;
    Dim batch = s.symbolic_batch ? Dim::Symbol("n") : Dim(kB);
    const int64_t w = s.part == Rope::kFull ? kD : kRot;  // the rotated width
    int constants = 0;  // initializer names must be unique
    auto ints = [&](std::vector<int64_t> v) {
      auto n = static_cast<int64_t>(v.size());
      return b.Constant("i" + std::to_string(constants++), Tensor::FromVector<int64_t>(v, {n}));
    };
    auto unsqueeze1 = [&](Value* v) { return b.Op("Unsqueeze", {v, ints({1})}); };
    auto cache = [&](const char* name, bool is_sin) -> Value* {
      float phase = is_sin ? 0.5f : 0.f;
      std::string n(name);
      switch (s.cache) {
        case Cache::kConst: return b.Constant(n, Tensor::FromVector<float>(EqualHalves(kS, phase, w), {1, 1, kS, w}));
        case Cache::kConstBatch:
          return b.Constant(n, Tensor::FromVector<float>(EqualHalves(kB * kS, phase, w), {kB, 1, kS, w}));
        case Cache::kUnequalHalves:
          return b.Constant(n, Tensor::FromVector<float>(EqualHalves(kS, phase, w, false), {1, 1, kS, w}));
        case Cache::kHeads:
          return b.Constant(n, Tensor::FromVector<float>(EqualHalves(kH * kS, phase, w), {1, kH, kS, w}));
        case Cache::kInput: return b.Input(n, DType::kFloat, {1, 1, kS, w});
        case Cache::kCosOfConcat:
        case Cache::kConcatOfCos: {
          Value* f = b.Input("freqs", DType::kFloat, {1, kS, w / 2});
          const char* op = is_sin ? "Sin" : "Cos";
          Value* e = s.cache == Cache::kCosOfConcat
                         ? b.Op(op, {b.Op("Concat", {f, f}, {Attribute::Int("axis", -1)})})
                         : b.Op("Concat", {b.Op(op, {f}), b.Op(op, {f})}, {Attribute::Int("axis", 2)});
          return unsqueeze1(e);
        }
        case Cache::kGathered: {
          Value* table = b.Constant(n + "_table", Tensor::FromVector<float>(EqualHalves(kPositions, phase, w), {kPositions, w}));
          return unsqueeze1(b.Op("Gather", {table, b.Input("position_ids", DType::kInt64, {batch, kS})}));
        }
      }
      return nullptr;
    };
    auto cast = [&](Value* v) {
      return s.dtype == DType::kFloat ? v : b.Op("Cast", {v}, {Attribute::Int("to", static_cast<int64_t>(s.dtype))});
    };
    Value* cos = cast(cache("cos", false));
    Value* sin = cast(cache("sin", true));
    int64_t last = s.rank3 ? 2 : 3;
    auto slice = [&](Value* x, int64_t start, int64_t end) {
      return b.Op("Slice", {x, ints({start}), ints({end}), ints({last}), ints({1})});
    };
    auto rope = [&](Value* x) {
      // Exporters write the second half's end as INT64_MAX.
      int64_t cut = s.rotate == Rotate::kOffCenter ? w / 2 - 1 : w / 2;
      Value* first = slice(x, 0, cut);
      Value* second = slice(x, cut, INT64_MAX);
      Value* rot = nullptr;
      switch (s.rotate) {
        case Rotate::kHalf:
        case Rotate::kOffCenter: rot = b.Op("Concat", {b.Op("Neg", {second}), first}, {Attribute::Int("axis", -1)}); break;
        case Rotate::kSwapped: rot = b.Op("Concat", {first, b.Op("Neg", {second})}, {Attribute::Int("axis", -1)}); break;
        case Rotate::kNegFirstHalf: rot = b.Op("Concat", {second, b.Op("Neg", {first})}, {Attribute::Int("axis", -1)}); break;
      }
      if (s.mirrored) return b.Op("Add", {b.Op("Mul", {sin, rot}), b.Op("Mul", {cos, x})});
      return b.Op("Add", {b.Op("Mul", {x, cos}), b.Op("Mul", {rot, sin})});
    };
    auto partial = [&](Value* x) {
      if (s.part == Rope::kFull) return rope(x);
      Value* rotated = rope(slice(x, 0, kRot));
      Value* pass = slice(x, kRot, INT64_MAX);
      std::vector<Value*> parts = s.part == Rope::kPartial ? std::vector<Value*>{rotated, pass}
                                                           : std::vector<Value*>{pass, rotated};
      return b.Op("Concat", parts, {Attribute::Int("axis", -1)});
    };
    std::vector<Dim> xd = s.rank3 ? std::vector<Dim>{batch, kS, kD} : std::vector<Dim>{batch, kH, kS, kD};
    b.Output(partial(cast(b.Input("q", DType::kFloat, xd))));
    if (s.q_and_k) b.Output(partial(cast(b.Input("k", DType::kFloat, xd))));
    return b.Build(s.opset);
  };
}

const Node* FindNode(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes()) {
    if (n->op_type == op) return n.get();
  }
  return nullptr;
}

void ExpectFused(const Rope& s, const std::set<std::string>& only = {kRule, "fold_constants"}) {
  ModelFn build = Build(s);
  auto r = OptimizeModel(build(), only);
  ASSERT_NE(r.model, nullptr);
  if (only.count(kRule)) {
    EXPECT_GT(r.stats.rule_counts[kRule], 0) << kRule << " did not fire";
  }
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["RotaryEmbedding"], s.q_and_k ? 2 : 1);
  EXPECT_EQ(counts["Neg"], 0);
  EXPECT_EQ(counts["Add"], 0);
  EXPECT_EQ(counts["Mul"], 0);
  const Node* rope = FindNode(*r.model->graph, "RotaryEmbedding");
  ASSERT_NE(rope, nullptr);
  EXPECT_EQ(rope->domain, "");
  EXPECT_EQ(rope->num_inputs(), 3u);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true, /*seed=*/11), 0.0);
  auto again = OptimizeModel(std::move(r.model), {kRule, "fold_constants"});
  EXPECT_EQ(again.stats.rule_counts.count(kRule), 0u);
}

void ExpectDeclined(const Rope& s) {
  ModelFn build = Build(s);
  auto r = OptimizeWith(build, kRule, {"fold_constants"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts.count(kRule), 0u);
  EXPECT_EQ(OpCounts(*r.model->graph)["RotaryEmbedding"], 0);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
}

TEST(FuseRotaryTest, ConstantCaches) { ExpectFused({}); }
TEST(FuseRotaryTest, ConstantCachesPerBatch) { ExpectFused({.cache = Cache::kConstBatch}); }
TEST(FuseRotaryTest, CosOfConcat) { ExpectFused({.cache = Cache::kCosOfConcat}); }
TEST(FuseRotaryTest, ConcatOfCos) { ExpectFused({.cache = Cache::kConcatOfCos}); }
TEST(FuseRotaryTest, GatheredByPositionIds) { ExpectFused({.cache = Cache::kGathered}); }
TEST(FuseRotaryTest, MirroredOperands) { ExpectFused({.mirrored = true}); }
TEST(FuseRotaryTest, MirroredCosOfConcat) { ExpectFused({.cache = Cache::kCosOfConcat, .mirrored = true}); }
TEST(FuseRotaryTest, SymbolicBatch) { ExpectFused({.symbolic_batch = true}); }
TEST(FuseRotaryTest, SymbolicBatchGathered) { ExpectFused({.cache = Cache::kGathered, .symbolic_batch = true}); }
// Rounding for rounding in half precision too (the reference rounds each step).
TEST(FuseRotaryTest, Float16) {
  ExpectFused({.dtype = DType::kFloat16});
  ExpectFused({.cache = Cache::kCosOfConcat, .dtype = DType::kFloat16});
}
TEST(FuseRotaryTest, QueryAndKeyShareTheCaches) { ExpectFused({.cache = Cache::kCosOfConcat, .q_and_k = true}); }

// Every rule at once: extraction (the cost model) must pick the fused op.
TEST(FuseRotaryTest, ExtractionPicksTheFusedOpWithEveryRule) {
  for (Cache c : {Cache::kConst, Cache::kCosOfConcat, Cache::kGathered}) {
    SCOPED_TRACE(static_cast<int>(c));
    ExpectFused({.cache = c, .q_and_k = true}, {});
  }
}

// Partial rotation: the rotated Slice and the passed-through one fold into
// rotary_embedding_dim, with the listed rules only and with every rule.
void ExpectPartial(const Rope& s, const std::set<std::string>& only) {
  ModelFn build = Build(s);
  auto r = OptimizeModel(build(), only);
  ASSERT_NE(r.model, nullptr);
  if (!only.empty()) {
    EXPECT_GT(r.stats.rule_counts[kPartialRule], 0) << kPartialRule << " did not fire";
  }
  auto counts = OpCounts(*r.model->graph);
  EXPECT_EQ(counts["RotaryEmbedding"], s.q_and_k ? 2 : 1);
  // No Slice of x is left (the caches' own halves are Slices when not constant).
  for (const auto& node : r.model->graph->nodes()) {
    if (node->op_type != "Slice") continue;
    EXPECT_TRUE(node->input(0)->name() != "q" && node->input(0)->name() != "k") << PrintGraph(*r.model->graph);
  }
  const Node* rope = FindNode(*r.model->graph, "RotaryEmbedding");
  ASSERT_NE(rope, nullptr);
  EXPECT_EQ(rope->GetInt("rotary_embedding_dim", 0), kRot);
  EXPECT_EQ(rope->input(0)->shape().dims().back().value(), kD);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true, /*seed=*/11), 0.0);
}

TEST(FuseRotaryTest, PartialRotation) {
  ExpectPartial({.part = Rope::kPartial}, {kRule, kPartialRule, "fold_constants"});
  ExpectPartial({.cache = Cache::kGathered, .q_and_k = true, .part = Rope::kPartial}, {});
  ExpectPartial({.cache = Cache::kCosOfConcat, .symbolic_batch = true, .part = Rope::kPartial}, {});
}

// The passed-through features first: the rotation fuses, the Concat stays.
TEST(FuseRotaryTest, DeclinesPartialRotationConcatenatedTheOtherWay) {
  ModelFn build = Build({.part = Rope::kPassFirst});
  auto r = OptimizeModel(build(), {kRule, kPartialRule, "fold_constants"});
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts[kRule], 0);
  EXPECT_EQ(r.stats.rule_counts.count(kPartialRule), 0u);
  const Node* rope = FindNode(*r.model->graph, "RotaryEmbedding");
  ASSERT_NE(rope, nullptr);
  EXPECT_FALSE(rope->HasAttr("rotary_embedding_dim"));
  EXPECT_EQ(OpCounts(*r.model->graph)["Concat"], 1);
  EXPECT_EQ(MaxOutputDiff(build, *r.model, /*bitwise=*/true), 0.0);
}

// Near misses.
TEST(FuseRotaryTest, DeclinesHalvesSwappedInTheConcat) { ExpectDeclined({.rotate = Rotate::kSwapped}); }
TEST(FuseRotaryTest, DeclinesNegOnTheWrongHalf) { ExpectDeclined({.rotate = Rotate::kNegFirstHalf}); }
TEST(FuseRotaryTest, DeclinesSlicesNotAtTheMiddle) { ExpectDeclined({.rotate = Rotate::kOffCenter}); }
TEST(FuseRotaryTest, DeclinesUnequalHalves) { ExpectDeclined({.cache = Cache::kUnequalHalves}); }
TEST(FuseRotaryTest, DeclinesCachesNotProvenEqual) { ExpectDeclined({.cache = Cache::kInput}); }
TEST(FuseRotaryTest, DeclinesAHeadAxisNotOne) { ExpectDeclined({.cache = Cache::kHeads}); }
TEST(FuseRotaryTest, DeclinesDouble) { ExpectDeclined({.dtype = DType::kDouble}); }
TEST(FuseRotaryTest, DeclinesRank3) { ExpectDeclined({.rank3 = true}); }
TEST(FuseRotaryTest, DeclinesBelowOpset23ForTheOnnxTarget) { ExpectDeclined({.opset = 17}); }

// Below opset 23 the alias, for a target that runs it.
TEST(FuseRotaryTest, AliasBelowOpset23) {
  Rope s{.cache = Cache::kCosOfConcat, .opset = 17};
  ModelFn build = Build(s);
  auto m = build();
  OptimizeOptions o;
  o.only_rules = {kRule, "fold_constants"};
  o.aic_ops = AllAicOps();
  ASSERT_TRUE(Optimize(*m, o).ok());
  const Node* rope = FindNode(*m->graph, "RotaryEmbedding");
  ASSERT_NE(rope, nullptr);
  EXPECT_EQ(rope->domain, "ai.aic");
  EXPECT_EQ(m->OpsetFor("ai.aic"), 1);
  EXPECT_EQ(MaxOutputDiff(build, *m, /*bitwise=*/true), 0.0);
}

}  // namespace
}  // namespace aic::rewrite

// RotaryEmbedding's native kernel (exec/cpu/kernels/rotary.h) against the
// reference kernel: 3-D and 4-D X, interleaved or not, full and partial
// rotation, caches per token or indexed by position_ids (fed or constant);
// each case checks that the plan ran the native step ("rotary"), a float64 X
// that it falls back, and that a position id outside the cache is an error
// naming the node.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/util/float_convert.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

using Dims = std::vector<int64_t>;

bool RanNatively(const std::string& plan) { return plan.rfind("rotary\t", 0) == 0 || plan.find("\nrotary\t") != std::string::npos; }

struct Geometry {
  int64_t batch, heads, seq, head;
};

// RotaryEmbedding's attributes for the geometry (num_heads for a 3-D x).
std::vector<Attribute> RotaryAttrs(const Geometry& g, bool four_d, bool interleaved, int64_t rot_attr) {
  std::vector<Attribute> attrs = {Attribute::Int("interleaved", interleaved ? 1 : 0)};
  if (rot_attr != 0) attrs.push_back(Attribute::Int("rotary_embedding_dim", rot_attr));
  if (!four_d) attrs.push_back(Attribute::Int("num_heads", g.heads));
  return attrs;
}

// x [B, H, S, D] or [B, S, H·D]; caches [B, S, rot/2], or [rows, rot/2] read by position ids [B, S].
void CheckRotary(const Geometry& g, bool four_d, bool interleaved, int64_t rot_attr, int pos_mode) {
  const int64_t rot = rot_attr == 0 ? g.head : rot_attr, half = rot / 2, cache_rows = 3 * g.seq + 1;
  SCOPED_TRACE(absl::StrCat(four_d ? "4-D" : "3-D", " B", g.batch, " H", g.heads, " S", g.seq, " D", g.head,
                            interleaved ? " interleaved" : "", " rotary_embedding_dim ", rot_attr,
                            pos_mode == 0 ? " per token" : pos_mode == 1 ? " position ids fed" : " position ids constant"));
  Dims xd = four_d ? Dims{g.batch, g.heads, g.seq, g.head} : Dims{g.batch, g.seq, g.heads * g.head};
  Dims cd = pos_mode == 0 ? Dims{g.batch, g.seq, half} : Dims{cache_rows, half};
  GraphBuilder b;
  std::vector<Value*> ins = {b.Input("x", DType::kFloat, D(xd)), b.Input("cos", DType::kFloat, D(cd)),
                             b.Input("sin", DType::kFloat, D(cd))};
  Tensor pos = RandomInts<int64_t>({g.batch, g.seq}, 7, 0, static_cast<int>(cache_rows - 1));
  if (pos_mode == 1) ins.push_back(b.Input("pos", DType::kInt64, {g.batch, g.seq}));
  if (pos_mode == 2) ins.push_back(b.Constant("pos", pos));
  b.Output(b.Op("RotaryEmbedding", ins, RotaryAttrs(g, four_d, interleaved, rot_attr)));
  auto model = b.Build(23);
  std::map<std::string, RuntimeValue> feeds = {
      {"x", RandomF32(xd, 1)}, {"cos", RandomF32(cd, 2, -1, 1)}, {"sin", RandomF32(cd, 3, -1, 1)}};
  if (pos_mode == 1) feeds["pos"] = pos;
  std::string plan = RunBoth(*model, feeds);
  EXPECT_TRUE(RanNatively(plan)) << plan;
}

// Rotary embeddings of a half x with half caches (constants, read through
// position ids; or per token): one rotary step over the half head vectors,
// no Cast of x to f32 and back, within a half ulp of the reference executor.
// Heads of 64 with 64 or 16 rotated features take the one-pass AVX2 kernel
// of the split-halves layout (whole vectors of pairs; the 48 features past
// 16 copied), the head of 8 the widened rows.
TEST(RotaryKernelTest, HalfInputsRunOnTheHalfBytes) {
  for (const auto& [g, rots] : std::vector<std::pair<Geometry, std::vector<int64_t>>>{
           {{2, 3, 5, 8}, {0, 4}}, {{1, 4, 6, 64}, {0, 16, 4}}}) {
  for (bool four_d : {true, false}) {
    for (bool interleaved : {false, true}) {
      for (int64_t rot_attr : rots) {
        SCOPED_TRACE(absl::StrCat(four_d ? "4-D" : "3-D", interleaved ? " interleaved" : "", " D ", g.head, " rot ",
                                  rot_attr));
        const int64_t rot = rot_attr == 0 ? g.head : rot_attr, cache_rows = 3 * g.seq + 1;
        Dims xd = four_d ? Dims{g.batch, g.heads, g.seq, g.head} : Dims{g.batch, g.seq, g.heads * g.head};
        Dims cd = {cache_rows, rot / 2};
        GraphBuilder b;
        std::vector<Value*> ins = {b.Input("x", DType::kFloat16, D(xd)),
                                   b.Constant("cos", NarrowFromFloat(RandomF32(cd, 2, -1, 1), DType::kFloat16)),
                                   b.Constant("sin", NarrowFromFloat(RandomF32(cd, 3, -1, 1), DType::kFloat16)),
                                   b.Input("pos", DType::kInt64, {g.batch, g.seq})};
        b.Output(b.Op("RotaryEmbedding", ins, RotaryAttrs(g, four_d, interleaved, rot_attr)));
        auto model = b.Build(23);
        std::map<std::string, RuntimeValue> feeds = {
            {"x", NarrowFromFloat(RandomF32(xd, 1), DType::kFloat16)},
            {"pos", RandomInts<int64_t>({g.batch, g.seq}, 7, 0, static_cast<int>(cache_rows - 1))}};
        std::string plan = RunBoth(*model, feeds, 0, 2e-3, 2e-3);
        EXPECT_TRUE(RanNatively(plan)) << plan;
        EXPECT_EQ(plan.find("cast\t"), std::string::npos) << plan;
      }
    }
  }
  }
}

// Half caches fed per token as graph inputs: their widening Casts come
// after x's in the order, and are lowered first so the rotary still runs as
// one step over the half bytes (the caches' Casts remain, x's does not).
TEST(RotaryKernelTest, HalfCachesFedPerTokenRunInOneStep) {
  for (int64_t head : {int64_t{8}, int64_t{64}}) {
    SCOPED_TRACE(absl::StrCat("D ", head));
    const Geometry g = {2, 3, 5, head};
    Dims xd = {g.batch, g.heads, g.seq, g.head}, cd = {g.batch, g.seq, g.head / 2};
    GraphBuilder b;
    b.Output(b.Op("RotaryEmbedding", {b.Input("x", DType::kFloat16, D(xd)), b.Input("cos", DType::kFloat16, D(cd)),
                                      b.Input("sin", DType::kFloat16, D(cd))}));
    auto model = b.Build(23);
    std::map<std::string, RuntimeValue> feeds = {{"x", NarrowFromFloat(RandomF32(xd, 1), DType::kFloat16)},
                                                 {"cos", NarrowFromFloat(RandomF32(cd, 2, -1, 1), DType::kFloat16)},
                                                 {"sin", NarrowFromFloat(RandomF32(cd, 3, -1, 1), DType::kFloat16)}};
    std::string plan = RunBoth(*model, feeds, 0, 2e-3, 2e-3);
    EXPECT_TRUE(RanNatively(plan)) << plan;
    EXPECT_EQ(plan.find("x/widen"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("narrow"), std::string::npos) << plan;
  }
}

TEST(RotaryKernelTest, EveryFormMatchesTheReference) {
  for (bool four_d : {true, false}) {
    for (bool interleaved : {false, true}) {
      for (int64_t rot : {int64_t{0}, int64_t{4}, int64_t{8}}) {
        for (int pos_mode : {0, 1, 2}) CheckRotary({2, 3, 5, 8}, four_d, interleaved, rot, pos_mode);
      }
    }
  }
}

// Big enough to be spread over threads (kMinParallelWork), with a head of 64
// as Llama-style models have and an odd half for the vector loops' tails.
TEST(RotaryKernelTest, LargeInputsMatchTheReference) {
  for (bool four_d : {true, false}) {
    for (bool interleaved : {false, true}) {
      CheckRotary({2, 8, 160, 64}, four_d, interleaved, 0, 0);
      CheckRotary({1, 4, 33, 22}, four_d, interleaved, 14, 1);
    }
  }
}

// Not f32: the reference kernel runs (one fallback step) and gives its result.
TEST(RotaryKernelTest, DoubleInputFallsBackToTheReference) {
  GraphBuilder b;
  Dims xd = {1, 2, 4, 6}, cd = {1, 4, 3};
  b.Output(b.Op("RotaryEmbedding", {b.Input("x", DType::kDouble, D(xd)), b.Input("cos", DType::kDouble, D(cd)),
                                    b.Input("sin", DType::kDouble, D(cd))}));
  auto model = b.Build(23);
  auto doubles = [](const Dims& d, uint32_t seed) {
    Tensor f = RandomF32(d, seed, -1, 1), t(DType::kDouble, d);
    for (int64_t i = 0; i < f.num_elements(); ++i) t.mutable_data<double>()[i] = f.data<float>()[i];
    return t;
  };
  std::string plan = RunBoth(*model, {{"x", doubles(xd, 1)}, {"cos", doubles(cd, 2)}, {"sin", doubles(cd, 3)}}, 1);
  EXPECT_FALSE(RanNatively(plan)) << plan;
}

TEST(RotaryKernelTest, PositionIdOutsideTheCacheIsAnErrorNamingTheNode) {
  for (int64_t bad : {int64_t{6}, int64_t{-1}}) {
    GraphBuilder b;
    Dims xd = {1, 2, 3, 4}, cd = {6, 2};
    b.Output(b.Op("RotaryEmbedding", {b.Input("x", DType::kFloat, D(xd)), b.Constant("cos", RandomF32(cd, 2)),
                                      b.Constant("sin", RandomF32(cd, 3)), b.Input("pos", DType::kInt64, {1, 3})},
                  {}, "rotated"));
    auto model = b.Build(23);
    CpuExecutor cpu(*model);
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32(xd, 1)},
                                                 {"pos", Tensor::FromVector<int64_t>({0, bad, 1}, {1, 3})}};
    auto got = cpu.Run(feeds);
    ASSERT_FALSE(got.ok());
    std::string message(got.status().message());
    EXPECT_NE(message.find("RotaryEmbedding"), std::string::npos) << message;
    EXPECT_NE(message.find(absl::StrCat("position id ", bad)), std::string::npos) << message;
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(RanNatively(DescribePlan(**plan))) << DescribePlan(**plan);
    // A valid id afterwards runs: the plan is not left broken.
    feeds["pos"] = Tensor::FromVector<int64_t>({0, 5, 1}, {1, 3});
    EXPECT_TRUE(cpu.Run(feeds).ok());
  }
}

}  // namespace
}  // namespace aic::cpu

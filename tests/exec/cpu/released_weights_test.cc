// A weight the CPU backend packs into its own layout gives up its plain bytes
// (Lowerer::ReleasePlainCopy, graph/tensor.h Buffer::Release), so a compiled
// model holds each weight once; anything that reads the plain bytes later
// gets them back exactly, a second compile included, and a weight someone
// else also holds keeps its bytes.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/cpu/plan.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

// x[batch, 64, 10, 10] -> Conv k1 [96, 64, 3, 3] -> Relu -> Conv k2 [64, 96,
// 3, 3]: both weights over the 64 KB floor, and packed into a blocked layout
// by oneDNN on AVX2 and AVX-512 CPUs alike (a small MatMul keeps plain
// weights on AVX2, where oneDNN 2.6 runs it as a plain GEMM).
std::unique_ptr<Model> TwoConvs() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 64, 10, 10});
  const Attribute pads = Attribute::Ints("pads", {1, 1, 1, 1});
  Value* h = b.Op("Relu", {b.Op("Conv", {x, b.Constant("k1", RandomF32({96, 64, 3, 3}, 1, -0.1f, 0.1f))}, {pads})});
  b.Output(b.Op("Conv", {h, b.Constant("k2", RandomF32({64, 96, 3, 3}, 2, -0.1f, 0.1f))}, {pads}));
  return b.Build(17);
}

const Tensor& Weight(const Model& m, const char* name) { return *m.graph->FindValue(name)->initializer(); }

TEST(ReleasedWeightsTest, PackedWeightsGiveUpTheirPlainBytesAndGetThemBack) {
  std::unique_ptr<Model> model = TwoConvs();
  const Tensor w1_before = Weight(*model, "k1").Clone();
  const Tensor w2_before = Weight(*model, "k2").Clone();
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32({1, 64, 10, 10}, 3)}};
  auto want = ReferenceExecutor(*model).Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();

  CpuExecutor cpu(*model);
  auto got = cpu.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose((*got)[0].tensor, (*want)[0].tensor, 1e-4, 1e-4);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(StatsOf(**plan).released_weight_bytes, w1_before.byte_size() + w2_before.byte_size())
      << DescribePlan(**plan);
  EXPECT_TRUE(Weight(*model, "k1").buffer()->released());
  EXPECT_TRUE(Weight(*model, "k2").buffer()->released());

  // Another batch size compiles a second plan from the released weights.
  std::map<std::string, RuntimeValue> other = {{"x", RandomF32({3, 64, 10, 10}, 4)}};
  auto want9 = ReferenceExecutor(*model).Run(other);
  ASSERT_TRUE(want9.ok()) << want9.status();
  auto got9 = cpu.Run(other);
  ASSERT_TRUE(got9.ok()) << got9.status();
  ExpectClose((*got9)[0].tensor, (*want9)[0].tensor, 1e-4, 1e-4);

  // Reading the model's weights gives the very bytes it was built with.
  EXPECT_TRUE(Weight(*model, "k1").BitwiseEquals(w1_before));
  EXPECT_TRUE(Weight(*model, "k2").BitwiseEquals(w2_before));
  EXPECT_FALSE(Weight(*model, "k1").buffer()->released());
  // The first plan still runs on its packed copies.
  auto again = cpu.Run(feeds);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectClose((*again)[0].tensor, (*want)[0].tensor, 1e-4, 1e-4);
}

// A weight held elsewhere (here a copy sharing its buffer, as a caller's
// model shares its buffers with the session made from it) keeps its bytes.
// A MatMul weight [K, N] with N a multiple of 1024 runs on oneDNN's
// gemm:jit from a copy whose rows are N + 16 floats apart where the CPU has
// no AVX-512 (ops_matmul.cc GemmWeightsMd); the copy is a packing like any
// other: the plain bytes are given up and come back exactly, a second
// batch size compiles from them, and the products match the reference.
TEST(ReleasedWeightsTest, PaddedGemmWeightsMatchAndComeBack) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 8, 64});
  Value* y = b.Op("MatMul", {x, b.Constant("w", RandomF32({64, 1024}, 5, -0.1f, 0.1f))});
  b.Output(b.Op("Add", {y, b.Constant("bias", RandomF32({1024}, 6, -0.1f, 0.1f))}));
  std::unique_ptr<Model> model = b.Build(17);
  const Tensor w_before = Weight(*model, "w").Clone();
  CpuExecutor cpu(*model);
  for (int64_t batch : {2, 3}) {
    std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32({batch, 8, 64}, 7)}};
    auto want = ReferenceExecutor(*model).Run(feeds);
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = cpu.Run(feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor, 1e-4, 1e-4);
    if (batch == 2) {
      EXPECT_TRUE(Weight(*model, "w").buffer()->released());
    }
  }
  const Tensor& w = Weight(*model, "w");
  ASSERT_EQ(w.byte_size(), w_before.byte_size());
  EXPECT_EQ(std::memcmp(w.raw_data(), w_before.raw_data(), w.byte_size()), 0);
}

TEST(ReleasedWeightsTest, AWeightHeldElsewhereKeepsItsBytes) {
  std::unique_ptr<Model> model = TwoConvs();
  const Tensor held = Weight(*model, "k1");
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32({1, 64, 10, 10}, 5)}};
  CpuExecutor cpu(*model);
  ASSERT_TRUE(cpu.Run(feeds).ok());
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(held.buffer()->released());
  EXPECT_TRUE(Weight(*model, "k2").buffer()->released());
  EXPECT_EQ(StatsOf(**plan).released_weight_bytes, Weight(*model, "k2").byte_size());
}

// One weight read by two MatMuls, and a conv's weights: every step still
// agrees with the reference, and the model's bytes come back unchanged.
TEST(ReleasedWeightsTest, SharedAndConvWeightsStayCorrect) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 256});
  Tensor w = RandomF32({256, 256}, 6, -0.1f, 0.1f);
  Value* wv = b.Constant("w", w);
  Value* h = b.Op("Tanh", {b.Op("MatMul", {x, wv})});
  b.Output(b.Op("MatMul", {h, wv}));
  Value* img = b.Input("img", DType::kFloat, {1, 64, 10, 10});
  Tensor k = RandomF32({96, 64, 3, 3}, 7, -0.1f, 0.1f);
  b.Output(b.Op("Conv", {img, b.Constant("k", k)}, {Attribute::Ints("pads", {1, 1, 1, 1})}));
  std::unique_ptr<Model> model = b.Build(17);
  const Tensor w_copy = w.Clone(), k_copy = k.Clone();
  w = Tensor();
  k = Tensor();
  RunBoth(*model, {{"x", RandomF32({2, 256}, 8)}, {"img", RandomF32({1, 64, 10, 10}, 9)}});
  EXPECT_TRUE(Weight(*model, "w").BitwiseEquals(w_copy));
  EXPECT_TRUE(Weight(*model, "k").BitwiseEquals(k_copy));
}

}  // namespace
}  // namespace aic::cpu

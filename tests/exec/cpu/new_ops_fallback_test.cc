// The newer ops on the CPU backend: Attention, RotaryEmbedding and SwiGLU have
// kernels of their own (attention_test.cc and rotary_test.cc cover the first
// two), the others (TensorScatter, BitCast, DeformConv, GridSample, AffineGrid,
// CumProd) run as reference fallback steps between native ones; on random inputs the
// fast executor must agree with the reference executor, multi-output and
// optional-input nodes and BitCast's zero-copy view included.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

Value* Weight(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims, uint32_t seed) {
  return b.Constant(name, RandomF32(dims, seed, -0.5f, 0.5f));
}

TEST(NewOpsFallbackTest, GroupedCausalAttentionAfterProjections) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 5, 8});
  Value* q = b.Op("MatMul", {x, Weight(b, "wq", {8, 8}, 1)});
  Value* k = b.Op("MatMul", {x, Weight(b, "wk", {8, 4}, 2)});
  Value* v = b.Op("MatMul", {x, Weight(b, "wv", {8, 4}, 3)});
  std::vector<Value*> outs = b.OpN("Attention", {q, k, v, nullptr, b.Input("pk", DType::kFloat, {2, 1, 3, 4}),
                                                 b.Input("pv", DType::kFloat, {2, 1, 3, 4})},
                                   3, {Attribute::Int("q_num_heads", 2), Attribute::Int("kv_num_heads", 1),
                                       Attribute::Int("is_causal", 1)});
  b.Output(b.Op("Relu", {outs[0]}));
  b.Output(outs[1]);
  b.Output(outs[2]);
  auto model = b.Build(23);
  RunBoth(*model, {{"x", RandomF32({2, 5, 8}, 4)}, {"pk", RandomF32({2, 1, 3, 4}, 5)}, {"pv", RandomF32({2, 1, 3, 4}, 6)}},
          /*max_fallbacks=*/0);
}

TEST(NewOpsFallbackTest, RotaryEmbeddingAndTensorScatter) {
  GraphBuilder b;
  Value* x = b.Op("Relu", {b.Input("x", DType::kFloat, {2, 2, 3, 4})});
  Value* rope = b.OpN("RotaryEmbedding", {x, Weight(b, "cos", {5, 2}, 1), Weight(b, "sin", {5, 2}, 2),
                                          b.Input("pos", DType::kInt64, {2, 3})},
                      1, {Attribute::Int("interleaved", 1)})[0];
  Value* cache = b.OpN("TensorScatter", {b.Input("past", DType::kFloat, {2, 2, 4, 4}), rope,
                                         b.Input("at", DType::kInt64, {2})},
                       1, {Attribute::String("mode", "circular"), Attribute::Int("axis", 2)})[0];
  b.Output(b.Op("Add", {cache, cache}));
  auto model = b.Build(24);
  RunBoth(*model, {{"x", RandomF32({2, 2, 3, 4}, 3)}, {"pos", RandomInts<int64_t>({2, 3}, 4, 0, 4)},
                   {"past", RandomF32({2, 2, 4, 4}, 5)}, {"at", Tensor::FromVector<int64_t>({3, 1}, {2})}},
          /*max_fallbacks=*/2);
}

TEST(NewOpsFallbackTest, BitCastViewsSurviveArenaReuse) {
  // relu(x) -> int32 bits -> float bits -> -y + x: the views alias their input's buffer.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 6});
  Value* bits = b.Op("BitCast", {b.Op("Relu", {x})}, {Attribute::Int("to", static_cast<int64_t>(DType::kInt32))});
  Value* back = b.Op("BitCast", {bits}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  b.Output(b.Op("Add", {b.Op("Neg", {back}), x}));
  b.Output(bits);
  auto model = b.Build(26);
  RunBoth(*model, {{"x", RandomF32({4, 6}, 7)}}, /*max_fallbacks=*/2, 0, 0);
}

TEST(NewOpsFallbackTest, DeformConvGridSampleAndAffineGrid) {
  GraphBuilder b;
  Value* x = b.Op("Relu", {b.Input("x", DType::kFloat, {1, 4, 6, 6})});
  Value* offset = b.Input("off", DType::kFloat, {1, 2 * 9 * 2, 4, 4});
  Value* mask = b.Op("Sigmoid", {b.Input("m", DType::kFloat, {1, 2 * 9, 4, 4})});
  Value* y = b.Op("DeformConv", {x, Weight(b, "w", {6, 2, 3, 3}, 1), offset, Weight(b, "bias", {6}, 2), mask},
                  {Attribute::Int("group", 2), Attribute::Int("offset_group", 2)});
  b.Output(b.Op("Relu", {y}));
  Value* grid = b.Op("AffineGrid", {b.Input("theta", DType::kFloat, {1, 2, 3}),
                                    b.Constant("size", Tensor::FromVector<int64_t>({1, 6, 3, 5}, {4}))},
                     {Attribute::Int("align_corners", 0)});
  b.Output(b.Op("GridSample", {y, grid}, {Attribute::String("mode", "cubic"),
                                          Attribute::String("padding_mode", "reflection")}));
  Value* vol = b.Input("vol", DType::kFloat, {1, 2, 3, 4, 5});
  b.Output(b.Op("GridSample", {b.Op("Neg", {vol}), b.Input("g3", DType::kFloat, {1, 2, 2, 2, 3})},
                {Attribute::String("padding_mode", "border"), Attribute::Int("align_corners", 1)}));
  auto model = b.Build(20);
  RunBoth(*model, {{"x", RandomF32({1, 4, 6, 6}, 3)}, {"off", RandomF32({1, 36, 4, 4}, 4, -1.5f, 1.5f)},
                   {"m", RandomF32({1, 18, 4, 4}, 5)}, {"theta", RandomF32({1, 2, 3}, 6, -1, 1)},
                   {"vol", RandomF32({1, 2, 3, 4, 5}, 7)}, {"g3", RandomF32({1, 2, 2, 2, 3}, 8, -1.2f, 1.2f)}},
          /*max_fallbacks=*/4);
}

TEST(NewOpsFallbackTest, SwiGLUAndCumProd) {
  GraphBuilder b;
  Value* a = b.Op("Relu", {b.Input("a", DType::kFloat, {3, 7})});
  Value* g = b.Op("SwiGLU", {a, b.Input("b", DType::kFloat, {3, 7})}, {Attribute::Float("alpha", 1.5f)});
  Value* c = b.Op("CumProd", {g, b.Constant("axis", Tensor::Scalar<int64_t>(1))},
                  {Attribute::Int("exclusive", 1), Attribute::Int("reverse", 1)});
  b.Output(b.Op("Abs", {c}));
  auto model = b.Build(28);
  // SwiGLU runs on its own kernel, CumProd on the reference one.
  std::string plan = RunBoth(*model, {{"a", RandomF32({3, 7}, 1)}, {"b", RandomF32({3, 7}, 2)}}, /*max_fallbacks=*/1);
  EXPECT_NE(plan.find("swiglu"), std::string::npos) << plan;
}

TEST(NewOpsFallbackTest, SwiGLUOverLargeRowsIsNative) {
  // Long enough to be split over threads, with negative and large gates.
  GraphBuilder b;
  Value* g = b.Op("SwiGLU", {b.Input("a", DType::kFloat, {4, 70000}), b.Input("b", DType::kFloat, {4, 70000})});
  b.Output(g);
  auto model = b.Build(28);
  std::string plan = RunBoth(*model, {{"a", RandomF32({4, 70000}, 3, -30.0f, 30.0f)}, {"b", RandomF32({4, 70000}, 4)}},
                             /*max_fallbacks=*/0, 1e-5, 1e-5);
  EXPECT_NE(plan.find("swiglu"), std::string::npos) << plan;
}

}  // namespace
}  // namespace aic::cpu

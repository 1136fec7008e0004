// Products of a few rows by constant weights (kernels/gemv.h, ops_gemv.cc):
// the kernel against a double-precision loop at every panel tail, row count
// and stride; Gemm, MatMul and 1x1 Conv at 1x1 lowered onto it with their
// row bias and activations, against the reference executor; and a weight
// released once packed that comes back exactly for a plan that reads it plain.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/gemv.h"
#include "exec/cpu/plan.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

// Every form this CPU runs: AVX-512, AVX2, portable (ForceGemvForm).
TEST(GemvKernelTest, MatchesADoubleLoopAtEveryTailRowCountAndStride) {
  for (int form : {0, 1, 2}) {
    const int before = kernels::ForceGemvForm(form);
    SCOPED_TRACE(absl::StrCat("form ", form));
    for (bool transposed : {false, true}) {
      for (int64_t k : {1, 3, 17, 300}) {
        for (int64_t n : {1, 5, 16, 31, 33, 63, 64, 65, 130}) {
          for (int64_t m : {1, 2, 3, 4, 5, 9}) {
            const int64_t ldw = (transposed ? k : n) + 3;  // rows wider than the matrix
            const int64_t lda = k + 2, ldc = n + 5;
            Tensor w = RandomF32({(transposed ? n : k) * ldw}, 1 + k + n, -1, 1);
            Tensor a = RandomF32({m * lda}, 2 + m, -1, 1);
            Tensor bias = RandomF32({n}, 3 + n, -1, 1);
            const float scale = 0.75f;
            const float* wp = w.data<float>();
            kernels::GemvMatrix g(wp, k, n, ldw, transposed, scale);
            for (bool with_bias : {false, true}) {
              std::vector<float> c(static_cast<size_t>(m * ldc), -7.0f);
              g.Multiply(a.data<float>(), m, lda, with_bias ? bias.data<float>() : nullptr, c.data(), ldc);
              for (int64_t r = 0; r < m; ++r) {
                for (int64_t j = 0; j < ldc; ++j) {
                  if (j >= n) {
                    ASSERT_EQ(c[r * ldc + j], -7.0f) << "wrote past column " << n;
                    continue;
                  }
                  double want = with_bias ? bias.data<float>()[j] : 0.0;
                  for (int64_t p = 0; p < k; ++p) {
                    const double wv = transposed ? wp[j * ldw + p] : wp[p * ldw + j];
                    want += static_cast<double>(a.data<float>()[r * lda + p]) * scale * wv;
                  }
                  ASSERT_NEAR(c[r * ldc + j], want, 1e-5 * (1 + k))
                      << "m " << m << " k " << k << " n " << n << " row " << r << " col " << j;
                }
              }
            }
            // Unpacking a scale-1 matrix gives the weights back bit for bit.
            kernels::GemvMatrix unscaled(wp, k, n, ldw, transposed);
            std::vector<float> back(static_cast<size_t>(w.num_elements()), 0.0f);
            unscaled.Unpack(back.data(), ldw, transposed);
            for (int64_t i = 0; i < (transposed ? n : k); ++i) {
              for (int64_t j = 0; j < (transposed ? k : n); ++j) ASSERT_EQ(back[i * ldw + j], wp[i * ldw + j]);
            }
          }
        }
      }
    }
    kernels::ForceGemvForm(before);
  }
}

std::map<std::string, RuntimeValue> Feed(const std::vector<int64_t>& dims, uint32_t seed) {
  return {{"x", RandomF32(dims, seed)}};
}

// Steps in a plan's description (a line each, then a summary line).
int Steps(const std::string& plan) { return CountOf(plan, "\n") - 1; }

// One step of kind gemv, with `fused` in its label (a comma-free part).
void ExpectGemvStep(const std::string& plan, const std::string& fused = "") {
  EXPECT_EQ(CountOf(plan, "gemv\t"), 1) << plan;
  if (!fused.empty()) {
    EXPECT_NE(plan.find(fused), std::string::npos) << plan;
  }
}

TEST(GemvLoweringTest, GemmHeadTakesItsBiasAndHardSwish) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 96});
  Value* y = b.Op("Gemm", {x, b.Constant("w", RandomF32({130, 96}, 1, -0.2f, 0.2f)), b.Constant("c", RandomF32({130}, 2))},
                  {Attribute::Int("transB", 1)});
  b.Output(b.Op("HardSwish", {y}));
  auto model = b.Build(17);
  ExpectGemvStep(RunBoth(*model, Feed({1, 96}, 3)), "hardswish");
}

TEST(GemvLoweringTest, GemmOfFewRowsWithAlphaBetaAndAPlainWeight) {
  for (int64_t m : {2, 3, 4}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {m, 40});
    b.Output(b.Op("Gemm", {x, b.Constant("w", RandomF32({40, 70}, 1)), b.Constant("c", RandomF32({1, 70}, 2))},
                  {Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 2.0f)}));
    auto model = b.Build(17);
    ExpectGemvStep(RunBoth(*model, Feed({m, 40}, 4), 0, 1e-4, 1e-5));
  }
}

TEST(GemvLoweringTest, GemmWithAFullBiasMatrix) {
  // (oneDNN 2.6's matmul has only its reference kernel for a [M, N] bias.)
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 40});
  b.Output(b.Op("Gemm", {x, b.Constant("w", RandomF32({70, 40}, 1)), b.Constant("c", RandomF32({2, 70}, 2))},
                {Attribute::Int("transB", 1), Attribute::Float("beta", 0.5f)}));
  auto model = b.Build(17);
  ExpectGemvStep(RunBoth(*model, Feed({2, 40}, 5), 0, 1e-4, 1e-5));
}

TEST(GemvLoweringTest, ManyRowsStayOnOneDnn) {
  GraphBuilder many;
  Value* xm = many.Input("x", DType::kFloat, {5, 40});
  many.Output(many.Op("Gemm", {xm, many.Constant("w", RandomF32({70, 40}, 1))}, {Attribute::Int("transB", 1)}));
  auto model5 = many.Build(17);
  EXPECT_EQ(CountOf(RunBoth(*model5, Feed({5, 40}, 6), 0, 1e-4, 1e-5), "gemv\t"), 0);
}

TEST(GemvLoweringTest, MatMulDecoderStepTakesTheFollowingBiasAddEitherSide) {
  for (bool bias_first : {false, true}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 1, 64});
    Value* y = b.Op("MatMul", {x, b.Constant("w", RandomF32({64, 200}, 1, -0.3f, 0.3f))});
    Value* c = b.Constant("c", RandomF32({200}, 2));
    Value* s = b.Op("Add", bias_first ? std::vector<Value*>{c, y} : std::vector<Value*>{y, c});
    b.Output(b.Op("Relu", {s}));
    auto model = b.Build(17);
    std::string plan = RunBoth(*model, Feed({1, 1, 64}, 7));
    ExpectGemvStep(plan, "bias,relu");
  }
}

TEST(GemvLoweringTest, EveryRowActivationMatchesTheReference) {
  struct Case {
    const char* op;
    std::vector<Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {"Relu", {}},    {"Sigmoid", {}}, {"Tanh", {}}, {"LeakyRelu", {Attribute::Float("alpha", 0.1f)}},
      {"Abs", {}},     {"Exp", {}},     {"Gelu", {}}, {"HardSigmoid", {Attribute::Float("alpha", 0.3f)}},
      {"HardSwish", {}}};
  for (const Case& c : cases) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {3, 50});
    Value* y = b.Op("MatMul", {x, b.Constant("w", RandomF32({50, 90}, 1, -0.2f, 0.2f))});
    b.Output(b.Op(c.op, {y}, c.attrs));
    auto model = b.Build(20);
    SCOPED_TRACE(c.op);
    std::string plan = RunBoth(*model, Feed({3, 50}, 8), 0, 1e-5, 1e-5);
    EXPECT_EQ(CountOf(plan, "gemv\t"), 1) << plan;
    EXPECT_EQ(Steps(plan), 1) << "the activation is not in the gemv step:\n" << plan;
  }
  // Clip by constant bounds (opset 11+: inputs), a scale by a constant after it.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 50});
  Value* y = b.Op("MatMul", {x, b.Constant("w", RandomF32({50, 90}, 1))});
  Value* clipped = b.Op("Clip", {y, b.Constant("lo", Tensor::Scalar(-1.5f)), b.Constant("hi", Tensor::Scalar(2.0f))});
  b.Output(b.Op("Mul", {clipped, b.Constant("k", Tensor::Scalar(3.0f))}));
  auto model = b.Build(17);
  ExpectGemvStep(RunBoth(*model, Feed({1, 50}, 9)), "clip");
}

TEST(GemvLoweringTest, PointwiseConvAtOneByOneWithBatchNormAndHardSigmoid) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 48, 1, 1});
  Value* y = b.Op("Conv", {x, b.Constant("w", RandomF32({72, 48, 1, 1}, 1, -0.3f, 0.3f)), b.Constant("c", RandomF32({72}, 2))});
  Value* bn = b.Op("BatchNormalization", {y, b.Constant("g", RandomF32({72}, 3, 0.5f, 1.5f)),
                                          b.Constant("be", RandomF32({72}, 4)), b.Constant("mu", RandomF32({72}, 5)),
                                          b.Constant("var", RandomF32({72}, 6, 0.5f, 2.0f))});
  b.Output(b.Op("HardSigmoid", {bn}));
  auto model = b.Build(17);
  std::string plan = RunBoth(*model, Feed({2, 48, 1, 1}, 10), 0, 1e-5, 1e-4);
  ExpectGemvStep(plan, "hardsigmoid");
  EXPECT_EQ(Steps(plan), 1) << plan;
}

TEST(GemvLoweringTest, ReleasedHeadWeightComesBackForABatchOnOneDnn) {
  // [batch, 256] x [256, 300]ᵀ: 300 KB of weight, over the release floor.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 256});
  b.Output(b.Op("Gemm", {x, b.Constant("w", RandomF32({300, 256}, 1, -0.1f, 0.1f)), b.Constant("c", RandomF32({300}, 2))},
                {Attribute::Int("transB", 1)}));
  auto model = b.Build(17);
  const Tensor before = model->graph->FindValue("w")->initializer()->Clone();
  auto one = Feed({1, 256}, 11);
  auto want = ReferenceExecutor(*model).Run(one);  // before: reading the weight brings its bytes back
  ASSERT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(*model);
  auto got = cpu.Run(one);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose((*got)[0].tensor, (*want)[0].tensor, 1e-5, 1e-5);
  EXPECT_TRUE(model->graph->FindValue("w")->initializer()->buffer()->released());
  // Batch 16 compiles a oneDNN matmul, which packs from the restored bytes.
  auto many = Feed({16, 256}, 12);
  auto got16 = cpu.Run(many);
  ASSERT_TRUE(got16.ok()) << got16.status();
  EXPECT_EQ(CountOf(DescribePlan(**cpu.PlanFor(many)), "gemv\t"), 0);
  auto want16 = ReferenceExecutor(*model).Run(many);
  ASSERT_TRUE(want16.ok()) << want16.status();
  ExpectClose((*got16)[0].tensor, (*want16)[0].tensor, 1e-5, 1e-5);
  const Tensor& after = *model->graph->FindValue("w")->initializer();
  ASSERT_EQ(after.byte_size(), before.byte_size());
  for (int64_t i = 0; i < before.num_elements(); ++i) ASSERT_EQ(after.data<float>()[i], before.data<float>()[i]);
}

}  // namespace
}  // namespace aic::cpu

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

// 8-bit weights dequantized as they are read: bit for bit the product over
// the same weights dequantized first, in every form, signed or not, with
// zero points or without, per tensor or per column; and they unpack exactly.
TEST(GemvKernelTest, EightBitWeightsGiveTheProductOfTheirDequantizedValues) {
  for (int form : {0, 1, 2}) {
    const int before = kernels::ForceGemvForm(form);
    for (bool is_signed : {true, false}) {
      for (bool zeros : {false, true}) {
        for (bool transposed : {false, true}) {
          for (int64_t n : {1, 31, 64, 130}) {
            SCOPED_TRACE(absl::StrCat("form ", form, " signed ", is_signed, " zeros ", zeros, " transposed ",
                                      transposed, " n ", n));
            const int64_t k = 37, m = 3, ld = transposed ? k : n;
            Tensor raw = RandomInts<uint8_t>({k * n}, 20 + n, 0, 255);  // int8 when signed: the same bytes
            std::vector<uint8_t> q(raw.data<uint8_t>(), raw.data<uint8_t>() + k * n);
            kernels::GemvMatrix::Quantized w;
            w.values = q.data();
            w.is_signed = is_signed;
            Tensor scales = RandomF32({n}, 30 + n, 0.001f, 0.05f);
            for (int64_t j = 0; j < n; ++j) {
              w.scales.push_back(scales.data<float>()[j]);
              w.zeros.push_back(zeros ? static_cast<int32_t>(j % 7) - (is_signed ? 3 : -100) : 0);
            }
            std::vector<float> dequantized(q.size());
            for (int64_t r = 0; r < (transposed ? n : k); ++r) {
              for (int64_t c = 0; c < (transposed ? k : n); ++c) {
                const int64_t col = transposed ? r : c;
                const uint8_t byte = q[r * ld + c];
                const float v = is_signed ? static_cast<float>(static_cast<int8_t>(byte)) : static_cast<float>(byte);
                dequantized[r * ld + c] = (v - static_cast<float>(w.zeros[col])) * w.scales[col];  // DequantizeLinear
              }
            }
            kernels::GemvMatrix eight(w, k, n, ld, transposed);
            kernels::GemvMatrix wide(dequantized.data(), k, n, ld, transposed);
            EXPECT_TRUE(eight.quantized());
            EXPECT_EQ(eight.packed_bytes() * 4, wide.packed_bytes());
            Tensor a = RandomF32({m * k}, 40 + n, -1, 1);
            Tensor bias = RandomF32({n}, 50 + n, -1, 1);
            std::vector<float> got(static_cast<size_t>(m * n)), want(got.size());
            eight.Multiply(a.data<float>(), m, k, bias.data<float>(), got.data(), n);
            wide.Multiply(a.data<float>(), m, k, bias.data<float>(), want.data(), n);
            for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
            std::vector<float> back(q.size());
            eight.Unpack(back.data(), ld, transposed);
            EXPECT_EQ(back, dequantized);
            std::vector<uint8_t> back_q(q.size());
            eight.UnpackQuantized(back_q.data(), ld, transposed);
            EXPECT_EQ(back_q, q);
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

// A QDQ model's head, DequantizeLinear of int8 weights per output channel
// into a Gemm: the gemv step reads the 8-bit values (a quarter of the
// bytes), the plan releases the folded float weights and the model's int8
// ones, and a batch that compiles oneDNN's matmul gets them back exactly.
TEST(GemvLoweringTest, DequantizedWeightsStayEightBit) {
  for (bool with_zero : {false, true}) {
    SCOPED_TRACE(with_zero ? "zero points" : "no zero points");
    const int64_t n = 300, k = 256;
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), k});
    Tensor q = RandomInts<int8_t>({n, k}, 13, -127, 127);
    // (Moved in: a test holding the tensor too would keep its bytes from being released.)
    std::vector<Value*> dq_in = {b.Constant("wq", std::move(q)), b.Constant("ws", RandomF32({n}, 14, 0.001f, 0.01f))};
    if (with_zero) {
      Tensor z(DType::kInt8, {n});
      for (int64_t j = 0; j < n; ++j) z.mutable_data<int8_t>()[j] = static_cast<int8_t>(j % 9 - 4);
      dq_in.push_back(b.Constant("wz", z));
    }
    Value* w = b.Op("DequantizeLinear", dq_in, {Attribute::Int("axis", 0)});
    b.Output(b.Op("Gemm", {x, w, b.Constant("c", RandomF32({n}, 15))}, {Attribute::Int("transB", 1)}));
    auto model = b.Build(17);
    const Tensor int8_before = model->graph->FindValue("wq")->initializer()->Clone();
    auto one = Feed({1, k}, 16);
    auto want = ReferenceExecutor(*model).Run(one);
    ASSERT_TRUE(want.ok()) << want.status();
    CpuExecutor cpu(*model);
    auto got = cpu.Run(one);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor, 1e-5, 1e-5);
    const std::string plan = DescribePlan(**cpu.PlanFor(one));
    ExpectGemvStep(plan);
    const auto& stats = (*cpu.PlanFor(one))->stats;
    EXPECT_LT(stats.weight_bytes, static_cast<size_t>(n * k * 2)) << "the weights were packed as floats:\n" << plan;
    EXPECT_GE(stats.released_weight_bytes, static_cast<size_t>(n * k * 5)) << "float and int8 weights released";
    EXPECT_TRUE(model->graph->FindValue("wq")->initializer()->buffer()->released());
    auto many = Feed({16, k}, 17);
    auto got16 = cpu.Run(many);
    ASSERT_TRUE(got16.ok()) << got16.status();
    auto want16 = ReferenceExecutor(*model).Run(many);
    ASSERT_TRUE(want16.ok()) << want16.status();
    ExpectClose((*got16)[0].tensor, (*want16)[0].tensor, 1e-5, 1e-5);
    const Tensor& after = *model->graph->FindValue("wq")->initializer();
    for (int64_t i = 0; i < n * k; ++i) ASSERT_EQ(after.data<int8_t>()[i], int8_before.data<int8_t>()[i]);
  }
}

// A folded weight that another step also reads (here an Add with a runtime
// input, lowered first) keeps its bytes: the gemv may not release what a
// slot points at.
TEST(GemvLoweringTest, AFoldedWeightAnotherStepReadsStaysWhole) {
  const int64_t n = 300, k = 256;
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, k});
  Value* z = b.Input("z", DType::kFloat, {n, k});
  Tensor q = RandomInts<int8_t>({n, k}, 18, -127, 127);
  Value* w = b.Op("DequantizeLinear", {b.Constant("wq", q), b.Constant("ws", Tensor::Scalar(0.01f))});
  b.Output(b.Op("Add", {w, z}));
  b.Output(b.Op("Gemm", {x, w}, {Attribute::Int("transB", 1)}));
  auto model = b.Build(17);
  std::map<std::string, RuntimeValue> feeds = {{"x", RandomF32({1, k}, 19)}, {"z", RandomF32({n, k}, 20)}};
  for (int run = 0; run < 2; ++run) ExpectGemvStep(RunBoth(*model, feeds));
}

}  // namespace
}  // namespace aic::cpu

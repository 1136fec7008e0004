// DynamicQuantizeLinear and MatMulInteger on the CPU backend's kernels
// against the reference, bit for bit: ranges with ties, one-signed and
// all-zero inputs, lengths off the vector width; products of every operand
// type ONNX allows, with scalar, per-row and per-column zero points or none,
// batched A, K off the kernels' blockings, constant and computed B; and the
// graph onnxruntime.quantization.quantize_dynamic writes (DynamicQuantizeLinear
// -> MatMulInteger -> Cast -> Mul by the scales) compiled without a
// reference step.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/plan.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

// Without VNNI the lowering declines MatMulInteger (ops_native_integer.cc)
// and the reference runs it: one fallback step per product then.
bool HasVnni() { return ExactInt8Products(); }

Tensor Eight(DType t, const std::vector<int64_t>& dims, uint32_t seed) {
  return t == DType::kUint8 ? RandomInts<uint8_t>(dims, seed, 0, 255) : RandomInts<int8_t>(dims, seed, -128, 127);
}

Tensor EightScalar(DType t, int v) {
  return t == DType::kUint8 ? Tensor::Scalar<uint8_t>(static_cast<uint8_t>(v))
                            : Tensor::Scalar<int8_t>(static_cast<int8_t>(v));
}

TEST(DynamicQuantizeTest, MatchesTheReferenceBitForBit) {
  struct Case {
    std::string name;
    std::vector<int64_t> dims;
    float lo, hi;
  };
  // Lengths around the 32-lane range loop and the 8192-element pieces.
  std::vector<Case> cases = {{"mixed", {3, 37}, -3.0f, 5.0f},       {"positive", {1, 31}, 0.5f, 9.0f},
                             {"negative", {2, 33, 3}, -7.0f, -0.25f}, {"zeros", {5, 13}, 0.0f, 0.0f},
                             {"one", {1}, -2.0f, -2.0f},              {"large", {3, 300000 + 17}, -40.0f, 3.0f},
                             {"ties", {4, 64}, -1.0f, 1.0f}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = c.lo == c.hi ? Tensor(DType::kFloat, c.dims) : RandomF32(c.dims, 3, c.lo, c.hi);
    float* xp = x.mutable_data<float>();
    if (c.lo == c.hi) {
      for (int64_t i = 0; i < x.num_elements(); ++i) xp[i] = c.lo;
    }
    if (c.name == "ties") {
      // Range [-1.275, 1.275]: scale 0.01 (in f32), so x = (k + 1/2) * scale
      // lands on ties of x / scale, and -lo / scale = 127.5 is a tie too.
      const float scale = 2.55f / 255.0f;
      for (int64_t i = 0; i < x.num_elements(); ++i) xp[i] = (static_cast<float>(i % 200 - 100) + 0.5f) * scale;
      xp[0] = -1.275f;
      xp[1] = 1.275f;
    }
    GraphBuilder b;
    std::vector<Value*> q = b.OpN("DynamicQuantizeLinear", {b.Input("x", DType::kFloat, D(c.dims))}, 3);
    for (Value* v : q) b.Output(v);
    auto model = b.Build(11);
    std::string plan = RunBoth(*model, {{"x", x}}, 0, 0, 0);
    EXPECT_NE(plan.find("dynamic_quantize"), std::string::npos) << plan;
  }
}

struct ProductCase {
  DType a, b;
  std::vector<int64_t> a_dims, b_dims;
  int a_zero;        // -1: omitted; else a scalar of this value
  bool a_per_row;    // a_zp with one value per row of A's matrices
  int b_zero;        // -1: omitted; else this value (per column: value + column % 5)
  bool b_per_column;
  bool b_constant;
};

std::string Describe(const ProductCase& c) {
  return absl::StrCat(DTypeName(c.a), " ", DimsToString(c.a_dims), " x ", DTypeName(c.b), " ", DimsToString(c.b_dims),
                      c.b_constant ? " constant" : " computed", " a_zp ", c.a_per_row ? "per row " : "", c.a_zero,
                      " b_zp ", c.b_per_column ? "per column " : "", c.b_zero);
}

void RunProduct(const ProductCase& c, uint32_t seed) {
  SCOPED_TRACE(Describe(c));
  GraphBuilder b;
  Value* a = b.Input("a", c.a, D(c.a_dims));
  Tensor bt = Eight(c.b, c.b_dims, seed + 1);
  Value* bv = c.b_constant ? b.Constant("b", bt) : b.Input("b", c.b, D(c.b_dims));
  std::vector<Value*> ins = {a, bv, nullptr, nullptr};
  if (c.a_zero >= 0) {
    if (c.a_per_row) {
      int64_t m = c.a_dims[c.a_dims.size() - 2];
      ins[2] = b.Constant("azp", Eight(c.a, {m}, seed + 2));
    } else {
      ins[2] = b.Input("azp", c.a, {});
    }
  }
  if (c.b_zero >= 0) {
    int64_t n = c.b_dims.back();
    if (c.b_per_column) {
      Tensor z(c.b, {n});
      for (int64_t j = 0; j < n; ++j) {
        int v = c.b_zero + static_cast<int>(j % 5);
        if (c.b == DType::kUint8) {
          z.mutable_data<uint8_t>()[j] = static_cast<uint8_t>(v);
        } else {
          z.mutable_data<int8_t>()[j] = static_cast<int8_t>(v);
        }
      }
      ins[3] = b.Constant("bzp", z);
    } else {
      ins[3] = b.Constant("bzp", EightScalar(c.b, c.b_zero));
    }
  }
  while (!ins.empty() && ins.back() == nullptr) ins.pop_back();
  b.Output(b.Op("MatMulInteger", ins));
  auto model = b.Build(10);
  std::map<std::string, RuntimeValue> feeds = {{"a", Eight(c.a, c.a_dims, seed)}};
  if (!c.b_constant) feeds["b"] = bt;
  if (c.a_zero >= 0 && !c.a_per_row) feeds["azp"] = EightScalar(c.a, c.a_zero);
  // Without VNNI a constant B runs on the pair kernels.
  const bool native = HasVnni() || (c.b_constant && kernels::PairGemmAvailable());
  std::string plan = RunBoth(*model, feeds, native ? 0 : 1, 0, 0);
  if (native) {
    EXPECT_NE(plan.find("matmul_integer"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("[int8 pairs]") != std::string::npos, !HasVnni()) << plan;
  }
}

TEST(MatMulIntegerTest, MatchesTheReferenceBitForBit) {
  const DType u8 = DType::kUint8, s8 = DType::kInt8;
  std::vector<ProductCase> cases = {
      // quantize_dynamic's case: u8 activations, s8 weights, a computed a_zp, b_zp 0.
      {u8, s8, {1, 16, 64}, {64, 48}, 131, false, 0, false, true},
      {u8, s8, {16, 64}, {64, 48}, 200, false, -1, false, true},
      {u8, u8, {7, 33}, {33, 19}, 3, false, 77, false, true},
      {u8, u8, {7, 33}, {33, 19}, 250, false, 128, true, false},
      {s8, s8, {5, 70}, {70, 17}, -9, false, 4, true, true},
      {s8, s8, {5, 70}, {70, 17}, 100, false, -100, false, false},
      {s8, u8, {9, 15}, {15, 31}, -128, false, 255, false, true},
      {u8, s8, {9, 15}, {15, 31}, -1, false, -1, false, false},
      {u8, s8, {2, 3, 11, 1000}, {1000, 40}, 255, false, 127, true, true},  // sums past 2^24
      {u8, u8, {2, 6, 129}, {129, 65}, 0, true, 0, true, true},
      {s8, s8, {4, 6, 257}, {257, 3}, 0, true, -1, false, false},
      {u8, s8, {1, 130}, {130, 1}, 17, false, 5, false, true},
      {u8, s8, {3}, {3, 5}, 1, false, 2, false, true},  // 1-D A
  };
  for (size_t i = 0; i < cases.size(); ++i) RunProduct(cases[i], static_cast<uint32_t>(10 + 3 * i));
}

// x -> DynamicQuantizeLinear -> MatMulInteger(W int8) -> Cast -> Mul(x_scale * w_scale) -> Add bias,
// as onnxruntime.quantization.quantize_dynamic writes it, three in a row: with
// K <= 514 one oneDNN primitive with the scale and bias as post-ops, past that
// the raw product and the exact scaled pass (ops_native_integer.cc).
TEST(MatMulIntegerTest, DynamicallyQuantizedLinearLayersRunWithoutReferenceSteps) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 24, 96});
  auto layer = [&](Value* in, int64_t k, int64_t n, uint32_t seed) {
    std::vector<Value*> q = b.OpN("DynamicQuantizeLinear", {in}, 3);
    Value* w = b.Constant(absl::StrCat("w", seed), RandomInts<int8_t>({k, n}, seed, -127, 127));
    Value* wzp = b.Constant(absl::StrCat("wzp", seed), Tensor::Scalar<int8_t>(0));
    Value* ws = b.Constant(absl::StrCat("ws", seed), Tensor::Scalar<float>(0.0021f + 0.001f * static_cast<float>(seed)));
    Value* scale = b.Op("Mul", {q[1], ws});
    Value* prod = b.Op("MatMulInteger", {q[0], w, q[2], wzp});
    Value* f = b.Op("Cast", {prod}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
    Value* y = b.Op("Mul", {f, scale});
    return b.Op("Add", {y, b.Constant(absl::StrCat("bias", seed), RandomF32({n}, seed + 1))});
  };
  Value* h = b.Op("Relu", {layer(x, 96, 200, 1)});
  h = b.Op("Relu", {layer(h, 200, 600, 2)});
  b.Output(layer(h, 600, 40, 3));
  auto model = b.Build(13);
  std::string plan = RunBoth(*model, {{"x", RandomF32({1, 24, 96}, 5)}}, 0, 0, 0);
  EXPECT_NE(plan.find("+ [1 scale Mul]"), std::string::npos) << plan;  // x_scale * w_scale in the quantize step
  EXPECT_EQ(plan.find("fallback"), std::string::npos) << plan;
  if (!HasVnni()) {
    // Each product one pair-kernel step writing the bias Add's output.
    EXPECT_EQ(CountOf(plan, "[int8 pairs] + [Cast"), 3) << plan;
    EXPECT_EQ(CountOf(plan, "binary\t"), 0) << plan;
    GTEST_SKIP() << "no VNNI: the products run on the pair kernels, not as one oneDNN primitive with the "
                    "scale and bias fused";
  }
  EXPECT_NE(plan.find("zero_points_scaled"), std::string::npos) << plan;
  EXPECT_NE(plan.find("+ [Mul(scale),Add(const)"), std::string::npos) << plan;
}

// The fused form with int8 A (oneDNN's s8·s8 compensation) and uint8 B whose
// zero point 128 cancels the shift to int8, and a computed scale.
TEST(MatMulIntegerTest, ScaledProductOfSignedActivations) {
  for (DType bt : {DType::kUint8, DType::kInt8}) {
    SCOPED_TRACE(DTypeName(bt));
    GraphBuilder b;
    Value* a = b.Input("a", DType::kInt8, {2, 9, 77});
    Value* w = b.Constant("w", Eight(bt, {77, 45}, 3));
    Value* wzp = b.Constant("wzp", EightScalar(bt, bt == DType::kUint8 ? 128 : 0));
    Value* prod = b.Op("MatMulInteger", {a, w, b.Input("azp", DType::kInt8, {}), wzp});
    Value* f = b.Op("Cast", {prod}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
    b.Output(b.Op("Mul", {b.Input("s", DType::kFloat, {}), f}));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model,
                               {{"a", Eight(DType::kInt8, {2, 9, 77}, 4)},
                                {"azp", EightScalar(DType::kInt8, -37)},
                                {"s", Tensor::Scalar<float>(0.0173f)}},
                               0, 0, 0);
    // Without VNNI: one pair-kernel step writing the Mul's output.
    EXPECT_NE(plan.find(HasVnni() ? "Mul(scale)" : "[int8 pairs] + [Cast"), std::string::npos) << plan;
  }
}

// A constant B is held once while the plan runs: beside its int8 copy B'
// (packed or plain), the model's B (uint8 or int8, at least 64 KB) gives its
// bytes up, in the
// scaled form (uint8 B at zero point 128) and the plain one (uint8 B without a
// zero point: b_zp' = -128), and gets them back exactly when read; a second
// shape compiles from the released B, and both plans match the reference.
TEST(MatMulIntegerTest, TheModelsConstantBGivesUpItsBytesOncePacked) {
  if (!HasVnni()) GTEST_SKIP() << "no VNNI: the pair kernels read the model's B in place";
  struct Case {
    DType b_type;
    bool scaled;
  };
  for (const Case& c : {Case{DType::kUint8, true}, Case{DType::kUint8, false}, Case{DType::kInt8, false}}) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.b_type), c.scaled ? " scaled" : " plain"));
    GraphBuilder b;
    Value* a = b.Input("a", DType::kUint8, {Dim::Symbol("batch"), 64, 320});
    Value* w = b.Constant("w", Eight(c.b_type, {320, 256}, 8));
    std::vector<Value*> ins = {a, w, b.Input("azp", DType::kUint8, {})};
    if (c.scaled) ins.push_back(b.Constant("wzp", EightScalar(c.b_type, 128)));
    Value* prod = b.Op("MatMulInteger", ins);
    if (c.scaled) {
      Value* f = b.Op("Cast", {prod}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
      prod = b.Op("Mul", {f, b.Input("s", DType::kFloat, {})});
    }
    b.Output(prod);
    std::unique_ptr<Model> model = b.Build(13);
    const Tensor w_before = model->graph->FindValue("w")->initializer()->Clone();
    CpuExecutor cpu(*model);
    for (int64_t batch : {2, 3}) {
      std::map<std::string, RuntimeValue> feeds = {{"a", Eight(DType::kUint8, {batch, 64, 320}, 9)},
                                                   {"azp", EightScalar(DType::kUint8, 131)},
                                                   {"s", Tensor::Scalar<float>(0.0173f)}};
      if (!c.scaled) feeds.erase("s");
      auto want = ReferenceExecutor(*model).Run(feeds);
      ASSERT_TRUE(want.ok()) << want.status();
      auto got = cpu.Run(feeds);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectClose((*got)[0].tensor, (*want)[0].tensor, 0, 0);
      auto plan = cpu.PlanFor(feeds);
      ASSERT_TRUE(plan.ok());
      EXPECT_NE(DescribePlan(**plan).find(c.scaled ? "Mul(scale)" : "matmul_integer"), std::string::npos)
          << DescribePlan(**plan);
      if (batch == 2) {
        EXPECT_TRUE(model->graph->FindValue("w")->initializer()->buffer()->released()) << DescribePlan(**plan);
        // The model's B, and B' too where oneDNN packed it.
        const size_t packed = StatsOf(**plan).weight_bytes > 0 ? 1 : 0;
        EXPECT_EQ(StatsOf(**plan).released_weight_bytes, (1 + packed) * w_before.byte_size());
      }
    }
    EXPECT_TRUE(model->graph->FindValue("w")->initializer()->BitwiseEquals(w_before));
  }
}

}  // namespace
}  // namespace aic::cpu

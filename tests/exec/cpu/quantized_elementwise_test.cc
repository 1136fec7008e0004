// ai.aic QLinearLookup, QLinearAdd and QLinearMul on the CPU backend: bitwise
// equal to their reference kernels (which are bitwise the QDQ patterns they
// replace, tests/rewrite/quantized_elementwise_rules_test.cc), for uint8 and
// int8, same-shape, per-channel and scalar operands, lengths with vector
// tails; and in the layout a QLinearConv leaves its output in, with no
// reorder to plain between the convs and these steps (the per-channel b of
// an SE block against a channels-last activation included). Then the byte
// lookup kernel against the plain loop, and DequantizeLinear/QuantizeLinear
// reading and writing a blocked activation as it is.
#include <random>
#include <string>

#include "exec/cpu/kernels/byte_lookup.h"
#include "exec/cpu/kernels/quantize_run.h"
#include "gtest/gtest.h"
#include "ops/fused/standard_aliases.h"
#include "tests/exec/cpu/exact_qlinear_conv.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

Tensor RandomTable(DType t, uint32_t seed) {
  return t == DType::kUint8 ? RandomInts<uint8_t>({256}, seed, 0, 255) : RandomInts<int8_t>({256}, seed, -128, 127);
}

Tensor RandomEightBit(DType t, const std::vector<int64_t>& dims, uint32_t seed) {
  return t == DType::kUint8 ? RandomInts<uint8_t>(dims, seed, 0, 255) : RandomInts<int8_t>(dims, seed, -128, 127);
}

Value* ZeroPoint(GraphBuilder& b, const std::string& name, DType t, int v) {
  return t == DType::kUint8 ? b.Constant(name, Scalar<uint8_t>(t, static_cast<uint8_t>(v)))
                            : b.Constant(name, Scalar<int8_t>(t, static_cast<int8_t>(v)));
}

std::unique_ptr<Model> Finish(GraphBuilder& b) {
  auto m = b.Build(17);
  m->opset_imports.push_back({kAicDomain, 1});
  return m;
}

TEST(QuantizedElementwiseTest, LookupMatchesTheReference) {
  for (DType xt : {DType::kUint8, DType::kInt8}) {
    for (DType yt : {DType::kUint8, DType::kInt8}) {
      for (std::vector<int64_t> dims : {std::vector<int64_t>{1, 8, 9, 9}, {3, 77}, {5}}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(xt)) + " " + std::to_string(static_cast<int>(yt)) + " " +
                     std::to_string(dims.size()));
        GraphBuilder b;
        Value* x = b.Input("x", xt, D(dims));
        b.Output(b.OpN("QLinearLookup", {x, b.Constant("t", RandomTable(yt, 3))}, 1, {}, kAicDomain)[0]);
        auto m = Finish(b);
        std::string plan = RunBoth(*m, {{"x", RandomEightBit(xt, dims, 5)}}, 0, 0, 0);
        EXPECT_EQ(CountOf(plan, "lookup\t"), 1) << plan;
      }
    }
  }
}

struct BinaryCase {
  const char* name;
  const char* op;
  std::vector<int64_t> a, b;
  DType at, bt, yt;
  bool relu;
};

TEST(QuantizedElementwiseTest, AddAndMulMatchTheReference) {
  const DType u8 = DType::kUint8, s8 = DType::kInt8;
  const BinaryCase cases[] = {
      {"add", "QLinearAdd", {1, 8, 7, 7}, {1, 8, 7, 7}, u8, u8, u8, false},
      {"add relu", "QLinearAdd", {2, 8, 7, 7}, {2, 8, 7, 7}, u8, u8, u8, true},
      {"add int8", "QLinearAdd", {3, 300}, {3, 300}, s8, s8, s8, false},
      {"add mixed", "QLinearAdd", {3, 300}, {3, 300}, u8, s8, s8, true},
      {"mul per channel", "QLinearMul", {1, 24, 5, 5}, {1, 24, 1, 1}, u8, u8, u8, false},
      {"mul per channel first", "QLinearMul", {2, 24, 1, 1}, {2, 24, 5, 5}, u8, u8, s8, false},
      {"mul scalar", "QLinearMul", {4, 9, 9}, {1}, u8, u8, u8, false},
      {"mul last axis", "QLinearMul", {4, 9, 33}, {33}, s8, u8, u8, true},
      {"mul same shape", "QLinearMul", {2, 5, 33}, {2, 5, 33}, u8, s8, u8, true},
  };
  // Same-shaped operands take the fused AVX-512 or AVX2 pass, which
  // quantizes by division or by the reciprocal (whichever is faster here):
  // all four checked (the AVX2 pass too on a CPU with AVX-512).
  const bool avx2_before = kernels::ForceQuantizeWithoutAvx512(false);
  for (int way = 0; way < 4; ++way)
  for (const BinaryCase& c : cases) {
    SCOPED_TRACE(std::string(c.name) + (way & 2 ? " AVX2" : "") + (way & 1 ? " (division)" : " (reciprocal)"));
    kernels::ForceQuantizeWithoutAvx512(way & 2);
    kernels::ForceQuantizeByDivision(way & 1);
    GraphBuilder b;
    Value* a = b.Input("a", c.at, D(c.a));
    Value* x = b.Input("b", c.bt, D(c.b));
    std::vector<Value*> in = {a,
                              b.Constant("as", Scalar<float>(DType::kFloat, 0.031f)),
                              ZeroPoint(b, "az", c.at, c.at == u8 ? 125 : -3),
                              x,
                              b.Constant("bs", Scalar<float>(DType::kFloat, c.op[7] == 'M' ? 0.0039f : 0.017f)),
                              ZeroPoint(b, "bz", c.bt, c.bt == u8 ? 140 : 4),
                              b.Constant("ys", Scalar<float>(DType::kFloat, c.op[7] == 'M' ? 0.011f : 0.027f)),
                              ZeroPoint(b, "yz", c.yt, c.yt == u8 ? 128 : 0)};
    b.Output(b.OpN(c.op, in, 1, {Attribute::Int("fuse_relu", c.relu ? 1 : 0)}, kAicDomain)[0]);
    auto m = Finish(b);
    std::string plan =
        RunBoth(*m, {{"a", RandomEightBit(c.at, c.a, 7)}, {"b", RandomEightBit(c.bt, c.b, 8)}}, 0, 0, 0);
    EXPECT_EQ(CountOf(plan, c.op[7] == 'A' ? "qadd\t" : "qmul\t"), 1) << plan;
  }
  kernels::ForceQuantizeByDivision(-1);
  kernels::ForceQuantizeWithoutAvx512(avx2_before);
}

// Every (a, b) pair of uint8 values through the fused same-shape pass, at
// scales where rounding each dequantized operand before the sum matters: a
// pass whose compiler contracted (b - zb)·sb + fa into one FMA quantized two
// of the 65536 pairs a step off the reference.
TEST(QuantizedElementwiseTest, FusedAddRoundsEachOperandAsTheReference) {
  const DType u8 = DType::kUint8;
  const bool avx2_before = kernels::ForceQuantizeWithoutAvx512(false);
  Tensor a(u8, {1, 65536}), x(u8, {1, 65536});
  for (int i = 0; i < 65536; ++i) {
    a.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i / 256);
    x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i % 256);
  }
  for (int way = 0; way < 4; ++way) {
    SCOPED_TRACE(std::string(way & 2 ? "AVX2 " : "") + (way & 1 ? "division" : "reciprocal"));
    kernels::ForceQuantizeWithoutAvx512(way & 2);
    kernels::ForceQuantizeByDivision(way & 1);
    GraphBuilder b;
    std::vector<Value*> in = {b.Input("a", u8, {1, 65536}),
                              b.Constant("as", Scalar<float>(DType::kFloat, 0.010731131f)),
                              ZeroPoint(b, "az", u8, 48),
                              b.Input("b", u8, {1, 65536}),
                              b.Constant("bs", Scalar<float>(DType::kFloat, 0.03767556f)),
                              ZeroPoint(b, "bz", u8, 255),
                              b.Constant("ys", Scalar<float>(DType::kFloat, 0.017603708f)),
                              ZeroPoint(b, "yz", u8, 220)};
    b.Output(b.OpN("QLinearAdd", in, 1, {}, kAicDomain)[0]);
    auto m = Finish(b);
    std::string plan = RunBoth(*m, {{"a", a}, {"b", x}}, 0, 0, 0);
    EXPECT_EQ(CountOf(plan, "qadd\t"), 1) << plan;
  }
  kernels::ForceQuantizeByDivision(-1);
  kernels::ForceQuantizeWithoutAvx512(avx2_before);
}

// Quotients far outside the 8-bit range (a y_scale of 1e-5, beyond 16 bits;
// 1e-9, beyond 32) saturate to the type's bounds in the fused pass as in the
// reference, for each signedness of the operands and the output; 176 values
// a row, so AVX-512's steps of 64 and of 16 both run.
TEST(QuantizedElementwiseTest, FusedPassSaturatesAsTheReference) {
  const DType u8 = DType::kUint8, s8 = DType::kInt8;
  const bool avx2_before = kernels::ForceQuantizeWithoutAvx512(false);
  for (int way = 0; way < 6; ++way) {
    const bool avx2 = way & 1;
    const float y_scale = way & 2 ? 1e-9f : 1e-5f;
    kernels::ForceQuantizeWithoutAvx512(avx2);
    kernels::ForceQuantizeByDivision(way < 4 ? 1 : 0);
    for (DType at : {u8, s8}) {
      for (DType yt : {u8, s8}) {
        SCOPED_TRACE(std::string(at == u8 ? "u8" : "s8") + " -> " + (yt == u8 ? "u8" : "s8") + (avx2 ? " AVX2" : "") +
                     " y_scale " + std::to_string(y_scale) + (way < 4 ? " (division)" : " (reciprocal)"));
        GraphBuilder b;
        std::vector<Value*> in = {b.Input("a", at, {2, 88}),
                                  b.Constant("as", Scalar<float>(DType::kFloat, 0.02f)),
                                  ZeroPoint(b, "az", at, at == u8 ? 130 : -5),
                                  b.Input("b", s8, {2, 88}),
                                  b.Constant("bs", Scalar<float>(DType::kFloat, 0.01f)),
                                  ZeroPoint(b, "bz", s8, 3),
                                  b.Constant("ys", Scalar<float>(DType::kFloat, y_scale)),
                                  ZeroPoint(b, "yz", yt, yt == u8 ? 7 : -9)};
        b.Output(b.OpN("QLinearAdd", in, 1, {}, kAicDomain)[0]);
        auto m = Finish(b);
        std::string plan =
            RunBoth(*m, {{"a", RandomEightBit(at, {2, 88}, 3)}, {"b", RandomEightBit(s8, {2, 88}, 4)}}, 0, 0, 0);
        EXPECT_EQ(CountOf(plan, "qadd\t"), 1) << plan;
      }
    }
  }
  kernels::ForceQuantizeByDivision(-1);
  kernels::ForceQuantizeWithoutAvx512(avx2_before);
}

// conv -> conv -> residual QLinearAdd with the first conv's output, an SE
// scale (QLinearMul by a per-channel [1, C, 1, 1] value) and a lookup, then
// a conv again: every step reads the convs' own layout.
TEST(QuantizedElementwiseTest, StepsRunInTheConvLayout) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  for (int64_t channels : {32, 24}) {
    SCOPED_TRACE(channels);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kUint8, {1, channels, 10, 10});
    Value* s = b.Input("s", DType::kUint8, {1, channels, 1, 1});
    Value* c1 = ExactQLinearConv(b, x, "c1", channels, channels, 1, 1, 1);
    Value* c2 = ExactQLinearConv(b, c1, "c2", channels, channels, 3, channels, 2);
    auto quant = [&](const std::string& n, float scale, int zero) {
      return std::vector<Value*>{b.Constant(n + "_s", Scalar<float>(DType::kFloat, scale)),
                                 ZeroPoint(b, n + "_z", DType::kUint8, zero)};
    };
    // The convs' outputs are at scale 16 (2 for the depthwise), zero point 128.
    std::vector<Value*> q16 = quant("q16", 16.0f, 128), q4 = quant("q4", 4.0f, 128), qs = quant("qs", 1.0f / 255, 0);
    Value* sum = b.OpN("QLinearAdd", {c2, q4[0], q4[1], c1, q16[0], q16[1], q16[0], q16[1]}, 1,
                       {Attribute::Int("fuse_relu", 1)}, kAicDomain)[0];
    Value* scaled = b.OpN("QLinearMul", {sum, q16[0], q16[1], s, qs[0], qs[1], q16[0], q16[1]}, 1, {}, kAicDomain)[0];
    Value* looked = b.OpN("QLinearLookup", {scaled, b.Constant("t", RandomTable(DType::kUint8, 9))}, 1, {},
                          kAicDomain)[0];
    Value* c3 = ExactQLinearConv(b, looked, "c3", channels, 16, 1, 1, 3);
    b.Output(c3);
    auto m = Finish(b);
    std::string plan = RunBoth(*m,
                               {{"x", RandomInts<uint8_t>({1, channels, 10, 10}, 4, 0, 255)},
                                {"s", RandomInts<uint8_t>({1, channels, 1, 1}, 5, 0, 255)}},
                               0, 0, 0);
    // x into the first conv's layout and the graph output out of the last
    // one's, and nothing between them (the pair kernels: plain throughout).
    EXPECT_EQ(CountOf(plan, "reorder\t"), PairInt8() ? 0 : 2) << plan;
    EXPECT_EQ(CountOf(plan, "[int8"), 3) << plan;
  }
}

// A QLinearConv's blocked output dequantized, through a float op and
// quantized again without visiting plain form.
TEST(QuantizedElementwiseTest, QuantizeAndDequantizeKeepTheConvLayout) {
  AIC_SKIP_WITHOUT_EXACT_INT8();
  GraphBuilder b;
  Value* x = b.Input("x", DType::kUint8, {1, 32, 8, 8});
  Value* c1 = ExactQLinearConv(b, x, "c1", 32, 32, 1, 1, 1);
  Value* s = b.Constant("s", Scalar<float>(DType::kFloat, 16.0f));
  Value* z = b.Constant("z", Scalar<uint8_t>(DType::kUint8, 128));
  Value* f = b.Op("Relu", {b.Op("DequantizeLinear", {c1, s, z})});
  Value* q = b.Op("QuantizeLinear", {f, s, z});
  b.Output(ExactQLinearConv(b, q, "c2", 32, 16, 1, 1, 2));
  auto m = b.Build(17);
  std::string plan = RunBoth(*m, {{"x", RandomInts<uint8_t>({1, 32, 8, 8}, 4, 0, 255)}}, 0, 0, 0);
  EXPECT_EQ(CountOf(plan, "reorder\t"), PairInt8() ? 0 : 2) << plan;  // the input's and the output's
}

TEST(ByteLookupTest, MatchesThePlainLoop) {
  std::mt19937 rng(3);
  std::vector<uint8_t> table(256);
  for (uint8_t& v : table) v = static_cast<uint8_t>(rng());
  for (int64_t n : {0, 1, 63, 64, 65, 200, 4096 * 3 + 17, 100000}) {
    std::vector<uint8_t> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (uint8_t& v : x) v = static_cast<uint8_t>(rng());
    for (bool signed_index : {false, true}) {
      kernels::LookupBytes(x.data(), y.data(), n, table.data(), signed_index);
      for (int64_t i = 0; i < n; ++i) {
        int index = signed_index ? static_cast<int8_t>(x[i]) + 128 : x[i];
        ASSERT_EQ(y[i], table[index]) << "n " << n << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace aic::cpu

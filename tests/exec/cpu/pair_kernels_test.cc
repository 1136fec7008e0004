// The exact int8 kernels for CPUs without VNNI (exec/cpu/kernels/pair_gemm.h,
// pair_conv.h, pair_depthwise.h): the product against int64 sums for shapes
// off every blocking (rows off the 6-row tile, k odd, n off the 16-column
// panel), operands at the extremes (255·-128 in every term), each output
// kind against its scalar definition, requantization at exact ties (half to
// even), saturation and products too large for the unclamped conversion;
// then QLinearConv through the CPU executor on the geometries the
// convolutions take (pointwise, padded, strided, dilated, 1-D, 3-D, grouped,
// depthwise with a multiplier, uint8 weights with zero points, int8 input,
// a batch), bit for bit against the reference kernel.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/pair_conv.h"
#include "exec/cpu/kernels/pair_depthwise.h"
#include "exec/cpu/kernels/pair_gemm.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/exact_qlinear_conv.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

using kernels::PairGemmOutput;

#define AIC_SKIP_WITHOUT_PAIR_KERNELS() \
  if (!kernels::PairGemmAvailable()) GTEST_SKIP() << "no AVX2: the pair kernels do not run here"

int32_t Eight(const std::vector<uint8_t>& bytes, bool is_signed, size_t i) {
  return is_signed ? static_cast<int8_t>(bytes[i]) : bytes[i];
}

// One product's operands, packed, and its sums in int64.
struct Product {
  int64_t rows, k, n;
  bool a_signed, b_signed;
  std::vector<uint8_t> a, b;
  std::vector<int32_t> a_zero, b_zero;  // per row (a_zero.size() rows cycle) / per column or one
  std::vector<int16_t> packed_a, panels;
  std::vector<int64_t> sums;

  Product(int64_t rows_, int64_t k_, int64_t n_, bool as, bool bs, uint32_t seed, bool extreme = false)
      : rows(rows_), k(k_), n(n_), a_signed(as), b_signed(bs) {
    std::mt19937 rng(seed);
    a.resize(static_cast<size_t>(rows * k));
    b.resize(static_cast<size_t>(k * n));
    for (uint8_t& v : a) v = extreme ? (as ? 0x80 : 0xff) : static_cast<uint8_t>(rng());
    for (uint8_t& v : b) v = extreme ? (bs ? 0x80 : 0x00) : static_cast<uint8_t>(rng());
    if (!extreme) {
      a_zero = {static_cast<int32_t>(rng() % 256) - (as ? 128 : 0), static_cast<int32_t>(rng() % 256) - (as ? 128 : 0)};
      for (int64_t j = 0; j < n; ++j) b_zero.push_back(static_cast<int32_t>(rng() % 256) - (bs ? 128 : 0));
    } else {
      a_zero = {as ? 127 : 0};  // |a - zero| = 255
      b_zero = {bs ? 127 : 255};
    }
    packed_a.resize(static_cast<size_t>(kernels::PairRowsSize(rows, k)));
    panels.resize(static_cast<size_t>(kernels::PairPanelsSize(k, n)));
    kernels::WidenPairRows(a.data(), as, rows, k, k, a_zero.data(), static_cast<int64_t>(a_zero.size()),
                           packed_a.data());
    kernels::PackPairPanels(b.data(), bs, k, n, n, b_zero.data(), b_zero.size() > 1, panels.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t i = 0; i < k; ++i) {
          const int64_t x = Eight(a, as, static_cast<size_t>(r * k + i)) - a_zero[r % a_zero.size()];
          const int64_t w = Eight(b, bs, static_cast<size_t>(i * n + j)) - b_zero[b_zero.size() > 1 ? j : 0];
          s += x * w;
        }
        sums.push_back(s);
      }
    }
  }
  void Run(const PairGemmOutput& out) const {
    kernels::PairGemm(packed_a.data(), rows, panels.data(), kernels::PairCount(k), n, out);
  }
};

TEST(PairGemmTest, SumsEqualInt64Products) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  uint32_t seed = 1;
  for (int64_t rows : {1, 5, 6, 7, 13, 40}) {
    for (int64_t k : {1, 2, 7, 16, 33, 300, 1537}) {
      for (int64_t n : {1, 15, 16, 17, 50}) {
        for (bool as : {false, true}) {
          SCOPED_TRACE(absl::StrCat(rows, "x", k, "x", n, as ? " int8 A" : " uint8 A"));
          Product p(rows, k, n, as, !as, seed++);
          std::vector<int32_t> c(static_cast<size_t>(rows * n), -1);
          PairGemmOutput out;
          out.y = c.data();
          out.ldy = n;
          p.Run(out);
          for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], p.sums[i]) << "element " << i;
        }
      }
    }
  }
}

// 255 · -128 (or 255 · 255 with zero points) in every term: a saturating
// u8·s8 pair sum would clamp at 32767 here.
TEST(PairGemmTest, ExtremeOperandsAreExact) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  for (bool as : {false, true}) {
    for (bool bs : {false, true}) {
      Product p(7, 1001, 19, as, bs, 3, /*extreme=*/true);
      std::vector<int32_t> c(static_cast<size_t>(7 * 19));
      PairGemmOutput out;
      out.y = c.data();
      out.ldy = 19;
      p.Run(out);
      for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], p.sums[i]) << "element " << i;
      EXPECT_EQ(std::abs(p.sums[0]), 1001 * 255 * 255);
    }
  }
}

TEST(PairGemmTest, ScaledOutputIsCastThenMul) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  Product p(9, 77, 45, false, true, 7);
  std::vector<float> y(static_cast<size_t>(9 * 45));
  PairGemmOutput out;
  out.kind = PairGemmOutput::Kind::kScaled;
  out.y = y.data();
  out.ldy = 45;
  out.scale = 0.0173f;
  p.Run(out);
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_EQ(y[i], static_cast<float>(static_cast<int32_t>(p.sums[i])) * 0.0173f) << "element " << i;
  }
}

// saturate(nearbyint(double(C + bias) · scale) + zero), the reference's
// QuantizeValue, per row and per column, with ties (scale 0.5 on odd sums),
// and with and without the caller's bound that skips the clamp.
TEST(PairGemmTest, QuantizedOutputRoundsAsTheReference) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  const int64_t rows = 11, n = 37;
  Product p(rows, 50, n, false, true, 11);
  std::mt19937 rng(5);
  std::vector<int32_t> bias(static_cast<size_t>(std::max(rows, n)));
  for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 4001) - 2000;
  std::vector<double> scales(bias.size());
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = i % 3 == 0 ? 0.5 : 1.0 / (300.0 + static_cast<double>(i));
  for (bool per_row : {false, true}) {
    for (bool out_signed : {false, true}) {
      for (bool fits : {false, true}) {
        for (int32_t zero : {0, 3, out_signed ? -100 : 250}) {
          SCOPED_TRACE(absl::StrCat(per_row ? "per row" : "per column", out_signed ? " int8" : " uint8",
                                    fits ? " fits" : "", " zero ", zero));
          std::vector<uint8_t> y(static_cast<size_t>(rows * n));
          PairGemmOutput out;
          out.kind = PairGemmOutput::Kind::kQuantize;
          out.y = y.data();
          out.ldy = n;
          out.bias = bias.data();
          out.scales = scales.data();
          out.per_row = per_row;
          out.zero = zero;
          out.out_signed = out_signed;
          out.sums_fit = fits;
          p.Run(out);
          int64_t ties = 0, saturated = 0;
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < n; ++j) {
              const size_t at = static_cast<size_t>(per_row ? r : j);
              const double v = static_cast<double>(p.sums[r * n + j] + bias[at]) * scales[at];
              ties += std::abs(v - std::trunc(v)) == 0.5;
              double q = std::nearbyint(v) + zero;
              const double lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
              saturated += q < lo || q > hi;
              q = std::min(hi, std::max(lo, q));
              const int32_t got = out_signed ? static_cast<int8_t>(y[r * n + j]) : y[r * n + j];
              ASSERT_EQ(got, static_cast<int32_t>(q)) << "row " << r << ", column " << j << ": " << v;
            }
          }
          EXPECT_GT(ties, 0);
          EXPECT_LT(saturated, rows * n);
        }
      }
    }
  }
}

// Sums of |C·scale| past 2^31: without the caller's bound the conversion is
// clamped first (an unclamped one would give INT_MIN, a wrong sign).
TEST(PairGemmTest, HugeProductsSaturate) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  Product p(6, 1001, 16, false, true, 0, /*extreme=*/true);  // sums -1001·255·255
  std::vector<uint8_t> y(6 * 16);
  PairGemmOutput out;
  out.kind = PairGemmOutput::Kind::kQuantize;
  out.y = y.data();
  out.ldy = 16;
  out.scale_one = -1e6;  // products about +6.5e13
  out.zero = 3;
  p.Run(out);
  for (uint8_t v : y) ASSERT_EQ(v, 255);
}

// A QLinearConv model: x [n, c, spatial...] (uint8 or int8), weights int8 or
// uint8 with per-channel zero points, per-channel scales, a bias, the given
// attributes.
struct ConvCase {
  const char* name;
  std::vector<int64_t> x_dims;
  int64_t m;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides = {}, pads = {}, dilations = {};
  int64_t group = 1;
  DType x_type = DType::kUint8, w_type = DType::kInt8, y_type = DType::kUint8;
  bool w_zero = false;
  std::string auto_pad = "NOTSET";
};

Tensor EightScalar(DType t, int v) {
  return t == DType::kUint8 ? Scalar<uint8_t>(t, static_cast<uint8_t>(v)) : Scalar<int8_t>(t, static_cast<int8_t>(v));
}

std::unique_ptr<Model> ConvModel(const ConvCase& c, uint32_t seed) {
  const int64_t cg = c.x_dims[1] / c.group;
  std::vector<int64_t> wd = {c.m, cg};
  int64_t taps = 1;
  for (int64_t k : c.kernel) {
    wd.push_back(k);
    taps *= k;
  }
  Tensor w = c.w_type == DType::kInt8 ? RandomInts<int8_t>(wd, seed, -128, 127) : RandomInts<uint8_t>(wd, seed, 0, 255);
  Tensor ws(DType::kFloat, {c.m});
  Tensor wz = c.w_type == DType::kInt8 ? RandomInts<int8_t>({c.m}, seed + 2, -20, 20)
                                       : RandomInts<uint8_t>({c.m}, seed + 2, 100, 150);
  if (!c.w_zero) {
    for (int64_t i = 0; i < c.m; ++i) {
      if (c.w_type == DType::kInt8) wz.mutable_data<int8_t>()[i] = 0;
      else wz.mutable_data<uint8_t>()[i] = 128;
    }
  }
  for (int64_t i = 0; i < c.m; ++i) ws.mutable_data<float>()[i] = 0.003f + 0.0007f * static_cast<float>(i % 9);
  const float xs = 0.021f;
  // The output spans about three standard deviations of the sums.
  const float ys = static_cast<float>(std::sqrt(static_cast<double>(cg * taps)) * 110 * 73 * xs * 0.005 * 3 / 128);
  GraphBuilder b;
  Value* x = b.Input("x", c.x_type, D(c.x_dims));
  std::vector<Value*> in = {x,
                            b.Constant("xs", Scalar<float>(DType::kFloat, xs)),
                            b.Constant("xz", EightScalar(c.x_type, c.x_type == DType::kUint8 ? 131 : -7)),
                            b.Constant("w", w),
                            b.Constant("ws", ws),
                            b.Constant("wz", wz),
                            b.Constant("ys", Scalar<float>(DType::kFloat, ys)),
                            b.Constant("yz", EightScalar(c.y_type, c.y_type == DType::kUint8 ? 120 : -3)),
                            b.Constant("b", RandomInts<int32_t>({c.m}, seed + 1, -20000, 20000))};
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", c.kernel), Attribute::Int("group", c.group)};
  if (!c.strides.empty()) attrs.push_back(Attribute::Ints("strides", c.strides));
  if (!c.pads.empty()) attrs.push_back(Attribute::Ints("pads", c.pads));
  if (!c.dilations.empty()) attrs.push_back(Attribute::Ints("dilations", c.dilations));
  if (c.auto_pad != "NOTSET") attrs.push_back(Attribute::String("auto_pad", c.auto_pad));
  b.Output(b.Op("QLinearConv", in, attrs));
  return b.Build(13);
}

TEST(PairConvTest, QLinearConvMatchesTheReferenceBitForBit) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  if (!PairInt8()) GTEST_SKIP() << "VNNI: QLinearConv runs on oneDNN's int8 convolution here";
  const DType s8 = DType::kInt8, u8 = DType::kUint8;
  std::vector<ConvCase> cases = {
      {"pointwise", {1, 37, 9, 11}, 21, {1, 1}},
      {"pointwise, odd channels, int8 x and y", {1, 13, 6, 6}, 8, {1, 1}, {}, {}, {}, 1, s8, s8, s8},
      {"3x3 pad 1", {1, 16, 12, 12}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"3x3 stride 2, asymmetric pads", {1, 8, 15, 14}, 12, {3, 3}, {2, 2}, {0, 1, 1, 0}},
      {"5x3 stride 3 pad 2, rows of 7", {1, 5, 20, 21}, 7, {5, 3}, {3, 3}, {2, 2, 2, 2}},
      {"3x3 dilation 2", {1, 6, 13, 13}, 9, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}},
      {"7x7 stride 2 (a stem) on 3 channels", {1, 3, 40, 40}, 16, {7, 7}, {2, 2}, {3, 3, 3, 3}},
      {"1x1 stride 2 (a downsample)", {1, 24, 14, 14}, 40, {1, 1}, {2, 2}},
      {"SAME_UPPER", {1, 4, 10, 9}, 6, {4, 4}, {2, 2}, {}, {}, 1, u8, s8, u8, false, "SAME_UPPER"},
      {"uint8 weights with zero points", {1, 12, 8, 8}, 10, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 1, u8, u8, u8, true},
      {"int8 weights with zero points", {1, 12, 8, 8}, 10, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 1, u8, s8, u8, true},
      {"grouped (4 groups)", {1, 32, 10, 10}, 20, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 4},
      {"a batch of 3", {3, 8, 9, 9}, 14, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"1-D", {2, 10, 50}, 12, {5}, {1}, {2, 2}},
      {"1-D stride 2", {1, 6, 33}, 5, {3}, {2}, {1, 1}},
      {"3-D", {1, 4, 5, 6, 7}, 6, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
      {"3-D stride 2", {1, 3, 8, 8, 8}, 4, {2, 3, 3}, {2, 2, 2}, {0, 1, 1, 0, 1, 1}},
      {"depthwise 3x3", {1, 24, 14, 14}, 24, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 24},
      {"depthwise 5x5 stride 2", {1, 16, 17, 17}, 16, {5, 5}, {2, 2}, {2, 2, 2, 2}, {}, 16},
      {"depthwise 3x3 stride 2, asymmetric pads", {1, 8, 16, 16}, 8, {3, 3}, {2, 2}, {0, 0, 1, 1}, {}, 8},
      {"depthwise dilation 2, int8 x", {1, 8, 11, 11}, 8, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 8, s8},
      {"depthwise multiplier 2, uint8 weights with zero points", {2, 6, 9, 9}, 12, {3, 3}, {1, 1}, {1, 1, 1, 1}, {},
       6, u8, u8, u8, true},
      {"depthwise stride 3, kernel past the input", {1, 4, 4, 5}, 4, {5, 5}, {3, 3}, {3, 3, 3, 3}, {}, 4},
      {"depthwise 7x7 on 7x7", {1, 32, 7, 7}, 32, {7, 7}, {1, 1}, {3, 3, 3, 3}, {}, 32},
      {"depthwise 1-D", {1, 10, 40}, 10, {9}, {1}, {4, 4}, {}, 10},
      // Patches past 2 MB are packed and multiplied a block of output rows at a time.
      {"3x3 on 100x100, two blocks of output rows", {1, 16, 100, 100}, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"pointwise on 80x80, two blocks", {1, 200, 80, 80}, 4, {1, 1}},
      {"3-D, blocks across depth", {1, 16, 6, 40, 40}, 4, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto model = ConvModel(c, 3);
    Tensor x = c.x_type == DType::kUint8 ? RandomInts<uint8_t>(c.x_dims, 17, 0, 255)
                                         : RandomInts<int8_t>(c.x_dims, 17, -128, 127);
    auto want = ReferenceExecutor(*model).Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.status();
    CpuExecutor cpu(*model);
    auto got = cpu.Run({{"x", x}});
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*got)[0].tensor, (*want)[0].tensor, 0, 0);
    auto plan = cpu.PlanFor({{"x", x}});
    ASSERT_TRUE(plan.ok());
    const std::string desc = DescribePlan(**plan);
    EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
    const bool depthwise = c.group > 1 && c.group == c.x_dims[1] && c.x_dims.size() <= 4;
    EXPECT_NE(desc.find(depthwise ? "[int8 pairs, depthwise]" : "[int8 pairs]"), std::string::npos) << desc;
    // Not every output saturated: the case exercises the requantization.
    int64_t saturated = 0;
    const Tensor& y = (*want)[0].tensor;
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      const double v = y.ElementAsDouble(i);
      saturated += v == 0 || v == 255 || v == -128 || v == 127;
    }
    EXPECT_LT(saturated * 2, y.num_elements());
  }
}

// ConvInteger (quantize_dynamic's form of every Conv) on the pair kernels:
// int32 sums equal to the reference's, x's zero point a graph input read
// each run, weights int8 or uint8 with zero points per tensor or channel;
// then DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(scale) compiled
// into one conv step writing the Mul's output, bit for bit.
TEST(PairConvTest, ConvIntegerMatchesTheReferenceBitForBit) {
  AIC_SKIP_WITHOUT_PAIR_KERNELS();
  struct IntCase {
    const char* name;
    std::vector<int64_t> x_dims;
    int64_t m, k, group, stride;
    DType x_type, w_type;
    bool per_channel_zero;
  };
  const DType s8 = DType::kInt8, u8 = DType::kUint8;
  std::vector<IntCase> cases = {
      {"3x3 uint8 x, int8 w", {1, 8, 13, 13}, 12, 3, 1, 1, u8, s8, false},
      {"3x3 stride 2, uint8 w with per-channel zero points", {2, 6, 11, 11}, 10, 3, 1, 2, u8, u8, true},
      {"1x1 int8 x", {1, 20, 9, 9}, 7, 1, 1, 1, s8, s8, true},
      {"depthwise 3x3", {1, 16, 10, 10}, 16, 3, 16, 1, u8, s8, false},
      {"depthwise 5x5 stride 2, uint8 w with per-channel zero points", {2, 12, 15, 15}, 12, 5, 12, 2, u8, u8, true},
  };
  for (const IntCase& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t cg = c.x_dims[1] / c.group;
    Tensor w = c.w_type == s8 ? RandomInts<int8_t>({c.m, cg, c.k, c.k}, 5, -128, 127)
                              : RandomInts<uint8_t>({c.m, cg, c.k, c.k}, 5, 0, 255);
    Tensor wz = c.per_channel_zero ? (c.w_type == s8 ? RandomInts<int8_t>({c.m}, 6, -9, 9)
                                                     : RandomInts<uint8_t>({c.m}, 6, 120, 136))
                                   : EightScalar(c.w_type, c.w_type == s8 ? 3 : 128);
    GraphBuilder b;
    Value* x = b.Input("x", c.x_type, D(c.x_dims));
    Value* xz = b.Input("xz", c.x_type, {});
    b.Output(b.Op("ConvInteger", {x, b.Constant("w", w), xz, b.Constant("wz", wz)},
                  {Attribute::Ints("kernel_shape", {c.k, c.k}), Attribute::Ints("strides", {c.stride, c.stride}),
                   Attribute::Ints("pads", std::vector<int64_t>(4, c.k / 2)), Attribute::Int("group", c.group)}));
    auto model = b.Build(13);
    Tensor xv = c.x_type == u8 ? RandomInts<uint8_t>(c.x_dims, 7, 0, 255) : RandomInts<int8_t>(c.x_dims, 7, -128, 127);
    std::string plan = RunBoth(*model, {{"x", xv}, {"xz", EightScalar(c.x_type, c.x_type == u8 ? 133 : -4)}}, 0, 0, 0);
    EXPECT_NE(plan.find("ConvInteger"), std::string::npos) << plan;
    EXPECT_NE(plan.find(c.group > 1 ? "[int8 pairs, depthwise]" : "[int8 pairs]"), std::string::npos) << plan;
  }
  // quantize_dynamic's graph of a conv.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 12, 12});
  std::vector<Value*> q = b.OpN("DynamicQuantizeLinear", {x}, 3);
  Value* prod = b.Op("ConvInteger", {q[0], b.Constant("w", RandomInts<int8_t>({16, 8, 3, 3}, 8, -127, 127)), q[2]},
                     {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* f = b.Op("Cast", {prod}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  b.Output(b.Op("Mul", {f, b.Op("Mul", {q[1], b.Constant("ws", Scalar<float>(DType::kFloat, 0.0031f))})}));
  auto model = b.Build(13);
  std::string plan = RunBoth(*model, {{"x", RandomF32({1, 8, 12, 12}, 9)}}, 0, 0, 0);
  EXPECT_NE(plan.find("[int8 pairs] + [Cast"), std::string::npos) << plan;
}

}  // namespace
}  // namespace aic::cpu

// The AVX-512 transcendental kernels (exec/cpu/kernels/vector_math_avx512.h,
// unary_avx512.cc, the last-axis softmax) against double precision on dense
// grids and at the special values, and the lowering that picks them: a bare
// unary op runs natively in its input's layout where that is sound, a
// post-op chain stays with oneDNN. Skipped (with a message) on CPUs without
// AVX-512F, where the lowering keeps oneDNN's kernels.
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/axis_lanes.h"
#include "exec/cpu/kernels/binary.h"
#include "exec/cpu/kernels/pow.h"
#include "exec/cpu/kernels/softmax.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
#include "exec/cpu/plan.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
AIC_AVX512 void LogRowForTest(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, kernels::avx512::Log(_mm512_loadu_ps(x + i)));
}
AIC_AVX512 void ExpPdRowForTest(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, kernels::avx512::ExpPd(_mm512_loadu_pd(x + i)));
}
AIC_AVX512_END
#endif

#ifdef AIC_HAVE_AVX2_MATH
AIC_AVX2 void ExpPdAvx2RowForTest(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, kernels::avx2::ExpPd(_mm256_loadu_pd(x + i)));
}
#endif

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kUlp = 1.0 / (1 << 23);  // float's relative spacing at 1 (2^-23)

// The tests of FastUnaryKernel's ops run on either vector form.
bool SkipWithoutVectorKernels() { return !kernels::avx512::HaveAvx512() && !kernels::avx2::HaveAvx2Fma(); }

// Inputs: a dense grid over [lo, hi] (n points), padded to a multiple of 16
// by repeating the last point.
std::vector<float> Grid(double lo, double hi, int n) {
  std::vector<float> x;
  for (int i = 0; i < n; ++i) x.push_back(static_cast<float>(lo + (hi - lo) * i / (n - 1)));
  while (x.size() % 16 != 0) x.push_back(x.back());
  return x;
}

// The worst error of `fn` over x against `want`, in units of float's
// relative spacing (|got - want| / (|want|·2^-23)), where |want| >= floor;
// below it the absolute error over floor·2^-23.
double WorstUlps(kernels::UnaryRowFn fn, const std::vector<float>& x, double (*want)(double), double floor,
                 float* at = nullptr) {
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double w = want(x[i]);
    double err = std::fabs(y[i] - w) / (std::max(std::fabs(w), floor) * kUlp);
    if (err > worst) {
      worst = err;
      if (at != nullptr) *at = x[i];
    }
  }
  return worst;
}

double ExpD(double v) { return std::exp(v); }
double SigmoidD(double v) { return 1.0 / (1.0 + std::exp(-v)); }
double TanhD(double v) { return std::tanh(v); }
double SoftplusD(double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }
double GeluTanhD(double v) { return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }
double MishD(double v) { return v * std::tanh(SoftplusD(v)); }
double LogD(double v) { return std::log(v); }

// The double-precision exp of the SVM kernel row (kernels/svm_kernel.h)
// against long double expl, in units of double's spacing (2^-52 relative;
// below DBL_MIN, of DBL_MIN's): over the whole finite range including the
// subnormal results, densely around 0, and at the special values.
TEST(VectorMathTest, DoubleExpWithinTwoUlps) {
  using RowFn = void (*)(const double*, double*, int64_t);
  std::vector<std::pair<const char*, RowFn>> forms;
#ifdef AIC_HAVE_AVX512_MATH
  if (kernels::avx512::HaveAvx512()) forms.emplace_back("AVX-512", ExpPdRowForTest);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (kernels::avx2::HaveAvx2Fma()) forms.emplace_back("AVX2", ExpPdAvx2RowForTest);
#endif
  if (forms.empty()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  std::vector<double> x;
  for (int i = 0; i < 400000; ++i) x.push_back(-745.0 + (709.7 + 745.0) * i / 399999);
  for (int i = 0; i < 100000; ++i) x.push_back(-1.0 + 2.0 * i / 99999);
  x.push_back(0.0);
  x.push_back(1e-300);
  while (x.size() % 8 != 0) x.push_back(x.back());
  for (const auto& [name, row] : forms) {
    SCOPED_TRACE(name);
    std::vector<double> y(x.size());
    row(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double want = std::exp(static_cast<long double>(x[i]));
      const long double scale = std::max<long double>(std::fabs(want), std::numeric_limits<double>::min());
      const double err = static_cast<double>(std::fabs(static_cast<long double>(y[i]) - want) / (scale * 0x1p-52L));
      if (err > worst) {
        worst = err;
        at = x[i];
      }
    }
    EXPECT_LE(worst, 2.0) << "at x = " << at;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> special = {-inf, inf, std::numeric_limits<double>::quiet_NaN(), 710.0, -746.0, -1e9, 1e9, 0.0};
    std::vector<double> out(special.size());
    row(special.data(), out.data(), 8);
    EXPECT_EQ(out[0], 0.0);
    EXPECT_EQ(out[1], inf);
    EXPECT_TRUE(std::isnan(out[2]));
    EXPECT_EQ(out[3], inf);
    EXPECT_EQ(out[4], 0.0);
    EXPECT_EQ(out[5], 0.0);
    EXPECT_EQ(out[6], inf);
    EXPECT_EQ(out[7], 1.0);
  }
}

// Pow's vector kernel (kernels/pow.h) against pow in long double rounded to
// float, within one float ulp, for every stride pattern the broadcast driver
// passes: bases over many binades (negative ones with integer exponents,
// subnormal ones), exponents that overflow and underflow the result; and
// exactly std::pow's value at the special operands (zeros, infinities, NaN,
// -1 and 1, non-integer powers of negative bases).
TEST(VectorMathTest, PowWithinOneUlp) {
  kernels::RowFn pow_row = kernels::Avx2PowKernel();
  if (pow_row == nullptr) GTEST_SKIP() << "this CPU has no AVX2+FMA: std::pow runs instead";
  std::vector<float> a, b;
  for (int i = 0; i < 200000; ++i) {
    const double u = (i % 997) / 996.0, v = (i % 1009) / 1008.0;
    float x = static_cast<float>(std::exp2(-40.0 + 80.0 * u));
    float y = static_cast<float>(-12.0 + 24.0 * v);
    if (i % 5 == 0) {  // a negative base with an integer exponent (odd and even)
      x = -x;
      y = std::nearbyint(y);
    }
    if (i % 7 == 0) y = static_cast<float>(-300.0 + 600.0 * v);  // overflow and underflow to (sub)normals
    if (i % 11 == 0) x = std::ldexp(static_cast<float>(1.0 + u), -140);  // a subnormal base
    a.push_back(x);
    b.push_back(y);
  }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> special = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, inf, -inf, nan, 3.0, -3.0};
  for (double x : special) {
    for (double y : special) {
      a.push_back(static_cast<float>(x));
      b.push_back(static_cast<float>(y));
    }
  }
  a.push_back(-8.0f);  // a non-integer power of a negative base: NaN
  b.push_back(1.0f / 3.0f);
  const int64_t n = static_cast<int64_t>(a.size());
  auto check = [&](const std::vector<float>& y, int64_t sa, int64_t sb) {
    double worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i * sa], e = b[i * sb];
      const float want = static_cast<float>(std::pow(static_cast<long double>(x), static_cast<long double>(e)));
      const float scalar = std::pow(x, e);
      if (std::isnan(scalar)) {
        EXPECT_TRUE(std::isnan(y[i])) << "pow(" << x << ", " << e << ") = " << y[i];
        continue;
      }
      if (!std::isfinite(x) || !std::isfinite(e) || x == 0.0f || !std::isfinite(scalar)) {
        EXPECT_EQ(y[i], scalar) << "pow(" << x << ", " << e << ")";
        EXPECT_EQ(std::signbit(y[i]), std::signbit(scalar)) << "pow(" << x << ", " << e << ")";
        continue;
      }
      // One ulp of the result's spacing (of the smallest normal's below it).
      const double spacing = std::max<double>(std::fabs(want), std::numeric_limits<float>::min()) * kUlp;
      const double err = std::fabs(static_cast<double>(y[i]) - static_cast<double>(want)) / spacing;
      if (err > worst) {
        worst = err;
        at = i;
      }
    }
    EXPECT_LE(worst, 1.0) << "pow(" << a[at * sa] << ", " << b[at * sb] << ")";
  };
  std::vector<float> y(n);
  const void* in[2] = {a.data(), b.data()};
  for (const auto& [sa, sb] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 0}, {0, 1}}) {
    SCOPED_TRACE(absl::StrCat("strides ", sa, " ", sb));
    const int64_t s[2] = {sa, sb};
    pow_row(in, s, y.data(), n);
    check(y, sa, sb);
  }
  // The graph's Pow takes it: the broadcast driver, with a broadcast exponent.
  DType out;
  EXPECT_NE(kernels::BinaryKernel("Pow", DType::kFloat, &out), nullptr);
}

TEST(VectorMathTest, FunctionsMatchDoublePrecision) {
  if (SkipWithoutVectorKernels()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  struct Case {
    const char* op;
    double (*want)(double);
    double lo, hi;
    double floor;  // below this |result|, absolute error
    double max_ulps;
  };
  const std::vector<Case> cases = {
      {"Exp", ExpD, -87, 88.7, 1e-30, 2},         {"Sigmoid", SigmoidD, -87, 40, 1e-30, 3},
      {"Tanh", TanhD, -10, 10, 1e-30, 3},         {"Tanh", TanhD, -0.01, 0.01, 1e-30, 3},
      {"Softplus", SoftplusD, -80, 80, 1e-30, 4}, {"GeluTanh", GeluTanhD, -10, 10, 1e-3, 12},
      {"Mish", MishD, -30, 30, 1e-3, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.op, " on [", c.lo, ", ", c.hi, "]"));
    kernels::UnaryRowFn fn = kernels::UnaryKernel(c.op);
    ASSERT_NE(fn, nullptr);
    float at = 0;
    double worst = WorstUlps(fn, Grid(c.lo, c.hi, 400001), c.want, c.floor, &at);
    EXPECT_LE(worst, c.max_ulps) << "at " << at;
  }
#ifdef AIC_HAVE_AVX512_MATH
  if (!kernels::avx512::HaveAvx512()) return;
  std::vector<float> x = Grid(1e-3, 1e4, 400001);
  for (float v = 1e-44f; v < 1e38f; v *= 1.37f) x.push_back(v);  // subnormals to huge
  while (x.size() % 16 != 0) x.push_back(1.0f);
  float at = 0;
  EXPECT_LE(WorstUlps(LogRowForTest, x, LogD, 1e-30, &at), 2) << "Log at " << at;
#endif
}

TEST(VectorMathTest, SpecialValues) {
  if (SkipWithoutVectorKernels()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, kInf, -kInf, 0.0f, -0.0f, 89.0f, 88.8f, -100.0f, -200.0f,
                          1e-40f, -1e-40f, 1e-8f, -1e-8f, 7.9f, -7.9f, 100.0f};
  auto run = [&](const char* op) {
    std::vector<float> y(x.size());
    kernels::UnaryKernel(op)(x.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
  };
  std::vector<float> e = run("Exp");
  EXPECT_TRUE(std::isnan(e[0]));
  EXPECT_EQ(e[1], kInf);
  EXPECT_EQ(e[2], 0.0f);
  EXPECT_EQ(e[3], 1.0f);
  EXPECT_EQ(e[5], kInf);                                   // e^89 overflows
  EXPECT_EQ(e[6], kInf);                                   // e^88.8 too
  EXPECT_GT(e[7], 0.0f);                                   // e^-100: subnormal, not flushed
  EXPECT_NEAR(e[7], std::exp(-100.0), 2e-45);
  EXPECT_EQ(e[8], 0.0f);
  std::vector<float> s = run("Sigmoid");
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[2], 0.0f);
  EXPECT_EQ(s[3], 0.5f);
  EXPECT_EQ(s[15], 1.0f);
  std::vector<float> t = run("Tanh");
  EXPECT_TRUE(std::isnan(t[0]));
  EXPECT_EQ(t[1], 1.0f);
  EXPECT_EQ(t[2], -1.0f);
  EXPECT_EQ(t[3], 0.0f);
  EXPECT_TRUE(std::signbit(t[4]));
  EXPECT_EQ(t[9], 1e-40f);  // tiny: x itself
  EXPECT_EQ(t[11], 1e-8f);
  EXPECT_EQ(t[12], -1e-8f);
  EXPECT_EQ(t[15], 1.0f);
  std::vector<float> p = run("Softplus");
  EXPECT_TRUE(std::isnan(p[0]));
  EXPECT_EQ(p[1], kInf);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_FLOAT_EQ(p[3], std::log(2.0f));
  EXPECT_EQ(p[15], 100.0f);
  EXPECT_FLOAT_EQ(p[8], static_cast<float>(std::exp(-200.0)));  // 0 in float: e^-200 underflows
  for (const char* op : {"GeluTanh", "Mish"}) {
    std::vector<float> g = run(op);
    SCOPED_TRACE(op);
    EXPECT_TRUE(std::isnan(g[0]));
    EXPECT_EQ(g[1], kInf);
    EXPECT_EQ(g[3], 0.0f);
    EXPECT_EQ(g[15], 100.0f);
    EXPECT_EQ(g[8], -0.0f);
  }
}

// Every length through the 16-wide body and the masked tail, both forms,
// lanes in groups of 16 and fewer.
TEST(VectorMathTest, LastAxisSoftmaxMatchesDoublePrecision) {
  if (SkipWithoutVectorKernels()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  for (int64_t n : {1, 2, 15, 16, 17, 31, 128, 1000, 32000}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(absl::StrCat(n, log ? " log-softmax" : " softmax"));
      // Many lanes for short ones: whole groups of 16 and a partial one.
      const int64_t rows = n <= 128 ? 37 : 3;
      std::vector<float> x(static_cast<size_t>(rows * n));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 20.0);
      std::vector<float> y(x.size());
      kernels::SoftmaxF32(x.data(), y.data(), {rows, n, 1}, log);
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * n;
        double m = row[0], sum = 0;
        for (int64_t j = 0; j < n; ++j) m = std::max<double>(m, row[j]);
        for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - m);
        double worst = 0;
        for (int64_t j = 0; j < n; ++j) {
          double want = log ? row[j] - m - std::log(sum) : std::exp(row[j] - m) / sum;
          double got = y[static_cast<size_t>(r * n + j)];
          // Log-probabilities near 0 come from x - shift with both near 20:
          // absolute error there.
          worst = std::max(worst, std::fabs(got - want) / std::max(std::fabs(want), log ? 1.0 : 1e-30));
        }
        EXPECT_LE(worst, 4e-6);
      }
    }
  }
  // A NaN turns its lane NaN; the other lanes are untouched.
  std::vector<float> x = {1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 1, 2, 3, 4};
  std::vector<float> y(8);
  kernels::SoftmaxF32(x.data(), y.data(), {2, 4, 1}, false);
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(y[j]));
  EXPECT_NEAR(y[4] + y[5] + y[6] + y[7], 1.0f, 1e-6);
}

// A bare unary op runs on its native step; one with a post-op after it
// (Sigmoid then Mul by a constant) stays a oneDNN eltwise with the Mul fused.
TEST(VectorMathTest, BareUnaryOpsRunNatively) {
  if (SkipWithoutVectorKernels()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  struct Case {
    const char* op;
    std::vector<Attribute> attrs;
    const char* kind;
    int opset;
  };
  const std::vector<Case> cases = {
      {"Exp", {}, "exp", 17},
      {"Sigmoid", {}, "sigmoid", 17},
      {"Tanh", {}, "tanh", 17},
      {"HardSigmoid", {Attribute::Float("alpha", 0.3f), Attribute::Float("beta", 0.4f)}, "hardsigmoid", 17},
      {"Gelu", {Attribute::String("approximate", "tanh")}, "gelutanh", 20},
      {"Softmax", {}, "softmax", 17},
      {"LogSoftmax", {}, "softmax", 17},
  };
  for (const Case& c : cases) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{3, 37}, std::vector<int64_t>{2, 4, 1000}}) {
      SCOPED_TRACE(absl::StrCat(c.op, " ", DimsToString(dims)));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D(dims));
      b.Output(b.Op(c.op, {x}, c.attrs));
      auto model = b.Build(c.opset);
      std::string plan = RunBoth(*model, {{"x", RandomF32(dims, 11, -6, 6)}}, 0, 1e-6, 4e-6);
      EXPECT_NE(plan.find(absl::StrCat(c.kind, "\t")), std::string::npos) << plan;
      EXPECT_EQ(plan.find("eltwise"), std::string::npos) << plan;
    }
  }
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, D({4, 64}));
  Value* s = b.Op("Sigmoid", {x});
  b.Output(b.Op("Mul", {s, b.Constant("k", RandomF32({64}, 12, 0.5f, 2.0f))}));
  auto model = b.Build(17);
  std::string plan = RunBoth(*model, {{"x", RandomF32({4, 64}, 13, -6, 6)}}, 0, 1e-6, 4e-6);
  EXPECT_NE(plan.find("eltwise"), std::string::npos) << plan;
}

// Between two convs the activation arrives channel-blocked with padding
// (24 channels in blocks of 16): Tanh (0 -> 0) runs in that layout, Sigmoid
// (0 -> 1/2, which would spoil the padding) on a plain copy; both agree with
// the reference after the second conv reads them.
TEST(VectorMathTest, BlockedInputsKeepTheirPaddingZero) {
  if (SkipWithoutVectorKernels()) GTEST_SKIP() << "this CPU has neither AVX-512F nor AVX2+FMA: the kernels are not used here";
  for (const char* op : {"Tanh", "Sigmoid", "Exp"}) {
    SCOPED_TRACE(op);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D({1, 8, 10, 10}));
    Value* c = b.Op("Conv", {x, b.Constant("w", RandomF32({24, 8, 3, 3}, 14, -0.3f, 0.3f))},
                    {Attribute::Ints("pads", {1, 1, 1, 1})});
    b.Output(c);  // a second reader: the activation cannot be the conv's post-op
    Value* a = b.Op(op, {c});
    b.Output(b.Op("Conv", {a, b.Constant("w2", RandomF32({16, 24, 3, 3}, 15, -0.3f, 0.3f))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})}));
    auto model = b.Build(17);
    std::string plan = RunBoth(*model, {{"x", RandomF32({1, 8, 10, 10}, 16, -1, 1)}}, 0, 1e-5, 1e-5);
    EXPECT_NE(plan.find(absl::StrCat(absl::AsciiStrToLower(op), "\t")), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace aic::cpu

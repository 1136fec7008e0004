// Our own CPU kernels (exec/cpu/kernels/, lowered by exec/cpu/ops_native*.cc)
// against the reference kernels: small models built here run through the
// fast executor and the reference executor on random inputs, over shapes,
// broadcasts and attributes; each case also checks the plan ran it natively
// (no reference fallback). The kernels with thresholds for threading are
// also called directly on inputs big enough to take the threaded path.
#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/broadcast.h"
#include "exec/cpu/kernels/channel_affine.h"
#include "exec/cpu/kernels/copy_bytes.h"
#include "exec/cpu/kernels/binary.h"
#include "exec/cpu/kernels/erf.h"
#include "exec/cpu/kernels/large_unary.h"
#include "exec/cpu/kernels/layer_norm.h"
#include "exec/cpu/kernels/streaming_stores.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/util/float_convert.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

// --- Erf ---------------------------------------------------------------------

TEST(NativeKernelsTest, ErfMatchesStdErfOnADenseGrid) {
  double worst_rel = 0, worst_abs = 0;
  for (int64_t i = -700000; i <= 700000; ++i) {
    float x = static_cast<float>(i) * 1e-5f;  // [-7, 7] every 1e-5
    double want = std::erf(static_cast<double>(x));
    double got = kernels::ErfApprox(x);
    if (std::fabs(x) < 1e-2f) {
      worst_abs = std::max(worst_abs, std::fabs(got - want));
    } else {
      worst_rel = std::max(worst_rel, std::fabs(got - want) / std::fabs(want));
    }
  }
  for (float x = 1e-30f; x < 1e-2f; x *= 1.7f) {  // tiny magnitudes: still relative
    for (float s : {x, -x}) {
      double want = std::erf(static_cast<double>(s));
      worst_rel = std::max(worst_rel, std::fabs(kernels::ErfApprox(s) - want) / std::fabs(want));
    }
  }
  EXPECT_LE(worst_rel, 1e-6);
  EXPECT_LE(worst_abs, 1e-7);
  EXPECT_EQ(kernels::ErfApprox(0.0f), 0.0f);
  EXPECT_EQ(kernels::ErfApprox(INFINITY), 1.0f);
  EXPECT_EQ(kernels::ErfApprox(-INFINITY), -1.0f);
  EXPECT_TRUE(std::isnan(kernels::ErfApprox(NAN)));
}

// --- unary -------------------------------------------------------------------

TEST(NativeKernelsTest, UnaryOpsMatchTheReference) {
  struct Case {
    const char* op;
    float lo, hi;
    int opset;
    std::vector<Attribute> attrs;
  };
  std::vector<Case> cases = {
      {"Erf", -5, 5, 13, {}},          {"Reciprocal", 0.5f, 4, 13, {}}, {"Floor", -9, 9, 13, {}},
      {"Ceil", -9, 9, 13, {}},         {"Round", -9, 9, 13, {}},        {"Sin", -9, 9, 13, {}},
      {"Cos", -9, 9, 13, {}},          {"Log", 0.01f, 50, 13, {}},      {"Softplus", -30, 30, 13, {}},
      {"Softsign", -9, 9, 13, {}},     {"Sign", -2, 2, 13, {}},         {"Gelu", -6, 6, 20, {}},
      {"Gelu", -6, 6, 20, {Attribute::String("approximate", "tanh")}},
      {"Mish", -30, 30, 18, {}},
      {"Swish", -90, 90, 24, {}},  // x·sigmoid(x): its tails (0 at -90, x at 90) too
  };
  for (const Case& c : cases) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 3, 5}, std::vector<int64_t>{1}, {40000}}) {
      SCOPED_TRACE(absl::StrCat(c.op, " ", DimsToString(dims)));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D(dims));
      b.Output(b.Op(c.op, {x}, c.attrs));
      auto model = b.Build(c.opset);
      RunBoth(*model, {{"x", RandomF32(dims, 7, c.lo, c.hi)}}, 0, 1e-6, 2e-6);
    }
  }
}

// --- streaming stores ------------------------------------------------------------

// The streaming kernel at every misalignment of its output and a ragged
// length (plain stores at both ends), in place too, NaN in either operand of
// Max/Min propagating, against a scalar loop; then in a plan, where a large
// same-shaped Add/Sub/Mul/Div/Max/Min runs it (and a small one does not).
TEST(NativeKernelsTest, StreamingBinaryOpsMatchScalarLoops) {
  if (!kernels::HaveStreamingStores()) GTEST_SKIP() << "neither AVX-512F nor AVX2 with FMA";
  const int64_t n = 3 * (int64_t{1} << 16) + 37;  // several pieces, a ragged last one
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> a(n + 16), b(n + 16), y(n + 16);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = i % 97 == 0 ? NAN : dist(rng);
    b[i] = i % 89 == 0 ? NAN : dist(rng) + (dist(rng) > 0 ? 3.5f : -3.5f);  // away from zero: a divisor
  }
  auto expect = [](kernels::StreamingOp op, float x, float z) {
    switch (op) {
      case kernels::StreamingOp::kAdd: return x + z;
      case kernels::StreamingOp::kSub: return x - z;
      case kernels::StreamingOp::kMul: return x * z;
      case kernels::StreamingOp::kDiv: return x / z;
      case kernels::StreamingOp::kMax: return std::isnan(x) || std::isnan(z) ? NAN : std::max(x, z);
      case kernels::StreamingOp::kMin: return std::isnan(x) || std::isnan(z) ? NAN : std::min(x, z);
    }
    return 0.0f;
  };
  for (const char* name : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    kernels::StreamingOp op;
    ASSERT_TRUE(kernels::StreamingOpOf(name, &op));
    for (int64_t offset : {0, 1, 5, 15}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(absl::StrCat(name, " offset ", offset, in_place ? " in place" : ""));
        std::vector<float> x = a;
        float* out = in_place ? x.data() + offset : y.data() + offset;
        kernels::StreamingBinaryF32(op, x.data() + offset, b.data() + offset, out, n);
        for (int64_t i = 0; i < n; ++i) {
          const float want = expect(op, a[i + offset], b[i + offset]);
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(out[i])) << i;
          } else {
            ASSERT_EQ(out[i], want) << i;
          }
        }
      }
    }
  }
  using Dims = std::vector<int64_t>;
  for (const Dims& dims : {Dims{8, 512, 520}, Dims{2, 64, 64}}) {
    for (const char* op : {"Add", "Div", "Max"}) {
      SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(dims)));
      GraphBuilder g;
      Value* x = g.Input("a", DType::kFloat, D(dims));
      Value* z = g.Input("b", DType::kFloat, D(dims));
      g.Output(g.Op(op, {x, z}));
      auto model = g.Build(13);
      std::string plan =
          RunBoth(*model, {{"a", RandomF32(dims, 3)}, {"b", RandomF32(dims, 4, 0.5f, 2.0f)}}, 0, 1e-6, 1e-6);
      EXPECT_EQ(plan.find("streaming_binary") != std::string::npos, dims[0] == 8) << plan;
    }
  }
}

// The large unary pass the same way, storing plainly and (past 16 MiB)
// streaming: every misalignment, in place, NaN, ±inf and -0 among the
// inputs; then in plans over [8, 512, 768] (12 MiB: taken) and a small
// tensor (not), against the reference.
TEST(NativeKernelsTest, LargeUnaryOpsMatchScalarLoops) {
  if (!kernels::HaveLargeUnary()) GTEST_SKIP() << "neither AVX-512F nor AVX2 with FMA";
  const int64_t streamed = kernels::kStreamingUnaryMinBytes / static_cast<int64_t>(sizeof(float)) + 37;
  const int64_t n = streamed;
  // Streaming only where input and output do not both stay in a 32 MiB cache:
  // [8, 512, 768] (12 MiB each way) stores plainly.
  EXPECT_FALSE(kernels::LargeUnaryStreams(8 * 512 * 768));
  EXPECT_FALSE(kernels::LargeUnaryStreams(kernels::kLargeUnaryMinBytes / 4));
  EXPECT_TRUE(kernels::LargeUnaryStreams(streamed));
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> a(n + 16), y(n + 16);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = i % 97 == 0 ? NAN : i % 101 == 0 ? -INFINITY : i % 103 == 0 ? INFINITY : i % 107 == 0 ? -0.0f : dist(rng);
  }
  using K = kernels::LargeUnaryKind;
  struct Case {
    const char* name;
    kernels::LargeUnary op;
    std::function<float(float)> f;
  };
  const Case cases[] = {
      {"Relu", {K::kRelu, 0, 0}, [](float v) { return std::isnan(v) ? v : std::max(v, 0.0f); }},
      {"LeakyRelu", {K::kLeakyRelu, 0.1f, 0}, [](float v) { return v < 0 ? v * 0.1f : v; }},
      {"Abs", {K::kAbs, 0, 0}, [](float v) { return std::fabs(v); }},
      {"Neg", {K::kNeg, 0, 0}, [](float v) { return -v; }},
      {"Clip", {K::kClip, -1.5f, 2.0f}, [](float v) { return std::isnan(v) ? v : std::min(std::max(v, -1.5f), 2.0f); }},
  };
  for (const Case& c : cases) {
    for (int64_t len : {3 * (int64_t{1} << 16) + 37, streamed}) {
      for (int64_t offset : {0, 1, 5, 15}) {
        for (bool in_place : {false, true}) {
          SCOPED_TRACE(absl::StrCat(c.name, " length ", len, " offset ", offset, in_place ? " in place" : ""));
          std::vector<float> x = a;
          float* out = in_place ? x.data() + offset : y.data() + offset;
          kernels::LargeUnaryF32(c.op, x.data() + offset, out, len);
          for (int64_t i = 0; i < len; ++i) {
            const float want = c.f(a[i + offset]);
            if (std::isnan(want)) {
              ASSERT_TRUE(std::isnan(out[i])) << i;
            } else {
              ASSERT_EQ(out[i], want) << i << " of " << a[i + offset];
              ASSERT_EQ(std::signbit(out[i]), std::signbit(want)) << i << " of " << a[i + offset];
            }
          }
        }
      }
    }
  }
  using Dims = std::vector<int64_t>;
  for (const Dims& dims : {Dims{8, 512, 768}, Dims{2, 64, 64}}) {
    for (const char* op : {"Relu", "Abs", "Neg", "Clip", "LeakyRelu"}) {
      SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(dims)));
      GraphBuilder g;
      Value* x = g.Input("x", DType::kFloat, D(dims));
      std::vector<Value*> ins = {x};
      if (std::string(op) == "Clip") {
        ins.push_back(g.Constant("lo", Tensor::Scalar<float>(-0.5f)));
        ins.push_back(g.Constant("hi", Tensor::Scalar<float>(1.25f)));
      }
      g.Output(g.Op(op, ins));
      auto model = g.Build(13);
      std::string plan = RunBoth(*model, {{"x", RandomF32(dims, 5)}}, 0, 0, 0);
      EXPECT_EQ(plan.find("large_unary") != std::string::npos, dims[0] == 8) << plan;
    }
  }
}

// --- the broadcast driver -------------------------------------------------------

// Whether b broadcasts to a's shape (PRelu's slope must).
bool Unidirectional(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (b.size() > a.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t d = b[b.size() - 1 - i];
    if (d != 1 && d != a[a.size() - 1 - i]) return false;
  }
  return true;
}

TEST(NativeKernelsTest, BinaryBroadcastsMatchTheReference) {
  using Dims = std::vector<int64_t>;
  std::vector<std::pair<Dims, Dims>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{4}, {3, 4}},       {{3, 1, 5}, {4, 5}}, {{1}, {2, 3}},
      {{}, {3}},              {{2, 1, 4}, {1, 3, 1}}, {{5, 1}, {1, 6}}, {{1, 1, 7}, {2, 3, 1}},
  };
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"}) {
    for (const auto& [da, db] : shapes) {
      if (std::string(op) == "PRelu" && !Unidirectional(da, db)) continue;  // the slope broadcasts to x
      SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(da), " ", DimsToString(db)));
      GraphBuilder b;
      Value* a = b.Input("a", DType::kFloat, D(da));
      Value* c = b.Input("b", DType::kFloat, D(db));
      b.Output(b.Op(op, {a, c}));
      auto model = b.Build(13);
      bool pow = std::string(op) == "Pow";
      RunBoth(*model, {{"a", RandomF32(da, 1, pow ? 0.1f : -3, 3)}, {"b", RandomF32(db, 2, pow ? -2 : 0.5f, 3)}});
    }
  }
}

TEST(NativeKernelsTest, IntegerComparisonAndLogicalOpsMatchTheReference) {
  using Dims = std::vector<int64_t>;
  for (const auto& [da, db] : std::vector<std::pair<Dims, Dims>>{{{3, 4}, {3, 4}}, {{4}, {3, 4}}, {{2, 1, 3}, {1}}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(da), " ", DimsToString(db)));
    for (const char* op : {"Add", "Sub", "Mul", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual"}) {
      for (DType t : {DType::kInt64, DType::kInt32, DType::kFloat}) {
        SCOPED_TRACE(absl::StrCat(op, " ", DTypeName(t)));
        GraphBuilder b;
        Value* a = b.Input("a", t, D(da));
        Value* c = b.Input("b", t, D(db));
        b.Output(b.Op(op, {a, c}));
        auto model = b.Build(16);
        auto make = [&](const Dims& d, uint32_t seed) {
          if (t == DType::kInt64) return RandomInts<int64_t>(d, seed, -3, 3);
          if (t == DType::kInt32) return RandomInts<int32_t>(d, seed, -3, 3);
          Tensor f = RandomInts<int32_t>(d, seed, -3, 3);  // small integers: equal values occur
          Tensor g(DType::kFloat, d);
          for (int64_t i = 0; i < f.num_elements(); ++i) g.mutable_data<float>()[i] = static_cast<float>(f.data<int32_t>()[i]);
          return g;
        };
        RunBoth(*model, {{"a", make(da, 3)}, {"b", make(db, 4)}});
      }
    }
    for (const char* op : {"And", "Or", "Xor"}) {
      SCOPED_TRACE(op);
      GraphBuilder b;
      b.Output(b.Op(op, {b.Input("a", DType::kBool, D(da)), b.Input("b", DType::kBool, D(db))}));
      auto model = b.Build(16);
      RunBoth(*model, {{"a", RandomBool(da, 5)}, {"b", RandomBool(db, 6)}});
    }
  }
}

TEST(NativeKernelsTest, WhereBroadcastsAllThreeOperands) {
  using Dims = std::vector<int64_t>;
  for (DType t : {DType::kFloat, DType::kInt64}) {
    for (const auto& [dc, dx, dy] : std::vector<std::tuple<Dims, Dims, Dims>>{
             {{2, 3}, {2, 3}, {2, 3}}, {{3}, {2, 3}, {1}}, {{2, 1, 4}, {3, 1}, {4}}}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(t), DimsToString(dc), DimsToString(dx), DimsToString(dy)));
      GraphBuilder b;
      b.Output(b.Op("Where", {b.Input("c", DType::kBool, D(dc)), b.Input("x", t, D(dx)), b.Input("y", t, D(dy))}));
      auto model = b.Build(16);
      auto make = [&](const Dims& d, uint32_t seed) {
        return t == DType::kFloat ? RandomF32(d, seed) : RandomInts<int64_t>(d, seed, -100, 100);
      };
      RunBoth(*model, {{"c", RandomBool(dc, 1)}, {"x", make(dx, 2)}, {"y", make(dy, 3)}});
    }
  }
}

TEST(NativeKernelsTest, ZeroSizedAndSizeOneOperandsStillWork) {
  using Dims = std::vector<int64_t>;
  for (const auto& [da, db] : std::vector<std::pair<Dims, Dims>>{{{0, 3}, {3}}, {{1, 1}, {1}}, {{3}, {0, 3}}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(da), " ", DimsToString(db)));
    GraphBuilder b;
    b.Output(b.Op("Pow", {b.Input("a", DType::kFloat, D(da)), b.Input("b", DType::kFloat, D(db))}));
    auto model = b.Build(13);
    RunBoth(*model, {{"a", RandomF32(da, 1, 0.5f, 2)}, {"b", RandomF32(db, 2)}}, /*max_fallbacks=*/1);
  }
}

// Big enough to take the threaded paths, with two threads.
TEST(NativeKernelsTest, ThreadedKernelsMatchSerialOnes) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  std::vector<int64_t> out = {3, 700, 400};
  Tensor a = RandomF32({3, 1, 400}, 1), b = RandomF32({700, 1}, 2);
  auto loop = kernels::MakeBroadcastLoop(out, {{3, 1, 400}, {700, 1}}, {4, 4}, 4);
  ASSERT_TRUE(loop.has_value());
  DType bool_out;
  kernels::RowFn sub = kernels::BinaryKernel("Sub", DType::kFloat, &bool_out);
  ASSERT_NE(sub, nullptr);
  Tensor y(DType::kFloat, out);
  const void* ins[] = {a.raw_data(), b.raw_data()};
  kernels::RunBroadcast(*loop, ins, y.mutable_raw_data(), sub);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 700; ++j) {
      for (int64_t k = 0; k < 400; ++k) {
        ASSERT_EQ(y.data<float>()[(i * 700 + j) * 400 + k], a.data<float>()[i * 400 + k] - b.data<float>()[j])
            << i << "," << j << "," << k;
      }
    }
  }
  // LayerNorm over rows far from zero (a shifted mean must not cancel).
  int64_t rows = 600, cols = 1000;
  Tensor x = RandomF32({rows, cols}, 3, 999.0f, 1001.0f), s = RandomF32({cols}, 4), bias = RandomF32({cols}, 5);
  Tensor ln(DType::kFloat, {rows, cols});
  kernels::LayerNormF32(x.data<float>(), s.data<float>(), bias.data<float>(), ln.mutable_data<float>(), rows, cols,
                        1e-5f);
  for (int64_t r = 0; r < rows; r += 37) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x.data<float>()[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += std::pow(x.data<float>()[r * cols + c] - mean, 2);
    var /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      double want = (x.data<float>()[r * cols + c] - mean) / std::sqrt(var + 1e-5) * s.data<float>()[c] +
                    bias.data<float>()[c];
      ASSERT_NEAR(ln.data<float>()[r * cols + c], want, 2e-4) << r << "," << c;
    }
  }
  // Unary in place.
  Tensor e = RandomF32({300000}, 6), e_copy = e.Clone();
  kernels::UnaryF32(kernels::UnaryKernel("Erf"), e.data<float>(), e.mutable_data<float>(), e.num_elements());
  for (int64_t i = 0; i < e.num_elements(); i += 101) {
    ASSERT_NEAR(e.data<float>()[i], std::erf(e_copy.data<float>()[i]), 1e-6);
  }
  omp_set_num_threads(saved);
}

// --- GELU ----------------------------------------------------------------------
// The exporters' spelled-out GELU becomes one node in the rewriter (rule
// fuse_gelu), which the session runs before compiling: tests/session/.

// --- attention's transposes --------------------------------------------------------

// Multi-head attention as exporters write it: the head split/merge
// transposes around the batched MatMuls are strided views and a transposed
// destination, not copies.
std::unique_ptr<Model> Attention(bool expose_heads) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 16, 32});
  auto i64 = [](std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}); };
  Value* split = b.Constant("split", i64({1, 16, 4, 8}));
  auto heads = [&](const char* w, uint32_t seed, std::vector<int64_t> perm) {
    Value* p = b.Op("MatMul", {x, b.Constant(w, RandomF32({32, 32}, seed, -0.3f, 0.3f))});
    return b.Op("Transpose", {b.Op("Reshape", {p, split})}, {Attribute::Ints("perm", perm)});
  };
  Value* q = heads("wq", 1, {0, 2, 1, 3});
  Value* k = heads("wk", 2, {0, 2, 3, 1});
  Value* v = heads("wv", 3, {0, 2, 1, 3});
  Value* probs = b.Op("Softmax", {b.Op("MatMul", {q, k})}, {Attribute::Int("axis", -1)});
  Value* ctx = b.Op("MatMul", {probs, v});
  Value* merged = b.Op("Transpose", {ctx}, {Attribute::Ints("perm", {0, 2, 1, 3})});
  b.Output(b.Op("Reshape", {merged, b.Constant("merge", i64({1, 16, 32}))}));
  if (expose_heads) b.Output(q);
  return b.Build(13);
}

TEST(NativeKernelsTest, AttentionTransposesAreViews) {
  for (bool expose : {false, true}) {
    SCOPED_TRACE(absl::StrCat("expose_heads=", expose));
    auto model = Attention(expose);
    std::string plan = RunBoth(*model, {{"x", RandomF32({1, 16, 32}, 9)}});
    size_t transposes = 0;
    for (size_t at = plan.find("\ntranspose"); at != std::string::npos; at = plan.find("\ntranspose", at + 1)) {
      ++transposes;
    }
    // A head read by a graph output is a real copy; the rest are views.
    EXPECT_EQ(transposes, expose ? 1u : 0u) << plan;
    EXPECT_NE(plan.find("+ [Transpose"), std::string::npos) << plan;  // the head merge
  }
}

// A transposed view the MatMul cannot read as is (it broadcasts against a
// higher-rank operand) is copied to plain first; two MatMuls share one view.
TEST(NativeKernelsTest, TransposedViewsFallBackToCopies) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {8, 4});
  Value* t = b.Op("Transpose", {b.Op("Relu", {x})}, {Attribute::Ints("perm", {1, 0})});  // [4, 8]
  b.Output(b.Op("MatMul", {t, b.Input("y", DType::kFloat, {2, 8, 5})}));
  b.Output(b.Op("MatMul", {t, b.Input("z", DType::kFloat, {8, 3})}));
  auto model = b.Build(13);
  RunBoth(*model, {{"x", RandomF32({8, 4}, 1)}, {"y", RandomF32({2, 8, 5}, 2)}, {"z", RandomF32({8, 3}, 3)}});
}

// --- LayerNormalization -------------------------------------------------------------

TEST(NativeKernelsTest, LayerNormMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
    bool bias;
    float eps, offset;
  };
  for (const Case& c : {Case{{2, 3, 8}, -1, true, 1e-5f, 0}, Case{{2, 3, 8}, 1, true, 1e-3f, 0},
                        Case{{2, 3, 8}, -2, false, 1e-5f, 0}, Case{{4, 1}, -1, true, 1e-5f, 0},
                        Case{{5, 64}, -1, true, 1e-5f, 500}, Case{{3, 2, 1, 5}, 0, true, 1e-5f, 0}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.dims), " axis=", c.axis, " bias=", c.bias));
    int64_t rank = static_cast<int64_t>(c.dims.size());
    int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
    std::vector<int64_t> norm(c.dims.begin() + axis, c.dims.end());
    GraphBuilder b;
    std::vector<Value*> ins = {b.Input("x", DType::kFloat, D(c.dims)), b.Constant("s", RandomF32(norm, 2))};
    if (c.bias) ins.push_back(b.Constant("b", RandomF32(norm, 3)));
    b.Output(b.Op("LayerNormalization", ins, {Attribute::Int("axis", c.axis), Attribute::Float("epsilon", c.eps)}));
    auto model = b.Build(17);
    std::string plan = RunBoth(*model, {{"x", RandomF32(c.dims, 1, c.offset - 2, c.offset + 2)}}, 0, 1e-6, 1e-5);
    EXPECT_NE(plan.find("layernorm"), std::string::npos) << plan;
  }
}

TEST(NativeKernelsTest, LayerNormComputesMeanAndInvStdDevToo) {
  for (int64_t axis : {-1, 1, 0}) {
    for (int outputs : {2, 3}) {
      SCOPED_TRACE(absl::StrCat("axis=", axis, " outputs=", outputs));
      GraphBuilder b;
      auto outs = b.OpN("LayerNormalization",
                        {b.Input("x", DType::kFloat, {2, 3, 4}),
                         b.Constant("s", RandomF32(axis == -1 ? std::vector<int64_t>{4}
                                                   : axis == 1 ? std::vector<int64_t>{3, 4}
                                                               : std::vector<int64_t>{2, 3, 4},
                                                   2))},
                        outputs, {Attribute::Int("axis", axis)});
      for (Value* o : outs) b.Output(o);
      auto model = b.Build(17);
      RunBoth(*model, {{"x", RandomF32({2, 3, 4}, 1)}}, 0, 1e-6, 1e-5);
    }
  }
}

// --- Gather, Pad, Resize, Cast ---------------------------------------------------------

TEST(NativeKernelsTest, GatherMatchesTheReference) {
  struct Case {
    std::vector<int64_t> data, idx;
    int64_t axis;
  };
  // The last two read rows of 1-2 KB from over 4 MiB of data, which the
  // kernel asks the memory for a few items ahead (across outer rows in the
  // first, with fewer items than that lookahead in the second).
  for (const Case& c :
       {Case{{5, 3}, {4}, 0}, Case{{5, 3}, {2, 2}, 1}, Case{{2, 5, 3}, {}, -2}, Case{{2, 5, 3}, {3, 1}, -1},
        Case{{7}, {6}, 0}, Case{{2, 1100, 512}, {3, 5}, 1}, Case{{4200, 256}, {1}, 0}}) {
    for (DType it : {DType::kInt64, DType::kInt32}) {
      for (DType dt : {DType::kFloat, DType::kInt64}) {
        SCOPED_TRACE(absl::StrCat(DimsToString(c.data), DimsToString(c.idx), " axis=", c.axis, " ", DTypeName(it),
                                  " ", DTypeName(dt)));
        int64_t rank = static_cast<int64_t>(c.data.size());
        int64_t n = c.data[c.axis < 0 ? c.axis + rank : c.axis];
        GraphBuilder b;
        b.Output(b.Op("Gather", {b.Input("d", dt, D(c.data)), b.Input("i", it, D(c.idx))},
                      {Attribute::Int("axis", c.axis)}));
        auto model = b.Build(13);
        Tensor idx = it == DType::kInt64 ? RandomInts<int64_t>(c.idx, 4, static_cast<int>(-n), static_cast<int>(n - 1))
                                         : RandomInts<int32_t>(c.idx, 4, static_cast<int>(-n), static_cast<int>(n - 1));
        Tensor data = dt == DType::kFloat ? RandomF32(c.data, 5) : RandomInts<int64_t>(c.data, 5, -1000, 1000);
        std::string plan = RunBoth(*model, {{"d", data}, {"i", idx}});
        EXPECT_NE(plan.find("gather"), std::string::npos) << plan;
      }
    }
  }
}

// An embedding table: constant data, indices fed at run time.
TEST(NativeKernelsTest, GatherFromAConstantTable) {
  GraphBuilder b;
  b.Output(b.Op("Gather", {b.Constant("table", RandomF32({50, 16}, 1)), b.Input("ids", DType::kInt64, {2, 7})}));
  auto model = b.Build(13);
  std::string plan = RunBoth(*model, {{"ids", RandomInts<int64_t>({2, 7}, 2, -50, 49)}});
  EXPECT_NE(plan.find("gather"), std::string::npos) << plan;
}

TEST(NativeKernelsTest, GatherOutOfRangeIsAnError) {
  GraphBuilder b;
  b.Output(b.Op("Gather", {b.Input("d", DType::kFloat, {4, 2}), b.Input("i", DType::kInt64, {2})}));
  auto model = b.Build(13);
  CpuExecutor cpu(*model);
  auto got = cpu.Run({{"d", RandomF32({4, 2}, 1)}, {"i", Tensor::FromVector<int64_t>({1, 4}, {2})}});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("out of range"), std::string::npos) << got.status();
}

TEST(NativeKernelsTest, PadMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims, pads;
    const char* mode;
  };
  for (const Case& c : {Case{{2, 3, 4}, {0, 1, 2, 1, 0, 3}, "constant"}, Case{{2, 3, 4}, {0, 2, 3, 0, 1, 2}, "reflect"},
                        Case{{2, 3, 4}, {1, 0, 2, 1, 2, 5}, "edge"}, Case{{3, 5}, {-1, 1, 0, -2}, "constant"},
                        Case{{1, 2, 4, 4}, {0, 0, 1, 1, 0, 0, 1, 1}, "reflect"},
                        // wide rows: the interior copied as one run, the edges element by element
                        Case{{2, 3, 40}, {0, 1, 3, 1, 0, 5}, "edge"}, Case{{2, 3, 40}, {0, 0, 7, 0, 2, 9}, "reflect"},
                        Case{{2, 40}, {0, -3, 0, 4}, "edge"}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.dims), " ", c.mode));
    int64_t rank = static_cast<int64_t>(c.dims.size());
    for (int form = 0; form < 2; ++form) {  // opset 11 inputs, opset 2 attributes
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D(c.dims));
      if (form == 0) {
        b.Output(b.Op("Pad", {x, b.Constant("p", Tensor::FromVector<int64_t>(c.pads, {2 * rank})),
                              b.Constant("v", Tensor::Scalar<float>(1.5f))},
                      {Attribute::String("mode", c.mode)}));
      } else {
        b.Output(b.Op("Pad", {x},
                      {Attribute::String("mode", c.mode), Attribute::Ints("pads", c.pads),
                       Attribute::Float("value", -2.0f)}));
      }
      auto model = b.Build(form == 0 ? 13 : 2);
      std::string plan = RunBoth(*model, {{"x", RandomF32(c.dims, 1)}});
      EXPECT_NE(plan.find("pad"), std::string::npos) << plan;
    }
  }
  // opset 18: pads for some axes only.
  GraphBuilder b;
  b.Output(b.Op("Pad", {b.Input("x", DType::kFloat, {2, 3, 4}), b.Constant("p", Tensor::FromVector<int64_t>({1, 2, 0, 3}, {4})),
                        b.Constant("v", Tensor::Scalar<float>(0.5f)), b.Constant("a", Tensor::FromVector<int64_t>({0, -1}, {2}))}));
  auto model = b.Build(18);
  RunBoth(*model, {{"x", RandomF32({2, 3, 4}, 2)}});
}

// Resize of a [1, 2, 6, 5] x by `scale` on H and W (Resize-13's scales
// input), or, with scale 0, to sizes [1, 2, 4, 9].
Value* ResizeBy(GraphBuilder& b, Value* x, float scale, std::vector<Attribute> attrs) {
  Value* roi = b.Constant("roi", Tensor(DType::kFloat, {0}));
  if (scale != 0) {
    return b.Op("Resize", {x, roi, b.Constant("s", Tensor::FromVector<float>({1, 1, scale, scale}, {4}))}, attrs);
  }
  return b.Op("Resize", {x, roi, b.Constant("s", Tensor(DType::kFloat, {0})),
                         b.Constant("z", Tensor::FromVector<int64_t>({1, 2, 4, 9}, {4}))},
              attrs);
}

// Nearest mode on a plain input: every coordinate mode and rounding rule of
// the standard, up and down, integer and not, given by scales or sizes, for
// 4- and 2-byte and 1-byte elements: exactly the reference's elements, on
// the native kernel (not oneDNN's resampling, not the reference).
TEST(NativeKernelsTest, ResizeNearestMatchesTheReference) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                            "half_pixel_symmetric"}) {
    for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      for (int form = 0; form < 4; ++form) {  // scales x2, x0.5, x1.7; sizes
        for (DType t : {DType::kFloat, DType::kFloat16, DType::kUint8}) {
          SCOPED_TRACE(absl::StrCat(coord, " ", rounding, " form ", form, " ", DTypeName(t)));
          GraphBuilder b;
          Value* x = b.Input("x", t, {1, 2, 6, 5});
          const float scale = form == 0 ? 2.0f : form == 1 ? 0.5f : form == 2 ? 1.7f : 0.0f;
          b.Output(ResizeBy(b, x, scale,
                            {Attribute::String("mode", "nearest"),
                             Attribute::String("coordinate_transformation_mode", coord),
                             Attribute::String("nearest_mode", rounding)}));
          auto model = b.Build(19);
          Tensor in = t == DType::kUint8 ? RandomInts<uint8_t>({1, 2, 6, 5}, 4, 0, 255)
                                         : NarrowFromFloat(RandomF32({1, 2, 6, 5}, 4), t);
          // tf_half_pixel_for_nn rounding up moves the channels too (the
          // transformation applies to every axis): the reference kernel runs.
          bool moves_channels = std::string(coord) == "tf_half_pixel_for_nn" && std::string(rounding).find("ceil") != std::string::npos;
          std::string plan = RunBoth(*model, {{"x", in}}, moves_channels ? 1 : 0, 0, 0);
          if (moves_channels) continue;
          EXPECT_NE(plan.find("resize\tResize"), std::string::npos) << plan;
          EXPECT_EQ(plan.find("impl="), std::string::npos) << plan;  // not a oneDNN primitive
        }
      }
    }
  }
}

// Integer 2x and 4x nearest upsampling of rows wider than a vector (37 =
// 2·16 + 5: full vectors and a masked tail), written to every repeated
// output row at once, float and float16.
TEST(NativeKernelsTest, ResizeNearestIntegerFactorsOfWideRows) {
  for (float scale : {2.0f, 4.0f}) {
    for (DType t : {DType::kFloat, DType::kFloat16}) {
      SCOPED_TRACE(absl::StrCat("x", scale, " ", DTypeName(t)));
      GraphBuilder b;
      Value* x = b.Input("x", t, {1, 3, 5, 37});
      b.Output(ResizeBy(b, x, scale, {Attribute::String("mode", "nearest")}));
      auto model = b.Build(19);
      std::string plan = RunBoth(*model, {{"x", NarrowFromFloat(RandomF32({1, 3, 5, 37}, 8), t)}}, 0, 0, 0);
      EXPECT_NE(plan.find("resize\tResize"), std::string::npos) << plan;
    }
  }
}

// Nearest resizing of rows of at most 16 four-byte inputs (one load per
// input row, the rows it fills written as one stretch): rows of 16 and of
// 1, stretches of several vectors and a masked tail, uneven row runs,
// downsampling, int32 elements, and a stretch past the table's 64 vectors
// (the row-by-row path): exactly the reference's elements.
TEST(NativeKernelsTest, ResizeNearestOfShortRows) {
  struct Case {
    std::vector<int64_t> in, out;
    DType t;
  };
  const std::vector<Case> cases = {
      {{1, 3, 16, 16}, {1, 3, 32, 32}, DType::kFloat}, {{2, 2, 7, 7}, {2, 2, 20, 20}, DType::kFloat},
      {{1, 2, 5, 1}, {1, 2, 9, 7}, DType::kFloat},     {{1, 4, 14, 14}, {1, 4, 28, 28}, DType::kInt32},
      {{1, 2, 9, 13}, {1, 2, 4, 6}, DType::kFloat},    {{1, 2, 3, 16}, {1, 2, 30, 40}, DType::kFloat},
      {{1, 1, 2, 12}, {1, 1, 24, 60}, DType::kFloat},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.in), " -> ", DimsToString(c.out), " ", DTypeName(c.t)));
    GraphBuilder b;
    Value* x = b.Input("x", c.t, D(c.in));
    Value* roi = b.Constant("roi", Tensor(DType::kFloat, {0}));
    b.Output(b.Op(
        "Resize",
        {x, roi, b.Constant("s", Tensor(DType::kFloat, {0})), b.Constant("z", Tensor::FromVector<int64_t>(c.out, {4}))},
        {Attribute::String("mode", "nearest")}));
    auto model = b.Build(19);
    Tensor in = c.t == DType::kInt32 ? RandomInts<int32_t>(c.in, 6, -1000000, 1000000) : RandomF32(c.in, 6);
    std::string plan = RunBoth(*model, {{"x", in}}, 0, 0, 0);
    EXPECT_NE(plan.find("resize\tResize"), std::string::npos) << plan;
  }
}

// Nearest resizing by a factor oneDNN's resampling does not take (4x4 to
// 7x7, as GhostNetV2's gates do) of a conv's channel-blocked output: the
// input is reordered to plain and the native kernel runs (the reference
// kernel did: 1 ms a step).
TEST(NativeKernelsTest, ResizeNearestOfABlockedInputByAnOddFactor) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 16, 4, 4});
  Value* c = b.Op("Conv", {x, b.Constant("w", RandomF32({16, 16, 1, 1}, 3))});
  Value* roi = b.Constant("roi", Tensor(DType::kFloat, {0}));
  b.Output(b.Op("Resize", {c, roi, b.Constant("s", Tensor(DType::kFloat, {0})),
                           b.Constant("z", Tensor::FromVector<int64_t>({1, 16, 7, 7}, {4}))},
                {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", "asymmetric"),
                 Attribute::String("nearest_mode", "floor")}));
  auto model = b.Build(17);
  std::string plan = RunBoth(*model, {{"x", RandomF32({1, 16, 4, 4}, 5)}});
  EXPECT_NE(plan.find("resize\tResize"), std::string::npos) << plan;
}

// GridSample, bilinear and nearest, every padding mode, both align_corners,
// at opset 16 and under opset 20's mode names, with grid points outside
// [-1, 1] and one on a pixel centre and the top edge: the native kernel, the
// reference's values. Bicubic stays with the reference kernel.
TEST(NativeKernelsTest, GridSampleMatchesTheReference) {
  // One sample (split by location, then channel; of 20 channels: sampled
  // channels-last) and two (split by sample).
  for (int64_t batch : {1, 2}) {
    for (int64_t channels : {3, 20}) {
      Tensor grid = RandomF32({batch, 4, 5, 2}, 9, -1.3f, 1.3f);
      grid.mutable_data<float>()[0] = 0.0f;  // x = 3 of 7, either align_corners
      grid.mutable_data<float>()[1] = -1.0f;
      for (int64_t opset : {16, 20}) {
        for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
          for (const char* padding : {"zeros", "border", "reflection"}) {
            for (int64_t align : {0, 1}) {
              std::string name = mode;
              if (opset >= 20 && name != "nearest") name = name == "bilinear" ? "linear" : "cubic";
              SCOPED_TRACE(absl::StrCat(channels, " channels, opset ", opset, " ", name, " ", padding,
                                        " align_corners ", align));
              GraphBuilder b;
              Value* x = b.Input("x", DType::kFloat, {batch, channels, 6, 7});
              Value* g = b.Input("g", DType::kFloat, {batch, 4, 5, 2});
              b.Output(b.Op("GridSample", {x, g},
                            {Attribute::String("mode", name), Attribute::String("padding_mode", padding),
                             Attribute::Int("align_corners", align)}));
              auto model = b.Build(opset);
              const bool cubic = std::string(mode) == "bicubic";
              // An infinity where outside taps point (offset 0): read by no tap
              // of weight 0.
              Tensor in = RandomF32({batch, channels, 6, 7}, 8);
              in.mutable_data<float>()[0] = std::numeric_limits<float>::infinity();
              std::string plan = RunBoth(*model, {{"x", in}, {"g", grid}}, cubic ? 1 : 0);
              if (!cubic) {
                EXPECT_NE(plan.find("grid_sample\tGridSample"), std::string::npos) << plan;
              }
            }
          }
        }
      }
    }
  }
}

// Cubic (every coordinate mode, both cubic_coeff_a, exclude_outside on and
// off, up, down and by sizes) and antialiased linear and cubic downsampling
// run on the separable taps kernel and agree with the reference's double
// sums to float rounding.
TEST(NativeKernelsTest, ResizeCubicAndAntialiasMatchTheReference) {
  struct Mode {
    const char* mode;
    int antialias;
  };
  for (Mode m : {Mode{"cubic", 0}, Mode{"cubic", 1}, Mode{"linear", 1}}) {
    for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"}) {
      for (int exclude : {0, 1}) {
        for (float a : {-0.75f, -0.5f}) {
          for (int form = 0; form < 4; ++form) {  // scales x2, x0.5, x0.3; sizes
            if (m.antialias && form == 0) continue;  // antialias only changes downsampling
            SCOPED_TRACE(absl::StrCat(m.mode, m.antialias ? " antialias " : " ", coord, " exclude ", exclude, " a ", a,
                                      " form ", form));
            GraphBuilder b;
            Value* x = b.Input("x", DType::kFloat, {1, 2, 11, 23});
            const float scale = form == 0 ? 2.0f : form == 1 ? 0.5f : form == 2 ? 0.3f : 0.0f;
            b.Output(ResizeBy(b, x, scale,
                              {Attribute::String("mode", m.mode), Attribute::String("coordinate_transformation_mode", coord),
                               Attribute::Int("exclude_outside", exclude), Attribute::Float("cubic_coeff_a", a),
                               Attribute::Int("antialias", m.antialias)}));
            auto model = b.Build(19);
            std::string plan = RunBoth(*model, {{"x", RandomF32({1, 2, 11, 23}, 5)}}, 0, 2e-5, 2e-5);
            EXPECT_NE(plan.find("resize\tResize"), std::string::npos) << plan;
          }
        }
      }
    }
  }
}

TEST(NativeKernelsTest, ResizeLinearMatchesTheReference) {
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (int form = 0; form < 3; ++form) {  // scales x2, scales x0.5, sizes
      SCOPED_TRACE(absl::StrCat(coord, " form ", form));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {1, 2, 6, 5});
      const float scale = form == 0 ? 2.0f : form == 1 ? 0.5f : 0.0f;
      b.Output(ResizeBy(b, x, scale,
                        {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", coord)}));
      auto model = b.Build(13);
      std::string plan = RunBoth(*model, {{"x", RandomF32({1, 2, 6, 5}, 3)}});
      EXPECT_NE(plan.find("resize"), std::string::npos) << plan;
    }
  }
  // Upsample: asymmetric coordinates; scales an input (opset 9) or an attribute (opset 7).
  for (int opset : {9, 7}) {
    SCOPED_TRACE(absl::StrCat("Upsample-", opset));
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 1, 3, 4});
    std::vector<Attribute> attrs = {Attribute::String("mode", "linear")};
    std::vector<Value*> ins = {x};
    if (opset == 9) {
      ins.push_back(b.Constant("s", Tensor::FromVector<float>({1, 1, 2, 3}, {4})));
    } else {
      attrs.push_back(Attribute::Floats("scales", {1, 1, 2, 3}));
    }
    b.Output(b.Op("Upsample", ins, attrs));
    auto model = b.Build(opset);
    std::string plan = RunBoth(*model, {{"x", RandomF32({1, 1, 3, 4}, 4)}});
    EXPECT_NE(plan.find("resize"), std::string::npos) << plan;
  }
}

TEST(NativeKernelsTest, CastMatchesTheReference) {
  std::vector<std::pair<DType, DType>> pairs = {
      {DType::kFloat, DType::kInt32}, {DType::kFloat, DType::kInt64}, {DType::kFloat, DType::kBool},
      {DType::kFloat, DType::kFloat16}, {DType::kFloat16, DType::kFloat}, {DType::kInt64, DType::kFloat},
      {DType::kInt64, DType::kInt32}, {DType::kBool, DType::kFloat}, {DType::kInt32, DType::kUint8}};
  for (const auto& [from, to] : pairs) {
    SCOPED_TRACE(absl::StrCat(DTypeName(from), " -> ", DTypeName(to)));
    GraphBuilder b;
    b.Output(b.Op("Cast", {b.Input("x", from, {3, 7})}, {Attribute::Int("to", static_cast<int64_t>(to))}));
    auto model = b.Build(13);
    Tensor x;
    if (from == DType::kFloat) {
      x = RandomF32({3, 7}, 1, -300, 300);
      x.mutable_data<float>()[0] = 0.0f;
      x.mutable_data<float>()[1] = -0.7f;
    } else if (from == DType::kFloat16) {
      x = Tensor(DType::kFloat16, {3, 7});
      for (int64_t i = 0; i < 21; ++i) x.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(0x3c00 + 37 * i);
    } else if (from == DType::kBool) {
      x = RandomBool({3, 7}, 2);
    } else if (from == DType::kInt64) {
      x = RandomInts<int64_t>({3, 7}, 3, -100000, 100000);
    } else {
      x = RandomInts<int32_t>({3, 7}, 3, -1000, 1000);
    }
    std::string plan = RunBoth(*model, {{"x", x}}, 0, 0, 0);
    EXPECT_NE(plan.find("cast"), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// ChannelAffineF32 in every layout it reads (plain, blocks of 8 and 16, all
// channels side by side), with and without shift and ReLU, one scale vector
// or one per image, in place and not: against a scalar loop, NaN kept.
TEST(NativeKernels, ChannelAffineInEveryLayout) {
  for (int64_t block : {1, 8, 16, 48}) {
    for (bool shift_on : {false, true}) {
      for (bool relu : {false, true}) {
        for (bool per_image : {false, true}) {
          for (bool in_place : {false, true}) {
            SCOPED_TRACE(absl::StrCat("block ", block, shift_on ? " shift" : "", relu ? " relu" : "",
                                      per_image ? " per image" : "", in_place ? " in place" : ""));
            kernels::ChannelLayout l;
            l.outer = 2;
            l.blocks = block == 48 ? 1 : 48 / block;
            l.spatial = 37;
            l.block = block;
            const int64_t channels = l.blocks * l.block, count = l.outer * channels * l.spatial;
            Tensor x = RandomF32({count}, 7, -2, 2);
            x.mutable_data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
            Tensor scale = RandomF32({(per_image ? l.outer : 1) * channels}, 8, -1.5f, 1.5f);
            Tensor shift = RandomF32({channels}, 9, -1, 1);
            std::vector<float> y(static_cast<size_t>(count), 0.0f);
            std::vector<float> src(x.data<float>(), x.data<float>() + count);
            float* out = in_place ? src.data() : y.data();
            kernels::ChannelAffineF32(src.data(), out, l, scale.data<float>(),
                                      shift_on ? shift.data<float>() : nullptr, relu, per_image);
            for (int64_t o = 0; o < l.outer; ++o) {
              for (int64_t b = 0; b < l.blocks; ++b) {
                for (int64_t p = 0; p < l.spatial; ++p) {
                  for (int64_t j = 0; j < l.block; ++j) {
                    const int64_t c = b * l.block + j;
                    const int64_t i = ((o * l.blocks + b) * l.spatial + p) * l.block + j;
                    float want = x.data<float>()[i] * scale.data<float>()[(per_image ? o * channels : 0) + c] +
                                 (shift_on ? shift.data<float>()[c] : 0.0f);
                    if (relu && want < 0) want = 0;
                    if (std::isnan(want)) {
                      ASSERT_TRUE(std::isnan(out[i])) << i;
                    } else {
                      ASSERT_NEAR(out[i], want, 1e-6f * (1 + std::fabs(want))) << i;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// CopyBytes copies exactly n bytes at every size around its thresholds and
// every alignment of source and destination, touching nothing past them.
TEST(NativeKernels, CopyBytesAtEverySizeAndAlignment) {
  std::vector<unsigned char> src(20000), dst(20100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  for (size_t n : {0, 1, 63, 64, 65, 255, 256, 257, 1000, 3072, 4095, 8191, 8192, 8193, 19000}) {
    for (size_t s_off : {0, 1, 13, 64}) {
      for (size_t d_off : {0, 3, 32}) {
        std::fill(dst.begin(), dst.end(), 0xAB);
        kernels::CopyBytes(dst.data() + d_off, src.data() + s_off, n);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= d_off && i < d_off + n;
          ASSERT_EQ(dst[i], inside ? src[i - d_off + s_off] : 0xAB) << "n " << n << " at " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace aic::cpu

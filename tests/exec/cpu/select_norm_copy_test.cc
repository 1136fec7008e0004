// The native kernels for TopK, ArgMax/ArgMin, Instance/GroupNormalization,
// Expand, Concat and Split against the reference kernels, over axes, ties,
// dtypes and opset forms; every case also checks the plan ran natively (no
// reference fallback, no slow oneDNN path).
#include <limits>

#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

// Small integers as floats: equal values occur, so tie-breaking is exercised.
Tensor TiedF32(const std::vector<int64_t>& dims, uint32_t seed, int spread) {
  Tensor ints = RandomInts<int32_t>(dims, seed, -spread, spread);
  Tensor f(DType::kFloat, dims);
  for (int64_t i = 0; i < f.num_elements(); ++i) f.mutable_data<float>()[i] = static_cast<float>(ints.data<int32_t>()[i]);
  return f;
}

Tensor Ints64(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}); }

TEST(SelectKernelsTest, TopKMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis, k;
  };
  std::vector<Case> cases = {{{128, 1000}, -1, 5},  {{3, 7, 5}, 1, 3},  {{4, 300}, 1, 40}, {{4, 300}, 1, 300},
                             {{2, 9, 4}, 0, 2},      {{6, 33}, -1, 1},   {{2, 50, 3}, 1, 50},
                             // long rows: the 32-wide skip past elements that cannot enter, and its tail
                             {{1, 32000}, -1, 5},    {{2, 1037}, -1, 32}};
  for (const Case& c : cases) {
    for (int largest : {1, 0}) {
      for (int spread : {3, 1000000}) {
        SCOPED_TRACE(absl::StrCat(DimsToString(c.dims), " axis ", c.axis, " k ", c.k, " largest ", largest,
                                  " spread ", spread));
        GraphBuilder b;
        Value* x = b.Input("x", DType::kFloat, D(c.dims));
        Value* k = b.Constant("k", Ints64({c.k}));
        std::vector<Value*> outs = b.OpN("TopK", {x, k}, 2, {Attribute::Int("axis", c.axis), Attribute::Int("largest", largest)});
        b.Output(outs[0]);
        b.Output(outs[1]);
        auto model = b.Build(13);
        std::string plan = RunBoth(*model, {{"x", TiedF32(c.dims, 5, spread)}}, 0, 0, 0);
        EXPECT_NE(plan.find("topk"), std::string::npos) << plan;
      }
    }
  }
}

TEST(SelectKernelsTest, ArgMaxAndArgMinMatchTheReference) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    // {2, 6, 4500} along axis 1: lanes in two chunks of the column scan.
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1, 128, 768}, {3, 4, 5}, {7}, {2, 6, 4500}}) {
      for (int64_t axis = -1; axis < static_cast<int64_t>(dims.size()); ++axis) {
        for (int keep : {1, 0}) {
          for (int last : {0, 1}) {
            SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(dims), " axis ", axis, " keepdims ", keep, " last ", last));
            GraphBuilder b;
            Value* x = b.Input("x", DType::kFloat, D(dims));
            b.Output(b.Op(op, {x},
                          {Attribute::Int("axis", axis), Attribute::Int("keepdims", keep),
                           Attribute::Int("select_last_index", last)}));
            auto model = b.Build(13);
            RunBoth(*model, {{"x", TiedF32(dims, 9, 4)}}, 0, 0, 0);
          }
        }
      }
    }
  }
}

// Rows whose extremes the vector lanes of the last-axis kernels must settle
// as the reference's one-at-a-time scan does: NaN first, NaN in the lanes
// and in the tail, signed zeros and infinities tied, the extreme in the tail
// or at the very start, at row lengths around the 32 lanes.
TEST(SelectKernelsTest, LastAxisExtremesKeepTheReferenceRulesForNaNAndTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int64_t len : {33, 64, 65, 100, 257}) {
    const int64_t rows = 10;
    Tensor x = TiedF32({rows, len}, 21, 3);
    float* v = x.mutable_data<float>();
    auto row = [&](int64_t r) { return v + r * len; };
    row(0)[0] = nan;                       // NaN first: the scan keeps index 0
    row(1)[len / 2] = nan;                 // NaN inside the lanes
    row(2)[len - 1] = nan;                 // NaN in the tail
    for (int64_t i = 0; i < len; ++i) row(3)[i] = (i % 2) ? 0.0f : -0.0f;  // signed zeros tie
    row(4)[7] = inf, row(4)[len - 2] = inf;  // tied infinities, one in the tail
    row(5)[5] = -inf, row(5)[40 % len] = -inf;
    row(6)[len - 1] = 100;                 // the greatest in the tail
    row(6)[len - 3] = -100;
    row(7)[0] = 100, row(7)[0 + len / 3] = 100;  // at the start, tied later
    for (int64_t i = 0; i < len; ++i) row(8)[i] = 2.5f;  // all equal
    for (int64_t i = 0; i < len; ++i) row(9)[i] = nan;   // all NaN
    for (const char* op : {"ArgMax", "ArgMin", "ReduceMax", "ReduceMin"}) {
      for (int last : {0, 1}) {
        const bool arg = op[0] == 'A';
        if (!arg && last == 1) continue;
        SCOPED_TRACE(absl::StrCat(op, " length ", len, " select_last ", last));
        GraphBuilder b;
        Value* in = b.Input("x", DType::kFloat, D({rows, len}));
        if (arg) {
          b.Output(b.Op(op, {in}, {Attribute::Int("axis", -1), Attribute::Int("select_last_index", last)}));
        } else {
          b.Output(b.Op(op, {in, b.Constant("axes", Ints64({-1}))}));
        }
        RunBoth(*b.Build(18), {{"x", x}}, 0, 0, 0);
      }
    }
  }
}

TEST(ReduceKernelsTest, EveryReduceOverContiguousAxesMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims, axes;
    int keepdims;
  };
  std::vector<Case> cases = {{{2, 3, 4, 5}, {1}, 1},     {{2, 3, 4, 5}, {2, 3}, 1}, {{2, 3, 4, 5}, {-1}, 0},
                             {{2, 3, 4, 5}, {0}, 0},     {{2, 3, 4, 5}, {1, 2}, 0}, {{1, 64, 9, 9}, {2, 3}, 1},
                             {{2, 1, 7}, {1}, 1},        {{5, 3000}, {1}, 1},       {{3, 5000, 2}, {1}, 1}};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL1",
                         "ReduceL2", "ReduceLogSumExp", "ReduceProd", "ReduceLogSum"}) {
    const bool positive = std::string(op) == "ReduceLogSum";  // a log of a positive sum
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(c.dims), " axes ", DimsToString(c.axes), " keepdims ", c.keepdims));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D(c.dims));
      b.Output(b.Op(op, {x, b.Constant("axes", Ints64(c.axes))}, {Attribute::Int("keepdims", c.keepdims)}));
      auto model = b.Build(18);
      // Prod of 5000 factors near ±1 neither overflows nor underflows to
      // zero too early: |x| in [0.9, 1.1] for it.
      Tensor xt = positive ? RandomF32(c.dims, 17, 0.1f, 2.0f) : RandomF32(c.dims, 17);
      if (std::string(op) == "ReduceProd") {
        for (int64_t i = 0; i < xt.num_elements(); ++i) {
          float& v = xt.mutable_data<float>()[i];
          v = std::copysign(0.9f + 0.2f * std::fabs(v) / 3.0f, v);  // RandomF32: [-3, 3]
        }
      }
      std::string plan = RunBoth(*model, {{"x", xt}}, 0, 1e-4, 1e-5);
      EXPECT_NE(plan.find("reduce"), std::string::npos) << plan;
    }
  }
}

TEST(NormKernelsTest, InstanceAndGroupNormMatchTheReference) {
  struct Case {
    const char* op;
    int opset;
    std::vector<int64_t> dims;
    int64_t groups;       // 0: InstanceNormalization
    int64_t param_count;  // scale/bias entries
    bool constant_params;
  };
  std::vector<Case> cases = {
      {"InstanceNormalization", 13, {1, 64, 56, 56}, 0, 64, true},
      {"InstanceNormalization", 13, {2, 6, 5, 7}, 0, 6, false},
      {"InstanceNormalization", 13, {2, 3, 17}, 0, 3, true},
      {"GroupNormalization", 21, {1, 64, 28, 28}, 8, 64, true},
      {"GroupNormalization", 21, {2, 6, 4, 4}, 3, 6, false},
      {"GroupNormalization", 18, {2, 6, 4, 4}, 3, 3, true},  // opset 18: per group
      {"GroupNormalization", 18, {1, 4, 9}, 4, 4, true},
      {"GroupNormalization", 21, {3, 8}, 2, 8, true},  // no spatial dims
  };
  for (const Case& c : cases) {
    for (float offset : {0.0f, 100.0f}) {  // a large mean against a small spread
      SCOPED_TRACE(absl::StrCat(c.op, "-", c.opset, " ", DimsToString(c.dims), " groups ", c.groups, " offset ", offset));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D(c.dims));
      Tensor scale = RandomF32({c.param_count}, 3, 0.5f, 2.0f), bias = RandomF32({c.param_count}, 4);
      Value* s = c.constant_params ? b.Constant("s", scale) : b.Input("s", DType::kFloat, D({c.param_count}));
      Value* bb = c.constant_params ? b.Constant("b", bias) : b.Input("b", DType::kFloat, D({c.param_count}));
      std::vector<Attribute> attrs = {Attribute::Float("epsilon", 1e-3f)};
      if (c.groups > 0) attrs.push_back(Attribute::Int("num_groups", c.groups));
      b.Output(b.Op(c.op, {x, s, bb}, attrs));
      auto model = b.Build(c.opset);
      Tensor xv = RandomF32(c.dims, 8);
      for (float& v : xv.mutable_span<float>()) v += offset;
      std::map<std::string, RuntimeValue> feeds = {{"x", xv}};
      if (!c.constant_params) {
        feeds["s"] = scale;
        feeds["b"] = bias;
      }
      std::string plan = RunBoth(*model, feeds, 0, 2e-5, 2e-5);
      EXPECT_NE(plan.find("groupnorm"), std::string::npos) << plan;
    }
  }
}

TEST(CopyKernelsTest, ExpandMatchesTheReference) {
  struct Case {
    DType dtype;
    std::vector<int64_t> in, shape;
  };
  std::vector<Case> cases = {{DType::kFloat, {1, 1, 128, 128}, {1, 12, 128, 128}},
                             {DType::kFloat, {3, 1}, {2, 3, 4}},
                             {DType::kFloat, {4}, {2, 1, 1}},  // shape smaller than the input's rank
                             {DType::kInt64, {1, 5}, {3, 5}},
                             {DType::kBool, {2, 1, 3}, {2, 4, 3}},
                             {DType::kFloat16, {1, 7}, {6, 7}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " ", DimsToString(c.in), " -> ", DimsToString(c.shape)));
    GraphBuilder b;
    Value* x = b.Input("x", c.dtype, D(c.in));
    b.Output(b.Op("Expand", {x, b.Constant("shape", Ints64(c.shape))}));
    auto model = b.Build(13);
    Tensor v = c.dtype == DType::kInt64 ? RandomInts<int64_t>(c.in, 2, -9, 9)
             : c.dtype == DType::kBool  ? RandomBool(c.in, 2)
             : c.dtype == DType::kFloat16 ? Tensor(DType::kFloat16, c.in)
                                          : RandomF32(c.in, 2);
    if (c.dtype == DType::kFloat16) {
      for (int64_t i = 0; i < v.num_elements(); ++i) static_cast<uint16_t*>(v.mutable_raw_data())[i] = static_cast<uint16_t>(0x3c00 + i);
    }
    std::string plan = RunBoth(*model, {{"x", v}}, 0, 0, 0);
    EXPECT_NE(plan.find("expand"), std::string::npos) << plan;
  }
}

TEST(CopyKernelsTest, ConcatOfPlainInputsMatchesTheReference) {
  using Dims = std::vector<int64_t>;
  struct Case {
    DType dtype;
    std::vector<Dims> inputs;
    int64_t axis;
  };
  std::vector<Case> cases = {{DType::kFloat, {{1, 64, 56, 56}, {1, 64, 56, 56}}, 1},
                             {DType::kFloat, {{2, 3, 4}, {2, 5, 4}, {2, 1, 4}}, 1},
                             {DType::kFloat, {{2, 3, 4}, {2, 3, 2}}, -1},
                             {DType::kFloat, {{1, 3}, {4, 3}}, 0},
                             {DType::kInt64, {{3}, {2}}, 0},
                             {DType::kInt32, {{2, 2}, {2, 3}}, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " axis ", c.axis));
    GraphBuilder b;
    std::vector<Value*> ins;
    std::map<std::string, RuntimeValue> feeds;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::string name = absl::StrCat("x", i);
      Tensor v = c.dtype == DType::kFloat ? RandomF32(c.inputs[i], 10 + i)
               : c.dtype == DType::kInt64 ? RandomInts<int64_t>(c.inputs[i], 10 + i, -99, 99)
                                          : RandomInts<int32_t>(c.inputs[i], 10 + i, -99, 99);
      if (i == 1) {
        ins.push_back(b.Constant(name, v));  // a constant among the inputs
      } else {
        ins.push_back(b.Input(name, c.dtype, D(c.inputs[i])));
        feeds[name] = v;
      }
    }
    b.Output(b.Op("Concat", ins, {Attribute::Int("axis", c.axis)}));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, feeds, 0, 0, 0);
    EXPECT_NE(plan.find("concat"), std::string::npos) << plan;
  }
}

TEST(CopyKernelsTest, SplitMatchesTheReference) {
  struct Case {
    int opset;
    std::vector<int64_t> dims;
    int64_t axis;
    std::vector<int64_t> split;  // opset 13: the split input; opset 18: empty, num_outputs below
    int64_t num_outputs;
  };
  std::vector<Case> cases = {{13, {1, 128, 768}, -1, {256, 256, 256}, 3},
                             {13, {2, 6, 5}, 1, {1, 2, 3}, 3},
                             {13, {4, 3}, 0, {}, 2},
                             {18, {2, 7, 3}, 1, {}, 3},  // uneven: 3, 3, 1
                             {18, {10}, 0, {}, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("opset ", c.opset, " ", DimsToString(c.dims), " axis ", c.axis));
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D(c.dims));
    std::vector<Value*> ins = {x};
    std::vector<Attribute> attrs = {Attribute::Int("axis", c.axis)};
    if (!c.split.empty()) ins.push_back(b.Constant("split", Ints64(c.split)));
    if (c.opset >= 18) attrs.push_back(Attribute::Int("num_outputs", c.num_outputs));
    for (Value* o : b.OpN("Split", ins, static_cast<size_t>(c.num_outputs), attrs)) b.Output(o);
    auto model = b.Build(c.opset);
    std::string plan = RunBoth(*model, {{"x", RandomF32(c.dims, 12)}}, 0, 0, 0);
    EXPECT_NE(plan.find("split"), std::string::npos) << plan;
  }
}

TEST(CopyKernelsTest, TransposeAndTileOfAnyDtypeMatchTheReference) {
  struct Case {
    DType dtype;
    std::vector<int64_t> dims, perm, repeats;
  };
  std::vector<Case> cases = {{DType::kFloat16, {1, 12, 16, 8}, {0, 2, 1, 3}, {1, 2, 1, 3}},
                             {DType::kInt64, {2, 3, 4}, {2, 0, 1}, {3, 1, 2}},
                             {DType::kFloat, {2, 3, 4}, {1, 0, 2}, {1, 12, 1}},
                             {DType::kBool, {5, 7}, {1, 0}, {2, 2}},
                             {DType::kInt32, {6}, {0}, {4}},
                             // Bytes in 8x8 tiles with ragged edges: NCHW -> NHWC and back.
                             {DType::kUint8, {2, 37, 19, 13}, {0, 2, 3, 1}, {1, 1, 2, 1}},
                             {DType::kInt8, {3, 41, 24}, {0, 2, 1}, {1, 1, 1}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " ", DimsToString(c.dims)));
    Tensor v = c.dtype == DType::kBool    ? RandomBool(c.dims, 3)
             : c.dtype == DType::kInt64   ? RandomInts<int64_t>(c.dims, 3, -50, 50)
             : c.dtype == DType::kInt32   ? RandomInts<int32_t>(c.dims, 3, -50, 50)
             : c.dtype == DType::kUint8   ? RandomInts<uint8_t>(c.dims, 3, 0, 255)
             : c.dtype == DType::kInt8    ? RandomInts<int8_t>(c.dims, 3, -128, 127)
             : c.dtype == DType::kFloat16 ? Tensor(DType::kFloat16, c.dims)
                                          : RandomF32(c.dims, 3);
    if (c.dtype == DType::kFloat16) {
      for (int64_t i = 0; i < v.num_elements(); ++i) static_cast<uint16_t*>(v.mutable_raw_data())[i] = static_cast<uint16_t>(0x3c00 + i % 1000);
    }
    GraphBuilder b;
    Value* x = b.Input("x", c.dtype, D(c.dims));
    b.Output(b.Op("Transpose", {x}, {Attribute::Ints("perm", c.perm)}));
    b.Output(b.Op("Tile", {x, b.Constant("repeats", Ints64(c.repeats))}));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", v}}, 0, 0, 0);
    EXPECT_NE(plan.find("tile"), std::string::npos) << plan;
  }
}

TEST(ScanKernelsTest, CumSumMatchesTheReference) {
  for (DType t : {DType::kFloat, DType::kInt64, DType::kInt32}) {
    for (int64_t axis : {0, 1, -1}) {
      for (int flags = 0; flags < 4; ++flags) {
        SCOPED_TRACE(absl::StrCat(DTypeName(t), " axis ", axis, " exclusive ", flags & 1, " reverse ", flags >> 1));
        // Along the last axis 123 rows: groups of eight and three rows alone.
        std::vector<int64_t> dims = {3, 41, 5};
        GraphBuilder b;
        Value* x = b.Input("x", t, D(dims));
        b.Output(b.Op("CumSum", {x, b.Constant("axis", Tensor::FromVector<int64_t>({axis}, {1}))},
                      {Attribute::Int("exclusive", flags & 1), Attribute::Int("reverse", flags >> 1)}));
        auto model = b.Build(14);
        Tensor v = t == DType::kFloat ? RandomF32(dims, 6) : t == DType::kInt64 ? RandomInts<int64_t>(dims, 6, -9, 9)
                                                                                  : RandomInts<int32_t>(dims, 6, -9, 9);
        std::string plan = RunBoth(*model, {{"x", v}}, 0, 0, 0);
        EXPECT_NE(plan.find("cumsum"), std::string::npos) << plan;
      }
    }
  }
}

TEST(CastKernelsTest, FloatToIntegersFollowTheReferenceOutOfRangeToo) {
  // Pieces of 8192: clean, one beyond int32 (int64 only), one with specials,
  // and a tail that is not a whole vector.
  Tensor v = RandomF32({3, 9001}, 7, -1e4f, 1e4f);
  float* p = v.mutable_data<float>();
  p[9000] = 5e12f;
  p[9001] = -2147483648.0f;
  p[9002] = 2147483520.0f;
  p[27002] = -3.9f;
  p[17000] = NAN;
  p[17001] = INFINITY;
  p[17002] = -1e20f;
  p[17003] = 3e9f;
  p[17004] = -0.7f;
  for (DType to : {DType::kInt64, DType::kInt32}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D({3, 9001}));
    b.Output(b.Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(to))}));
    auto model = b.Build(13);
    RunBoth(*model, {{"x", v}}, 0, 0, 0);
  }
}

TEST(PredicateKernelsTest, IsNaNAndIsInfMatchTheReference) {
  Tensor v = RandomF32({3, 50}, 4);
  float* p = v.mutable_data<float>();
  p[3] = NAN;
  p[7] = INFINITY;
  p[11] = -INFINITY;
  p[60] = -NAN;
  for (int pos : {0, 1}) {
    for (int neg : {0, 1}) {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, D({3, 50}));
      b.Output(b.Op("IsNaN", {x}));
      b.Output(b.Op("IsInf", {x}, {Attribute::Int("detect_positive", pos), Attribute::Int("detect_negative", neg)}));
      auto model = b.Build(13);
      RunBoth(*model, {{"x", v}}, 0, 0, 0);
    }
  }
}

}  // namespace
}  // namespace aic::cpu

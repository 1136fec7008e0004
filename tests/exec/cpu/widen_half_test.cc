// Half-precision models on the CPU backend run in f32 (exec/cpu/widen_half.h):
// the plan has no reference step, outputs keep the declared half type and
// agree with the reference executor (which rounds to half after every op)
// within fp16 tolerance; what the model reads as half is rounded where it
// reads it, data movement of half inputs stays half, and reference kernels
// compute as the reference does.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "exec/cpu/internal.h"
#include "exec/cpu/kernels/large_unary.h"
#include "exec/cpu/kernels/unary.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/util/float_convert.h"
#include "support/half.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

Tensor Half(const Tensor& f, DType t = DType::kFloat16) { return NarrowFromFloat(f, t); }

// Conv -> Relu -> GlobalAveragePool -> Flatten -> MatMul -> Add -> Softmax, all in `t`.
std::unique_ptr<Model> HalfCnn(DType t, bool float_io) {
  GraphBuilder b;
  Value* x = b.Input("x", float_io ? DType::kFloat : t, D({1, 8, 12, 12}));
  Value* h = float_io ? b.Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(t))}) : x;
  Value* c = b.Op("Conv", {h, b.Constant("w", Half(RandomF32({16, 8, 3, 3}, 1, -0.2f, 0.2f), t)),
                           b.Constant("bias", Half(RandomF32({16}, 2, -0.1f, 0.1f), t))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* f = b.Op("Flatten", {b.Op("GlobalAveragePool", {b.Op("Relu", {c})})});
  Value* m = b.Op("Add", {b.Op("MatMul", {f, b.Constant("fc", Half(RandomF32({16, 10}, 3, -0.5f, 0.5f), t))}),
                          b.Constant("fb", Half(RandomF32({10}, 4), t))});
  Value* y = b.Op("Softmax", {m});
  b.Output(float_io ? b.Op("Cast", {y}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}) : y);
  b.Output(c);  // an intermediate as a second output (half even with float IO)
  return b.Build(17);
}

TEST(WidenHalfTest, HalfModelsRunInFloatWithoutReferenceSteps) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    for (bool float_io : {false, true}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(t), float_io ? " with float IO" : " with half IO"));
      auto model = HalfCnn(t, float_io);
      Tensor x = RandomF32({1, 8, 12, 12}, 5, -1, 1);
      double tol = t == DType::kFloat16 ? 1e-2 : 4e-2;
      std::string plan = RunBoth(*model, {{"x", float_io ? x : Half(x, t)}}, 0, tol, tol);
      EXPECT_NE(plan.find("conv"), std::string::npos) << plan;
    }
  }
}

TEST(WidenHalfTest, OutputsKeepTheirDeclaredTypes) {
  auto model = HalfCnn(DType::kFloat16, false);
  CpuExecutor cpu(*model);
  auto got = cpu.Run({{"x", Half(RandomF32({1, 8, 12, 12}, 5, -1, 1))}});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].tensor.dtype(), DType::kFloat16);
  EXPECT_EQ((*got)[1].tensor.dtype(), DType::kFloat16);
  EXPECT_EQ((*got)[1].tensor.dims(), (std::vector<int64_t>{1, 16, 12, 12}));
  // The caller's model is untouched: only the plan's clone is widened.
  EXPECT_EQ(model->graph->FindValue("w")->initializer()->dtype(), DType::kFloat16);
}

// The share of elements of `got` that differ from `want` (both half), and
// whether every difference is at most one unit in the last place.
struct HalfDifference {
  double share = 0;
  bool within_one_ulp = true;
};
HalfDifference Compare(const Tensor& got, const Tensor& want) {
  HalfDifference d;
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.dims(), want.dims());
  const auto* a = static_cast<const uint16_t*>(got.raw_data());
  const auto* b = static_cast<const uint16_t*>(want.raw_data());
  int64_t differ = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    if (a[i] == b[i]) continue;
    ++differ;
    // Same sign: adjacent bit patterns are adjacent values.
    d.within_one_ulp = d.within_one_ulp && ((a[i] ^ b[i]) & 0x8000) == 0 && (a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]) == 1;
  }
  d.share = static_cast<double>(differ) / static_cast<double>(std::max<int64_t>(1, got.num_elements()));
  return d;
}

// The outputs of the reference executor and of `cpu` (empty after a failure).
std::pair<std::vector<RuntimeValue>, std::vector<RuntimeValue>> RunOnBoth(
    const Model& model, const std::map<std::string, RuntimeValue>& feeds, CpuExecutor& cpu) {
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(want.ok()) << want.status();
  auto got = cpu.Run(feeds);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return {};
  return {*std::move(want), *std::move(got)};
}

// Between the graph's inputs and outputs a half model computes in f32 (as
// ONNX Runtime and OpenVINO do here): no rounding steps.
TEST(WidenHalfTest, FloatIslandsHaveNoRoundingSteps) {
  auto model = HalfCnn(DType::kFloat16, false);
  std::string plan = RunBoth(*model, {{"x", Half(RandomF32({1, 8, 12, 12}, 5, -1, 1))}}, 0, 1e-2, 1e-2);
  EXPECT_EQ(plan.find("round"), std::string::npos) << plan;
}

// A bfloat16 value the model reads as half is rounded to nearest, as the
// reference stores a computed bfloat16 (the exit Cast alone would truncate,
// as the model's own Casts to bfloat16 do): one Mul is the reference's bit for bit.
TEST(WidenHalfTest, BFloat16OutputsRoundToNearest) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kBFloat16, D({256}));
  Tensor c(DType::kFloat, {});
  c.mutable_data<float>()[0] = 0.3f;
  Value* y = b.Op("Mul", {x, b.Constant("c", Half(c, DType::kBFloat16))});
  b.Output(y);
  b.Output(b.Op("Cast", {y}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}));
  auto model = b.Build(17);
  std::map<std::string, RuntimeValue> feeds = {{"x", Half(RandomF32({256}, 26), DType::kBFloat16)}};
  CpuExecutor cpu(*model);
  auto [want, got] = RunOnBoth(*model, feeds, cpu);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(Compare(got[0].tensor, want[0].tensor).share, 0.0);
  ExpectClose(got[1].tensor, want[1].tensor, 0, 0);
}

// A bfloat16 model's convolutions and matmuls read their input and weights
// as bfloat16 (AVX512-BF16 kernels): the input the model declares bf16 is
// rounded to it first, which the widened f32 path skips. So the outputs are
// the reference's (which rounds every op's output) but for rare one-ulp
// accumulation-order differences, while the f32 path (bf16_kernels off)
// misses the rounding of the input and differs from it on many elements.
TEST(WidenHalfTest, Bf16ConvsAndMatMulsReadTheDeclaredBf16Values) {
  if (!__builtin_cpu_supports("avx512bf16")) GTEST_SKIP() << "this CPU has no AVX512-BF16: bf16 kernels are not used";
  const DType bf = DType::kBFloat16;
  Tensor k(DType::kFloat, {});
  k.mutable_data<float>()[0] = 1.1f;  // x * k is rarely a bf16 value: the conv/matmul input needs rounding
  struct Case {
    const char* name;
    std::unique_ptr<Model> model;
    Tensor x;
    const char* kind;  // the step kind that must run on a bf16 kernel
  };
  std::vector<Case> cases;
  {
    GraphBuilder b;
    Value* x = b.Input("x", bf, D({1, 16, 10, 10}));
    Value* p = b.Op("Mul", {x, b.Constant("k", Half(k, bf))});
    b.Output(b.Op("Conv", {p, b.Constant("w", Half(RandomF32({24, 16, 3, 3}, 40, -0.3f, 0.3f), bf)),
                           b.Constant("bias", Half(RandomF32({24}, 41, -0.1f, 0.1f), bf))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})}));
    cases.push_back({"Conv", b.Build(22), Half(RandomF32({1, 16, 10, 10}, 42, -1, 1), bf), "conv"});
  }
  {
    GraphBuilder b;
    Value* x = b.Input("x", bf, D({2, 6, 64}));
    Value* p = b.Op("Mul", {x, b.Constant("k", Half(k, bf))});
    b.Output(b.Op("MatMul", {p, b.Constant("w", Half(RandomF32({64, 40}, 43, -0.3f, 0.3f), bf))}));
    cases.push_back({"MatMul", b.Build(22), Half(RandomF32({2, 6, 64}, 44, -1, 1), bf), "matmul"});
  }
  {
    GraphBuilder b;
    Value* x = b.Input("x", bf, D({6, 64}));
    Value* p = b.Op("Mul", {x, b.Constant("k", Half(k, bf))});
    b.Output(b.Op("Gemm", {p, b.Constant("w", Half(RandomF32({40, 64}, 45, -0.3f, 0.3f), bf)),
                           b.Constant("c", Half(RandomF32({40}, 46, -0.1f, 0.1f), bf))},
                  {Attribute::Int("transB", 1)}));
    cases.push_back({"Gemm", b.Build(22), Half(RandomF32({6, 64}, 47, -1, 1), bf), "gemm"});
  }
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, RuntimeValue> feeds = {{"x", c.x}};
    CpuExecutor bf16_kernels(*c.model);
    auto [want, got] = RunOnBoth(*c.model, feeds, bf16_kernels);
    ASSERT_EQ(got.size(), 1u);
    auto plan = bf16_kernels.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    std::string desc = DescribePlan(**plan);
    EXPECT_NE(desc.find("bf16"), std::string::npos) << desc;
    EXPECT_NE(desc.find(c.kind), std::string::npos) << desc;
    EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
    HalfDifference with_rounding = Compare(got[0].tensor, want[0].tensor);
    EXPECT_TRUE(with_rounding.within_one_ulp);
    EXPECT_LE(with_rounding.share, 0.01);

    CpuOptions f32;
    f32.bf16_kernels = false;
    CpuExecutor f32_kernels(*c.model, f32);
    auto unrounded = f32_kernels.Run(feeds);
    ASSERT_TRUE(unrounded.ok()) << unrounded.status();
    EXPECT_GE(Compare((*unrounded)[0].tensor, want[0].tensor).share, 0.05) << "the case does not tell the paths apart";
  }
}

// A half model's weights are widened to float when the lowering first reads
// them and give the float bytes up once packed (as bf16 by the AVX512-BF16
// kernels, as f32 otherwise), and so does the model's half original: the
// plan holds each weight once. Another batch's compile widens them again.
TEST(WidenHalfTest, WidenedWeightsAreReleasedOncePacked) {
  for (DType t : {DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(t));
    GraphBuilder b;
    Value* x = b.Input("x", t, {Dim::Symbol("batch"), 64, 10, 10});
    b.Output(b.Op("Conv", {x, b.Constant("w", Half(RandomF32({96, 64, 3, 3}, 50, -0.1f, 0.1f), t))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})}));
    auto model = b.Build(22);
    const Tensor half_before = model->graph->FindValue("w")->initializer()->Clone();
    std::map<std::string, RuntimeValue> feeds = {{"x", Half(RandomF32({1, 64, 10, 10}, 51, -1, 1), t)}};
    CpuExecutor cpu(*model);
    auto [want, got] = RunOnBoth(*model, feeds, cpu);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(Compare(got[0].tensor, want[0].tensor).share, 0.01);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok());
    const Tensor& widened = *(*plan)->model->graph->FindValue("w")->initializer();
    EXPECT_EQ(widened.dtype(), DType::kFloat);
    EXPECT_TRUE(widened.buffer()->released()) << DescribePlan(**plan);
    EXPECT_GE(StatsOf(**plan).released_weight_bytes, static_cast<size_t>(96 * 64 * 9 * 4));
    // The model's half original gives its bytes up too and gets them back exactly.
    const Tensor& original = *model->graph->FindValue("w")->initializer();
    EXPECT_EQ(original.dtype(), t);
    EXPECT_TRUE(original.buffer()->released());
    EXPECT_GE(StatsOf(**plan).released_weight_bytes, static_cast<size_t>(96 * 64 * 9 * 6));
    EXPECT_TRUE(original.BitwiseEquals(half_before));
    // Another batch compiles from the released original (its deferred widening
    // restores it: one restore inside another), before anything else reads it.
    std::map<std::string, RuntimeValue> two = {{"x", Half(RandomF32({2, 64, 10, 10}, 52, -1, 1), t)}};
    auto got2 = cpu.Run(two);
    ASSERT_TRUE(got2.ok()) << got2.status();
    auto want2 = ReferenceExecutor(*model).Run(two);
    ASSERT_TRUE(want2.ok()) << want2.status();
    EXPECT_LE(Compare((*got2)[0].tensor, (*want2)[0].tensor).share, 0.01);
    // The restored float bytes are the half values widened, bit for bit.
    const Tensor& half = *model->graph->FindValue("w")->initializer();
    for (int64_t i = 0; i < half.num_elements(); i += 97) {
      const float want_value =
          t == DType::kBFloat16 ? BFloat16ToFloat(half.data<uint16_t>()[i]) : HalfToFloat(half.data<uint16_t>()[i]);
      ASSERT_EQ(widened.data<float>()[i], want_value) << "element " << i;
    }
  }
}

// An fp16 model with an op kept in float between Casts (what converters
// write around Resize): each Cast pair that rounds to half (the Cast of a
// computed half value to float, the Cast back to half with its widened twin)
// is one rounding step in the producer's layout: no plain copies, no reorders.
TEST(WidenHalfTest, CastsAroundAFloatIslandAddNoCopies) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat16, D({1, 16, 8, 8}));
  Value* c = b.Op("Conv", {x, b.Constant("w", Half(RandomF32({16, 16, 3, 3}, 16, -0.2f, 0.2f)))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* wide = b.Op("Cast", {c}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  Value* scaled = b.Op("Mul", {wide, b.Constant("s", RandomF32({1, 16, 1, 1}, 17, 0.5f, 2.0f))});
  Value* narrow = b.Op("Cast", {scaled}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat16))});
  Value* c2 = b.Op("Conv", {narrow, b.Constant("w2", Half(RandomF32({16, 16, 1, 1}, 18, -0.2f, 0.2f)))});
  b.Output(c2);
  auto model = b.Build(17);
  std::map<std::string, RuntimeValue> feeds = {{"x", Half(RandomF32({1, 16, 8, 8}, 19, -1, 1))}};
  std::string plan = RunBoth(*model, feeds, 0, 2e-3, 2e-3);
  // Cast steps only at the graph's half input and output ('x/widen', 'Conv_../narrow').
  EXPECT_EQ(plan.find("cast\tCast 'Cast"), std::string::npos) << plan;
  EXPECT_NE(plan.find("round\tCast"), std::string::npos) << plan;
  // Reorders only between those plain casts and the convs' blocked layouts.
  EXPECT_EQ(StatsOf(**CpuExecutor(*model).PlanFor(feeds)).reorder_steps, 2) << plan;
}

// A Cast from float16 to float16 is an identity of the model, which -O1
// drops: it rounds nothing in the island, so the answer is the same at every
// optimization level (the Attention function body casts its scores this way;
// rounding there put the wheel's expanded fp16 causal attention 1.2e-3 off).
TEST(WidenHalfTest, SameTypeCastsAreIdentities) {
  auto build = [](const char* op) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat16, D({4, 64}));
    Value* s = b.Op("Mul", {x, b.Constant("s", Half(RandomF32({64}, 30, 0.1f, 3.0f)))});
    std::vector<Attribute> attrs;
    if (std::string(op) == "Cast") attrs.push_back(Attribute::Int("to", static_cast<int64_t>(DType::kFloat16)));
    b.Output(b.Op("Softmax", {b.Op(op, {s}, attrs)}));
    return b.Build(17);
  };
  std::map<std::string, RuntimeValue> feeds = {{"x", Half(RandomF32({4, 64}, 31, -3, 3))}};
  auto with_cast = build("Cast");
  auto with_identity = build("Identity");
  CpuExecutor cast_cpu(*with_cast), identity_cpu(*with_identity);
  auto got = cast_cpu.Run(feeds);
  auto want = identity_cpu.Run(feeds);
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_EQ(Compare((*got)[0].tensor, (*want)[0].tensor).share, 0.0);
  auto plan = cast_cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(DescribePlan(**plan).find("round"), std::string::npos) << DescribePlan(**plan);
}

// Cast(Cast(x: f32, to=float16), to=float) rounds once: the value the first
// Cast writes is already a float16, so the second reads it as it is (it was
// rounded again, with two plain casts for the graph input: 2.1x ORT on 12 MB).
TEST(WidenHalfTest, ARoundTripThroughHalfRoundsOnce) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, D({3, 1000}));
  Value* h = b.Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat16))});
  b.Output(b.Op("Cast", {h}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}));
  auto model = b.Build(17);
  Tensor xs = RandomF32({3, 1000}, 32, -60000, 60000);
  std::string plan = RunBoth(*model, {{"x", xs}}, 0, 0, 0);
  EXPECT_EQ(plan.find("cast\t"), std::string::npos) << plan;
  size_t first = plan.find("round\t");
  ASSERT_NE(first, std::string::npos) << plan;
  EXPECT_EQ(plan.find("round\t", first + 1), std::string::npos) << plan;
  // The rounding step writes the caller's output tensor: nothing is left in
  // the arena to copy out of it (an alias slot for the widened, now no-op,
  // second Cast cost a 12 MB copy a run on a [8, 512, 768] pair).
  EXPECT_EQ(StatsOf(**CpuExecutor(*model).PlanFor({{"x", xs}})).arena_bytes, 0u) << plan;
}

// An op the backend runs by its reference kernel gets the half values the
// model declares and computes as the reference executor does: FlexAttention
// rounds its scaled Q and K to half before multiplying them (in f32 on
// widened inputs, 45 of 64 elements came out different).
TEST(WidenHalfTest, ReferenceKernelsRunInTheDeclaredHalfType) {
  GraphBuilder b;
  Value* q = b.Input("q", DType::kFloat16, D({1, 2, 4, 8}));
  Value* k = b.Input("k", DType::kFloat16, D({1, 2, 6, 8}));
  Value* v = b.Input("v", DType::kFloat16, D({1, 2, 6, 8}));
  std::vector<Value*> y = b.OpN("FlexAttention", {q, k, v}, 1, {}, "ai.onnx.preview");
  b.Output(y[0]);
  auto model = b.Build(23);
  model->opset_imports.push_back({"ai.onnx.preview", 1});
  std::map<std::string, RuntimeValue> feeds = {{"q", Half(RandomF32({1, 2, 4, 8}, 20, -2, 2))},
                                               {"k", Half(RandomF32({1, 2, 6, 8}, 21, -2, 2))},
                                               {"v", Half(RandomF32({1, 2, 6, 8}, 22, -2, 2))}};
  CpuExecutor cpu(*model);
  auto [want, got] = RunOnBoth(*model, feeds, cpu);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(Compare(got[0].tensor, want[0].tensor).share, 0.0);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 1) << DescribePlan(**plan);
}

// Data movement on the graph's half inputs and on half tables read only by
// data movement stays in half: 2-byte elements moved, no f32 copies; a
// computing reader gets one float copy of what it reads.
TEST(WidenHalfTest, DataMovementOfHalfValuesStaysHalf) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat16, D({4, 6, 8}));
  Value* ids = b.Input("ids", DType::kInt64, D({5}));
  Value* t = b.Op("Transpose", {x}, {Attribute::Ints("perm", {2, 0, 1})});
  Value* table = b.Constant("table", Half(RandomF32({50, 8}, 23)));
  Value* rows = b.Op("Gather", {table, ids});  // [5, 8]
  b.Output(b.Op("Concat", {b.Op("Reshape", {t, b.Constant("s", Tensor::FromVector<int64_t>({-1, 8}, {2}))}), rows},
                {Attribute::Int("axis", 0)}));
  // Computes: reads a float copy of the gathered rows (HardSigmoid, two eltwise
  // stages, is not one of the activations run on the half bytes).
  b.Output(b.Op("HardSigmoid", {rows}));
  auto model = b.Build(17);
  std::map<std::string, RuntimeValue> feeds = {{"x", Half(RandomF32({4, 6, 8}, 24))},
                                               {"ids", RandomInts<int64_t>({5}, 25, 0, 49)}};
  CpuExecutor cpu(*model);
  auto [want, got] = RunOnBoth(*model, feeds, cpu);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(Compare(got[0].tensor, want[0].tensor).share, 0.0);
  EXPECT_LE(Compare(got[1].tensor, want[1].tensor).share, 0.05);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  std::string desc = DescribePlan(**plan);
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << desc;
  // Casts only for the HardSigmoid: the gathered rows widened, its result narrowed.
  size_t casts = 0;
  for (size_t at = desc.find("cast\t"); at != std::string::npos; at = desc.find("cast\t", at + 1)) ++casts;
  EXPECT_EQ(casts, 2u) << desc;
  // The table stays half: 50 x 8 x 2 bytes, not widened to f32.
  EXPECT_LT(StatsOf(**plan).weight_bytes, 50u * 8u * 4u) << desc;
}

// A LayerNormalization or RMSNormalization between half tensors runs as one
// step over the half bytes (no Casts to f32 and back), within a half ulp of
// the reference executor, which widens, normalizes in float and rounds.
// With its Mean output read too, the three steps stay.
TEST(WidenHalfTest, HalfNormalizationsRunOnTheHalfBytes) {
  Tensor x = Half(RandomF32({3, 5, 768}, 21, -2, 2));
  for (const char* op : {"LayerNormalization", "RMSNormalization"}) {
    for (bool mean_read : {false, true}) {
      bool layer = std::string(op) == "LayerNormalization";
      if (!layer && mean_read) continue;
      SCOPED_TRACE(absl::StrCat(op, mean_read ? " with Mean read" : ""));
      GraphBuilder b;
      Value* in = b.Input("x", DType::kFloat16, D({3, 5, 768}));
      Value* scale = b.Constant("scale", Half(RandomF32({768}, 22, 0.5f, 1.5f)));
      std::vector<Value*> ins = {in, scale};
      if (layer) ins.push_back(b.Constant("bias", Half(RandomF32({768}, 23, -0.5f, 0.5f))));
      std::vector<Value*> outs = b.OpN(op, ins, layer ? 2 : 1, {Attribute::Int("axis", -1)});
      b.Output(outs[0]);
      if (mean_read) b.Output(b.Op("Mul", {outs[1], outs[1]}));
      auto model = b.Build(layer ? 17 : 23);
      std::string plan = RunBoth(*model, {{"x", x}}, 0, 4e-3, 4e-3);
      EXPECT_NE(plan.find(layer ? "layernorm\t" : "rmsnorm\t"), std::string::npos) << plan;
      EXPECT_EQ(plan.find("cast\t") == std::string::npos, !mean_read) << plan;
    }
  }
}

// Add/Sub/Mul/Div/Max/Min between same-shaped half tensors run as one step
// over the half bytes (x * x, one Cast read twice, too); a broadcast operand
// keeps the Casts. Within a half ulp of the reference executor.
TEST(WidenHalfTest, HalfBinaryOpsRunOnTheHalfBytes) {
  Tensor a = Half(RandomF32({4, 33, 64}, 31, -3, 3));
  Tensor c = Half(RandomF32({4, 33, 64}, 32, 0.5f, 2));
  Tensor row = Half(RandomF32({64}, 33, 0.5f, 2));
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (int form = 0; form < 3; ++form) {  // a op c, a op a, a op row (broadcast)
      SCOPED_TRACE(absl::StrCat(op, " form ", form));
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat16, D({4, 33, 64}));
      Value* y = form == 2 ? b.Input("y", DType::kFloat16, D({64})) : b.Input("y", DType::kFloat16, D({4, 33, 64}));
      b.Output(b.Op(op, {x, form == 1 ? x : y}));
      auto model = b.Build(17);
      std::string plan = RunBoth(*model, {{"x", a}, {"y", form == 2 ? row : c}}, 0, 1e-3, 1e-3);
      EXPECT_EQ(plan.find("cast\t") == std::string::npos, form != 2) << plan;
    }
  }
}

// A half model's standalone activation (Cast -> op -> Cast after widening)
// runs as one step over the half bytes: the exact ones (ReLU, LeakyRelu,
// Abs, Neg, Clip) equal to the reference executor's, infinities and -0
// among the inputs (NaN too in NativeKernelsTest.LargeUnaryOpsMatchScalarLoops:
// the reference's ReLU maps it to 0, numpy's and ours keep it); the
// transcendental ones within half rounding where this CPU has their kernel.
// HardSigmoid (two eltwise stages) keeps the Casts.
TEST(WidenHalfTest, HalfUnaryOpsRunOnTheHalfBytes) {
  const std::vector<int64_t> dims = {4, 33, 67};  // 8844 values: a ragged piece and run at the end
  Tensor f = RandomF32(dims, 41, -4, 4);
  float* p = f.mutable_data<float>();
  p[70] = INFINITY, p[1030] = -INFINITY, p[8843] = -0.0f, p[1024] = 0.0f;
  Tensor x = Half(f);
  struct Case {
    const char* op;
    std::vector<Attribute> attrs;
    bool exact;
    const char* kernel;  // the FastUnaryKernel a transcendental op needs
  };
  const Case cases[] = {
      {"Relu", {}, true, nullptr},
      {"LeakyRelu", {Attribute::Float("alpha", 0.1f)}, true, nullptr},
      {"Abs", {}, true, nullptr},
      {"Neg", {}, true, nullptr},
      {"Clip", {}, true, nullptr},
      {"Tanh", {}, false, "Tanh"},
      {"Sigmoid", {}, false, "Sigmoid"},
      {"Exp", {}, false, "Exp"},
      {"Gelu", {Attribute::String("approximate", "tanh")}, false, "GeluTanh"},
      {"HardSigmoid", {}, false, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    GraphBuilder b;
    Value* in = b.Input("x", DType::kFloat16, D(dims));
    std::vector<Value*> ins = {in};
    if (std::string(c.op) == "Clip") {
      ins.push_back(b.Constant("lo", Half(Tensor::Scalar(-1.5f))));
      ins.push_back(b.Constant("hi", Half(Tensor::Scalar(2.0f))));
    }
    b.Output(b.Op(c.op, ins, c.attrs));
    auto model = b.Build(20);
    const double tol = c.exact ? 0.0 : 2e-3;
    std::string plan = RunBoth(*model, {{"x", x}}, 0, tol, tol);
    const bool fused =
        c.exact ? kernels::HaveLargeUnary() : c.kernel != nullptr && kernels::FastUnaryKernel(c.kernel) != nullptr;
    EXPECT_EQ(plan.find("cast\t") == std::string::npos, fused) << plan;
  }
}

// A Transpose of half values moves 16-bit patterns through register tiles
// (kernels/transpose_blocks.h), never converting them: every one of the
// 65536 bit patterns comes back in its new place unchanged, NaNs included,
// for float16 and bfloat16 alike.
TEST(WidenHalfTest, HalfTransposeCopiesEveryBitPattern) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(t));
    GraphBuilder b;
    Value* x = b.Input("x", t, D({4, 64, 256}));
    b.Output(b.Op("Transpose", {x}, {Attribute::Ints("perm", {2, 0, 1})}));
    auto model = b.Build(17);
    Tensor in(t, {4, 64, 256});
    auto* bits = static_cast<uint16_t*>(in.mutable_raw_data());
    for (int64_t i = 0; i < in.num_elements(); ++i) bits[i] = static_cast<uint16_t>(i);
    CpuExecutor cpu(*model);
    auto got = cpu.Run({{"x", in}});
    ASSERT_TRUE(got.ok()) << got.status();
    const auto* out = static_cast<const uint16_t*>((*got)[0].tensor.raw_data());
    for (int64_t c = 0; c < 256; ++c) {
      for (int64_t a = 0; a < 4; ++a) {
        for (int64_t r = 0; r < 64; ++r) {
          ASSERT_EQ(out[(c * 4 + a) * 64 + r], bits[(a * 64 + r) * 256 + c]) << c << " " << a << " " << r;
        }
      }
    }
    auto plan = cpu.PlanFor({{"x", in}});
    ASSERT_TRUE(plan.ok());
    EXPECT_NE(DescribePlan(**plan).find("transpose\t"), std::string::npos) << DescribePlan(**plan);
    EXPECT_NE(DescribePlan(**plan).find("0 oneDNN"), std::string::npos) << DescribePlan(**plan);
  }
}

}  // namespace
}  // namespace aic::cpu

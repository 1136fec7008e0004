// The CPU backend's Attention kernel (exec/cpu/ops_native_attention.cc)
// against the reference executor on random inputs: both layouts, grouped
// heads, both mask kinds (shorter than the keys, fully masked rows), causal
// with a past, present outputs requested or not, softcap and scale,
// nonpad_kv_seqlen (opset 24), the window (opset 25), and the one case it
// leaves to the reference kernel (qk_matmul_output).
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/util/float_convert.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

struct Case {
  std::string name = "";
  int64_t opset = 23;
  bool three_d = false;
  int64_t batch = 2, q_heads = 4, kv_heads = 4, q_seq = 5, kv_seq = 7, past = 0, head = 8, v_head = 8;
  std::vector<Attribute> attrs = {};
  std::vector<int64_t> mask_dims = {};  // empty: none
  DType mask_dtype = DType::kFloat;
  bool nonpad = false;
  int outputs = 1;  // 1..4: Y, present_key, present_value, qk_matmul_output
  int fallbacks = 0;
  DType dtype = DType::kFloat;  // of Q, K, V, the past, a float mask and the outputs
};

std::vector<int64_t> Dims(const Case& c, int64_t heads, int64_t seq, int64_t size) {
  if (c.three_d) return {c.batch, seq, heads * size};
  return {c.batch, heads, seq, size};
}

void RunCase(const Case& c) {
  SCOPED_TRACE(c.name);
  GraphBuilder b;
  std::map<std::string, RuntimeValue> feeds;
  uint32_t seed = 1;
  auto input = [&](const std::string& name, const std::vector<int64_t>& dims) {
    Tensor t = RandomF32(dims, seed++, -2.0f, 2.0f);
    feeds[name] = RuntimeValue(c.dtype == DType::kFloat ? t : NarrowFromFloat(t, c.dtype));
    return b.Input(name, c.dtype, D(dims));
  };
  std::vector<Value*> ins = {input("q", Dims(c, c.q_heads, c.q_seq, c.head)),
                             input("k", Dims(c, c.kv_heads, c.kv_seq, c.head)),
                             input("v", Dims(c, c.kv_heads, c.kv_seq, c.v_head)), nullptr, nullptr, nullptr};
  if (!c.mask_dims.empty()) {
    Tensor m = c.mask_dtype == DType::kBool ? RandomBool(c.mask_dims, seed++) : RandomF32(c.mask_dims, seed++);
    if (c.mask_dtype == DType::kFloat) {
      // Some -inf, and one row hidden entirely (its query gives zeros).
      auto span = m.mutable_span<float>();
      for (size_t i = 0; i < span.size(); i += 3) span[i] = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < c.mask_dims.back(); ++j) span[static_cast<size_t>(j)] = -std::numeric_limits<float>::infinity();
    } else {
      auto* p = static_cast<uint8_t*>(m.mutable_raw_data());
      for (int64_t j = 0; j < c.mask_dims.back(); ++j) p[j] = 0;
    }
    const bool half_mask = c.mask_dtype == DType::kFloat && c.dtype != DType::kFloat;
    feeds["mask"] = RuntimeValue(half_mask ? NarrowFromFloat(m, c.dtype) : m);
    ins[3] = b.Input("mask", half_mask ? c.dtype : c.mask_dtype, D(c.mask_dims));
  }
  if (c.past > 0) {
    ins[4] = input("past_k", {c.batch, c.kv_heads, c.past, c.head});
    ins[5] = input("past_v", {c.batch, c.kv_heads, c.past, c.v_head});
  }
  if (c.nonpad) {
    std::vector<int64_t> lens;
    for (int64_t i = 0; i < c.batch; ++i) lens.push_back(c.kv_seq - i % c.kv_seq);
    feeds["nonpad"] = RuntimeValue(Tensor::FromVector<int64_t>(lens, {c.batch}));
    ins.push_back(b.Input("nonpad", DType::kInt64, D({c.batch})));
  }
  while (!ins.empty() && ins.back() == nullptr) ins.pop_back();
  std::vector<Attribute> attrs = c.attrs;
  if (c.three_d) {
    attrs.push_back(Attribute::Int("q_num_heads", c.q_heads));
    attrs.push_back(Attribute::Int("kv_num_heads", c.kv_heads));
  }
  std::vector<Value*> outs = b.OpN("Attention", ins, c.outputs, attrs);
  for (Value* o : outs) b.Output(o);
  auto model = b.Build(c.opset);
  // Half: the reference rounds each op's result to half, the kernel only Y.
  const double tol = c.dtype == DType::kFloat ? 1e-4 : 1e-2;
  std::string plan = RunBoth(*model, feeds, c.fallbacks, c.dtype == DType::kFloat ? 1e-5 : tol, tol);
  if (c.fallbacks == 0) {
    EXPECT_NE(plan.find("attention"), std::string::npos) << plan;
  }
  if (c.dtype != DType::kFloat) {
    // One step on the half values: no Casts to f32 and back, but the mask's.
    const bool float_mask = !c.mask_dims.empty() && c.mask_dtype == DType::kFloat;
    EXPECT_EQ(CountOf(plan, "cast\t"), float_mask ? 1 : 0) << plan;
  }
}

TEST(CpuAttentionTest, FourDimensionalDefaultScale) { RunCase({.name = "4d", .v_head = 6}); }

TEST(CpuAttentionTest, ThreeDimensionalGroupedWithBoolMaskSoftcapAndScale) {
  RunCase({.name = "3d gqa", .three_d = true, .kv_heads = 2,
           .attrs = {Attribute::Float("softcap", 3.0f), Attribute::Float("scale", 0.3f)},
           .mask_dims = {5, 7}, .mask_dtype = DType::kBool});
}

TEST(CpuAttentionTest, CausalWithPastAndPresentOutputs) {
  RunCase({.name = "causal past", .kv_heads = 2, .q_seq = 3, .kv_seq = 3, .past = 4,
           .attrs = {Attribute::Int("is_causal", 1)}, .outputs = 3});
  RunCase({.name = "causal past 3d", .three_d = true, .kv_heads = 1, .q_seq = 1, .kv_seq = 1, .past = 6,
           .attrs = {Attribute::Int("is_causal", 1)}, .outputs = 3});
}

TEST(CpuAttentionTest, PastWithoutPresentOutputsUsesScratch) {
  RunCase({.name = "past only y", .q_seq = 2, .kv_seq = 2, .past = 5, .mask_dims = {2, 1, 2, 7}});
}

TEST(CpuAttentionTest, PresentOutputsWithoutPast) {
  RunCase({.name = "present no past 3d", .three_d = true, .kv_heads = 2, .outputs = 3});
}

TEST(CpuAttentionTest, FloatMaskShorterThanTheKeysAndFullyMaskedRows) {
  // A mask of 5 columns over 7 keys hides the last 2 (the op pads it as masked).
  RunCase({.name = "short float mask", .mask_dims = {2, 1, 5, 5}});
  RunCase({.name = "per-head float mask", .q_heads = 2, .kv_heads = 2, .mask_dims = {1, 2, 5, 7}});
}

TEST(CpuAttentionTest, CausalWithMoreQueriesThanKeys) {
  RunCase({.name = "causal tall", .q_seq = 6, .kv_seq = 3, .attrs = {Attribute::Int("is_causal", 1)}});
}

TEST(CpuAttentionTest, NonpadKvSeqlenOpset24) {
  RunCase({.name = "nonpad", .opset = 24, .batch = 3, .q_seq = 2, .attrs = {Attribute::Int("is_causal", 1)},
           .nonpad = true});
}

TEST(CpuAttentionTest, WindowOpset25) {
  RunCase({.name = "window", .opset = 25, .q_seq = 7,
           .attrs = {Attribute::Int("left_window_size", 2), Attribute::Int("right_window_size", 1)}});
}

// A half model's Attention runs on its half values in one step
// (kernels::AttentionHalf): a decoder step with a past and present outputs
// (grouped heads, a boolean mask), a 3-D encoder with a float mask (its own
// widening Cast), and multi-query heads split over threads with a past but
// no present outputs (a half scratch holds the keys).
TEST(CpuAttentionTest, HalfDecoderStepWithPastAndPresent) {
  RunCase({.name = "f16 decode",
           .q_heads = 8,
           .kv_heads = 2,
           .q_seq = 1,
           .kv_seq = 1,
           .past = 9,
           .mask_dims = {2, 1, 1, 10},
           .mask_dtype = DType::kBool,
           .outputs = 3,
           .dtype = DType::kFloat16});
}
TEST(CpuAttentionTest, HalfThreeDimensionalWithFloatMask) {
  RunCase(
      {.name = "f16 3d", .three_d = true, .q_heads = 4, .kv_heads = 4, .mask_dims = {5, 7}, .dtype = DType::kFloat16});
}
TEST(CpuAttentionTest, HalfMultiQueryCausal) {
  RunCase({.name = "f16 mqa",
           .batch = 1,
           .q_heads = 6,
           .kv_heads = 1,
           .q_seq = 4,
           .kv_seq = 3,
           .past = 5,
           .attrs = {Attribute::Int("is_causal", 1)},
           .outputs = 1,
           .dtype = DType::kFloat16});
}

TEST(CpuAttentionTest, QkMatmulOutputFallsBackToTheReferenceKernel) {
  RunCase({.name = "qk output", .outputs = 4, .fallbacks = 1});
}

}  // namespace
}  // namespace aic::cpu

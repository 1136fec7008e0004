// QuantizeLinear / DequantizeLinear on the CPU backend's kernels against the
// reference, bit for bit: per tensor and per axis, int8 and uint8, with and
// without zero points, ties (x / s exactly k + 1/2) and saturation, opsets
// 13, 19 and 21.
#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

TEST(QuantizeKernelsTest, QuantizeAndDequantizeMatchTheReferenceBitForBit) {
  struct Case {
    int opset;
    std::vector<int64_t> dims;
    int64_t axis;       // per axis when >= -rank; per tensor: axis ignored, channels 1
    bool per_axis;
    DType qtype;
    bool zero_point;
  };
  std::vector<Case> cases = {{13, {2, 8, 5, 5}, 1, false, DType::kUint8, true},
                             {13, {2, 8, 5, 5}, 1, true, DType::kInt8, true},
                             {13, {4, 6}, 0, true, DType::kInt8, true},
                             {13, {4, 6}, -1, true, DType::kUint8, true},
                             {19, {3, 50}, 1, false, DType::kInt8, true},
                             {21, {2, 3, 7}, 1, true, DType::kUint8, true},
                             {13, {10, 10}, 1, false, DType::kUint8, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("opset ", c.opset, " ", DimsToString(c.dims), c.per_axis ? " per axis " : " per tensor ",
                              DTypeName(c.qtype), c.zero_point ? "" : " no zero point"));
    auto rank = static_cast<int64_t>(c.dims.size());
    int64_t channels = c.per_axis ? c.dims[(c.axis + rank) % rank] : 1;
    Tensor scale(DType::kFloat, c.per_axis ? std::vector<int64_t>{channels} : std::vector<int64_t>{});
    Tensor zero(c.qtype, scale.dims());
    for (int64_t i = 0; i < channels; ++i) {
      scale.mutable_data<float>()[i] = 0.05f * static_cast<float>(i + 1);
      int zp = c.qtype == DType::kUint8 ? 100 + 7 * static_cast<int>(i) : -20 + 5 * static_cast<int>(i);
      if (c.qtype == DType::kUint8) {
        zero.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(zp);
      } else {
        zero.mutable_data<int8_t>()[i] = static_cast<int8_t>(zp);
      }
    }
    // Values at ties (k + 1/2 steps), far beyond the range (saturation), and random.
    Tensor x = RandomF32(c.dims, 9, -20, 20);
    float* xp = x.mutable_data<float>();
    for (int64_t i = 0; i < x.num_elements(); i += 3) xp[i] = 0.05f * (static_cast<float>(i % 17) + 0.5f);
    xp[1] = 1e6f;
    xp[4] = -1e6f;
    GraphBuilder b;
    Value* in = b.Input("x", DType::kFloat, D(c.dims));
    std::vector<Attribute> attrs;
    if (c.per_axis) attrs.push_back(Attribute::Int("axis", c.axis));
    std::vector<Value*> q_in = {in, b.Constant("scale", scale)};
    if (c.zero_point) q_in.push_back(b.Constant("zero", zero));
    Value* q = b.Op("QuantizeLinear", q_in, attrs);
    std::vector<Value*> dq_in = {q, b.Constant("scale2", scale)};
    if (c.zero_point) dq_in.push_back(b.Constant("zero2", zero));
    b.Output(q);
    b.Output(b.Op("DequantizeLinear", dq_in, attrs));
    auto model = b.Build(c.opset);
    std::string plan = RunBoth(*model, {{"x", x}}, 0, 0, 0);
    EXPECT_NE(plan.find("quantize"), std::string::npos) << plan;
    EXPECT_NE(plan.find("dequantize"), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace aic::cpu

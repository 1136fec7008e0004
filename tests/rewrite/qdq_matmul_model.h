// A statically quantized MatMul in QDQ form, as
// onnxruntime.quantization.quantize_static writes a transformer's weight
// products: uint8 activations (x -> Q -> DQ), an int8 weight [K, N] per
// column (axis 1) or per tensor with zero point 0, Q -> DQ after the MatMul.
// Optionally as ONNX Runtime's pre-processing leaves it, Gemm(DQ(a), DQ(w),
// DQ(bias)) with an int32 bias at scale a_scale * w_scale, or activation by
// activation (b a second quantized input, as the attention scores). Shared by the rewrite rule's test and the CPU backend's.
// Header-only.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "graph/builder.h"

namespace aic::testing {

struct QdqMatMulSpec {
  std::vector<int64_t> a_dims = {2, 5, 48};  // [.., M, K]
  int64_t n = 40;
  bool per_column = true;
  float a_scale = 0.03f;
  uint8_t a_zero = 121, y_zero = 118;
  int8_t b_zero = 0;          // quantize_static's weights are symmetric
  bool b_activation = false;  // b a quantized graph input "b" [K, N] instead of a weight
  bool gemm = false;          // Gemm with a quantized int32 bias (a must be 2-D)
  float bias_scale_factor = 1.0f;  // for guard tests: a bias at the wrong scale
  uint32_t seed = 7;
};

// y's quantization step: the product's deviation for uniform operands,
// sqrt(K) * |a - a_zero| * |b| * scales, over about 3 of them.
inline float QdqMatMulYScale(const QdqMatMulSpec& s) {
  double dev = std::sqrt(static_cast<double>(s.a_dims.back())) * 74 * 73 * s.a_scale * 0.006;
  return static_cast<float>(3 * dev / 128);
}

inline std::unique_ptr<Model> BuildQdqMatMul(const QdqMatMulSpec& s) {
  const int64_t k = s.a_dims.back();
  std::mt19937 rng(s.seed);
  Tensor bq(DType::kInt8, {k, s.n});
  std::uniform_int_distribution<int> bd(-127, 127);
  for (int8_t& v : bq.mutable_span<int8_t>()) v = static_cast<int8_t>(bd(rng));
  std::vector<int64_t> scale_dims = s.per_column ? std::vector<int64_t>{s.n} : std::vector<int64_t>{};
  Tensor bs(DType::kFloat, scale_dims), bz(DType::kInt8, scale_dims);
  for (int64_t j = 0; j < bs.num_elements(); ++j) {
    bs.mutable_data<float>()[j] = 0.004f + 0.001f * static_cast<float>(j % 5);
    bz.mutable_data<int8_t>()[j] = s.b_zero;
  }
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, std::vector<Dim>(s.a_dims.begin(), s.a_dims.end()));
  Value* as = b.Constant("as", Tensor::Scalar<float>(s.a_scale));
  Value* az = b.Constant("az", Tensor::Scalar<uint8_t>(s.a_zero));
  Value* adq = b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {x, as, az}), as, az});
  Value* bdq = nullptr;
  if (s.b_activation) {
    Value* bf = b.Input("b", DType::kFloat, {k, s.n});
    Value* bsc = b.Constant("bsc", Tensor::Scalar<float>(0.02f));
    Value* bzp = b.Constant("bzp", Tensor::Scalar<uint8_t>(128));
    bdq = b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {bf, bsc, bzp}), bsc, bzp});
  } else {
    std::vector<Attribute> axis1 = {Attribute::Int("axis", 1)};
    bdq = b.Op("DequantizeLinear", {b.Constant("bq", bq), b.Constant("bs", bs), b.Constant("bz", bz)},
               s.per_column ? axis1 : std::vector<Attribute>{});
  }
  Value* y = nullptr;
  if (s.gemm) {
    Tensor cq(DType::kInt32, {s.n}), cs(DType::kFloat, {s.n}), cz(DType::kInt32, {s.n});
    std::uniform_int_distribution<int> cd(-3000, 3000);
    for (int64_t j = 0; j < s.n; ++j) {
      cq.mutable_data<int32_t>()[j] = cd(rng);
      cs.mutable_data<float>()[j] = s.a_scale * bs.data<float>()[s.per_column ? j : 0] * s.bias_scale_factor;
      cz.mutable_data<int32_t>()[j] = 0;
    }
    Value* cdq = b.Op("DequantizeLinear", {b.Constant("cq", cq), b.Constant("cs", cs), b.Constant("cz", cz)},
                      {Attribute::Int("axis", 0)});
    y = b.Op("Gemm", {adq, bdq, cdq});
  } else {
    y = b.Op("MatMul", {adq, bdq});
  }
  Value* ys = b.Constant("ys", Tensor::Scalar<float>(QdqMatMulYScale(s)));
  Value* yz = b.Constant("yz", Tensor::Scalar<uint8_t>(s.y_zero));
  b.Output(b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {y, ys, yz}), ys, yz}));
  return b.Build(13);
}

}  // namespace aic::testing

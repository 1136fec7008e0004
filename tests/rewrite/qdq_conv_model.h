// A statically quantized convolution in QDQ form, as
// onnxruntime.quantization.quantize_static writes it: uint8 activations
// (x -> Q -> DQ), int8 weights per output channel (or per tensor) with zero
// point 0, an int32 bias at scale x_scale * w_scale, and Q -> DQ after the
// Conv. Shared by the rewrite rule's test and the CPU backend's.
// Header-only.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/builder.h"

namespace aic::testing {

struct QdqConvSpec {
  int64_t n = 1, c = 8, h = 9, w = 9, m = 16, k = 3, group = 1, stride = 1, pad = 1;
  bool per_channel = true;
  bool bias = true;
  float x_scale = 0.02f, y_scale = 0.0f;  // 0: one chosen so that y spans most of uint8
  uint8_t x_zero = 110, y_zero = 97;
  // For guard tests: y's scale a graph input ("ys"), and a bias at the wrong scale.
  bool y_scale_input = false;
  float bias_scale_factor = 1.0f;
  int8_t w_zero = 0;  // quantize_static's weights are symmetric
  uint32_t seed = 5;
};

inline std::unique_ptr<Model> BuildQdqConv(const QdqConvSpec& s) {
  std::mt19937 rng(s.seed);
  int64_t cg = s.c / s.group;
  int64_t wn = s.m * cg * s.k * s.k;
  Tensor wq(DType::kInt8, {s.m, cg, s.k, s.k});
  std::uniform_int_distribution<int> wd(-127, 127);
  for (int64_t i = 0; i < wn; ++i) wq.mutable_data<int8_t>()[i] = static_cast<int8_t>(wd(rng));
  int64_t ns = s.per_channel ? s.m : 1;
  Tensor ws(DType::kFloat, s.per_channel ? std::vector<int64_t>{s.m} : std::vector<int64_t>{});
  Tensor wz(DType::kInt8, ws.dims());
  for (int64_t i = 0; i < ns; ++i) {
    ws.mutable_data<float>()[i] = 0.004f + 0.001f * static_cast<float>(i % 7);
    wz.mutable_data<int8_t>()[i] = s.w_zero;
  }
  Tensor bs(DType::kFloat, {s.m});
  Tensor bq(DType::kInt32, {s.m});
  std::uniform_int_distribution<int> bd(-4000, 4000);
  for (int64_t i = 0; i < s.m; ++i) {
    bs.mutable_data<float>()[i] = s.x_scale * ws.data<float>()[s.per_channel ? i : 0] * s.bias_scale_factor;
    bq.mutable_data<int32_t>()[i] = bd(rng);
  }
  Tensor bz(DType::kInt32, {s.m});
  for (int64_t i = 0; i < s.m; ++i) bz.mutable_data<int32_t>()[i] = 0;
  // |acc| ~ sqrt(K) * 74 * 73 for uniform operands: y's range about 3 such deviations.
  float y_scale = s.y_scale;
  if (y_scale == 0) {
    double dev = std::sqrt(static_cast<double>(cg * s.k * s.k)) * 74 * 73 * s.x_scale * 0.006;
    y_scale = static_cast<float>(3 * dev / 128);
  }
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {s.n, s.c, s.h, s.w});
  Value* xs = b.Constant("xs", Tensor::Scalar<float>(s.x_scale));
  Value* xz = b.Constant("xz", Tensor::Scalar<uint8_t>(s.x_zero));
  Value* xq = b.Op("QuantizeLinear", {x, xs, xz});
  Value* xdq = b.Op("DequantizeLinear", {xq, xs, xz});
  std::vector<Attribute> axis0 = {Attribute::Int("axis", 0)};
  Value* wdq = b.Op("DequantizeLinear", {b.Constant("wq", wq), b.Constant("ws", ws), b.Constant("wz", wz)},
                    s.per_channel ? axis0 : std::vector<Attribute>{});
  std::vector<Value*> conv_in = {xdq, wdq};
  if (s.bias) {
    conv_in.push_back(
        b.Op("DequantizeLinear", {b.Constant("bq", bq), b.Constant("bs", bs), b.Constant("bz", bz)}, axis0));
  }
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {s.k, s.k}),
                                  Attribute::Ints("strides", {s.stride, s.stride}),
                                  Attribute::Ints("pads", {s.pad, s.pad, s.pad, s.pad}),
                                  Attribute::Int("group", s.group)};
  Value* y = b.Op("Conv", conv_in, attrs);
  Value* ys = s.y_scale_input ? b.Input("ys", DType::kFloat, {}) : b.Constant("ys", Tensor::Scalar<float>(y_scale));
  Value* yz = b.Constant("yz", Tensor::Scalar<uint8_t>(s.y_zero));
  Value* yq = b.Op("QuantizeLinear", {y, ys, yz});
  b.Output(b.Op("DequantizeLinear", {yq, ys, yz}));
  return b.Build(13);
}

// y's quantization step in a model from BuildQdqConv (for tolerances).
inline float QdqConvYScale(const QdqConvSpec& s) {
  if (s.y_scale != 0) return s.y_scale;
  int64_t cg = s.c / s.group;
  double dev = std::sqrt(static_cast<double>(cg * s.k * s.k)) * 74 * 73 * s.x_scale * 0.006;
  return static_cast<float>(3 * dev / 128);
}

}  // namespace aic::testing

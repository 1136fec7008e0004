// QLinearConv nodes for the CPU backend's int8 tests: one whose every
// product is exact (power-of-two scales), so oneDNN and the reference kernel
// agree bit for bit, and the scalar constants they take. Header-only.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {

template <typename T>
inline Tensor Scalar(DType t, T v) {
  Tensor s(t, {});
  *static_cast<T*>(s.mutable_raw_data()) = v;
  return s;
}

// acc * x_scale * w_scale / y_scale is exact in f32 and double, and an even
// y zero point keeps ties where they are, so oneDNN and the reference agree
// bit for bit.
inline Value* ExactQLinearConv(GraphBuilder& b, Value* x, const std::string& name, int64_t c, int64_t m, int64_t k,
                               int64_t group, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor w(DType::kInt8, {m, c / group, k, k});
  std::uniform_int_distribution<int> wd(-127, 127);
  for (int8_t& v : w.mutable_span<int8_t>()) v = static_cast<int8_t>(wd(rng));
  Tensor ws(DType::kFloat, {m});
  Tensor wz(DType::kInt8, {m});
  for (int64_t i = 0; i < m; ++i) {
    ws.mutable_data<float>()[i] = std::ldexp(1.0f, -7 - static_cast<int>(i % 3));
    wz.mutable_data<int8_t>()[i] = 0;
  }
  float ys = std::ldexp(1.0f, group == 1 ? 4 : 2);
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {k, k}),
                                  Attribute::Ints("pads", {k / 2, k / 2, k / 2, k / 2}),
                                  Attribute::Int("group", group)};
  return b.Op("QLinearConv",
              {x, b.Constant(name + "_xs", Scalar<float>(DType::kFloat, 1.0f)),
               b.Constant(name + "_xz", Scalar<uint8_t>(DType::kUint8, 128)), b.Constant(name + "_w", w),
               b.Constant(name + "_ws", ws), b.Constant(name + "_wz", wz),
               b.Constant(name + "_ys", Scalar<float>(DType::kFloat, ys)),
               b.Constant(name + "_yz", Scalar<uint8_t>(DType::kUint8, 128)),
               b.Constant(name + "_b", RandomInts<int32_t>({m}, seed, -3000, 3000))},
              attrs);
}

}  // namespace aic::cpu

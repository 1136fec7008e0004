// log(x) in f32 as straight-line arithmetic the compiler vectorizes (no
// branches, no libm call), for Log and the ops built on it. x = m·2^e with
// m in [√½, √2); log(x) = e·ln2 + log1p(m - 1), the latter by Cephes' logf
// polynomial; ln2 is split in two (0.693359375 exactly representable, plus
// the remainder) so e·ln2 adds no rounding. Subnormals are scaled by 2^23
// first. Special values as libm: log(0) = -inf, log(<0) = NaN, log(inf) = inf.
// Max error against double log: 2 ulp (tests/exec/cpu/native_kernels_test.cc).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace aic::cpu::kernels {

inline float LogApprox(float v) {
  bool subnormal = v < 1.17549435e-38f;
  float a = subnormal ? v * 8388608.0f : v;  // 2^23
  auto bits = std::bit_cast<uint32_t>(a);
  auto e = static_cast<int32_t>((bits >> 23) & 0xffu) - 126 - (subnormal ? 23 : 0);
  auto m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);  // mantissa in [0.5, 1)
  bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  float x = low ? m + m - 1.0f : m - 1.0f;
  float z = x * x;
  float p = 7.0376836292e-2f;
  p = p * x - 1.1514610310e-1f;
  p = p * x + 1.1676998740e-1f;
  p = p * x - 1.2420140846e-1f;
  p = p * x + 1.4249322787e-1f;
  p = p * x - 1.6668057665e-1f;
  p = p * x + 2.0000714765e-1f;
  p = p * x - 2.4999993993e-1f;
  p = p * x + 3.3333331174e-1f;
  float fe = static_cast<float>(e);
  float y = p * x * z;
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  float r = x + y;
  r += 0.693359375f * fe;
  r = v == std::numeric_limits<float>::infinity() ? v : r;
  r = v == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  r = (v < 0.0f || v != v) ? std::numeric_limits<float>::quiet_NaN() : r;
  return r;
}

}  // namespace aic::cpu::kernels

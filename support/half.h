// IEEE half (float16) and bfloat16 conversions, bit-exact with round-to-nearest-even,
// as numpy and ONNX Runtime do them.
#pragma once

#include <cstdint>
#include <cstring>

namespace aic {

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

inline float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace aic

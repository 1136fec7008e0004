// IEEE half (float16) and bfloat16 conversions, bit-exact with round-to-nearest-even,
// as numpy and ONNX Runtime do them.
#pragma once

#include <bit>
#include <cstdint>

namespace aic {

// Straight-line integer arithmetic with selects (no branches, no loops), so
// loops over arrays vectorize (exec/cpu/kernels/cast.cc) and the reference
// shares the very same rounding. NaN keeps its payload going to float and
// becomes the quiet NaN 0x7e00 (with its sign) going to half.
inline float HalfToFloat(uint16_t h) {
  uint32_t o = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa in place
  uint32_t exp = o & 0x0f800000u;
  o += 0x38000000u;  // rebias the exponent: (127 - 15) << 23
  uint32_t inf_nan = o + 0x38000000u;  // exponent 31 -> 255
  // Zero and subnormals: let the FPU normalize m·2^-24 (subtracting 2^-14's bias).
  float denorm = std::bit_cast<float>(o + 0x00800000u) - 6.10351562e-05f;  // 2^-14
  uint32_t bits = exp == 0x0f800000u ? inf_nan : (exp == 0 ? std::bit_cast<uint32_t>(denorm) : o);
  bits |= static_cast<uint32_t>(h & 0x8000u) << 16;
  return std::bit_cast<float>(bits);
}

inline uint16_t FloatToHalf(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t abs = bits & 0x7fffffffu;
  uint32_t special = abs > 0x7f800000u ? 0x7e00u : 0x7c00u;  // NaN, or overflow to inf
  // Subnormal results: adding 0.5 (2^-1) aligns the mantissa so the FPU's own
  // round-to-nearest-even does the rounding; the low bits are the half.
  uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(abs) + 0.5f) - 0x3f000000u;
  // Normal results: round the 13 dropped bits to nearest even, rebias.
  uint32_t normal = (abs + 0xc8000fffu + ((abs >> 13) & 1u)) >> 13;  // - (112 << 23) + 0xfff
  uint32_t out = abs >= 0x47800000u ? special : (abs < 0x38800000u ? subnormal : normal);
  return static_cast<uint16_t>(out | sign);
}

inline float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// float -> bfloat16 by dropping the low 16 bits: what Cast does (the ONNX
// 1.12 suite's test_cast_FLOAT_to_BFLOAT16 expects truncation, not rounding),
// on the reference and on the CPU backend alike.
inline uint16_t TruncateToBFloat16(float f) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16); }

}  // namespace aic

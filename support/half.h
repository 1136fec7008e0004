// IEEE half (float16) and bfloat16 conversions, bit-exact with round-to-nearest-even,
// as numpy and ONNX Runtime do them.
#pragma once

#include <cstdint>
#include <cstring>

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
  uint32_t denorm_bits = o + 0x00800000u;
  float denorm;
  std::memcpy(&denorm, &denorm_bits, sizeof denorm);
  denorm -= 6.10351562e-05f;  // 2^-14
  uint32_t denorm_out;
  std::memcpy(&denorm_out, &denorm, sizeof denorm_out);
  uint32_t bits = exp == 0x0f800000u ? inf_nan : (exp == 0 ? denorm_out : o);
  bits |= static_cast<uint32_t>(h & 0x8000u) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t abs = bits & 0x7fffffffu;
  uint32_t special = abs > 0x7f800000u ? 0x7e00u : 0x7c00u;  // NaN, or overflow to inf
  // Subnormal results: adding 0.5 (2^-1) aligns the mantissa so the FPU's own
  // round-to-nearest-even does the rounding; the low bits are the half.
  float mag;
  std::memcpy(&mag, &abs, sizeof mag);
  float aligned = mag + 0.5f;
  uint32_t aligned_bits;
  std::memcpy(&aligned_bits, &aligned, sizeof aligned_bits);
  uint32_t subnormal = aligned_bits - 0x3f000000u;
  // Normal results: round the 13 dropped bits to nearest even, rebias.
  uint32_t normal = (abs + 0xc8000fffu + ((abs >> 13) & 1u)) >> 13;  // - (112 << 23) + 0xfff
  uint32_t out = abs >= 0x47800000u ? special : (abs < 0x38800000u ? subnormal : normal);
  return static_cast<uint16_t>(out | sign);
}

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

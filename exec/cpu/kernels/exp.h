// e^x in f32 as straight-line arithmetic the compiler vectorizes (no
// branches, no libm call), for the kernels that need exp inside a loop of
// their own (softmax along an outer axis). x = n·ln2 + r with n = round(x·log2
// e) and |r| <= ln2/2 (ln2 split in two so n·ln2 adds no rounding); e^r by
// Cephes' expf polynomial; 2^n assembled in the exponent bits. Results
// below 2^-126 flush to 0 (x < -87.3), above FLT_MAX give inf. Max error
// against double exp: 2 ulp (tests/exec/cpu/half_and_log_test.cc).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace aic::cpu::kernels {

inline float ExpApprox(float x) {
  // An input that underflows computes e^0 and is replaced by 0 below: clamped
  // to -87.34 it made a subnormal product first, which costs a microcode
  // assist per lane (masked attention rows of -1e4: 0.7 ms of 6.5).
  float c = x < -87.3365447f ? 0.0f : (x > 88.7228394f ? 88.7228394f : x);
  // Round to nearest by adding and removing 1.5·2^23.
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  // 2^n for n in [-126, 128]: n = 128 (x near the top) as 2 * 2^127.
  auto e = static_cast<int32_t>(n);
  bool top = e > 127;
  auto scale = std::bit_cast<float>(static_cast<uint32_t>((top ? 127 : e) + 127) << 23);
  y = y * scale * (top ? 2.0f : 1.0f);
  y = x < -87.3365447f ? 0.0f : y;
  y = x > 88.7228394f ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

}  // namespace aic::cpu::kernels

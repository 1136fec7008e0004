// erf(x) in f32 as straight-line arithmetic the compiler vectorizes (no
// branches, no libm call): x·P(x²) on |x| <= 1 (P fitted to erf(x)/x), a
// polynomial in |x| on [1, 4], ±1 beyond (erf(3.92) rounds
// to 1 in f32). Both pieces are evaluated and one is selected. Max error
// against double erf: 2e-7 relative (tests/exec/cpu/native_kernels_test.cc
// checks a dense grid). Coefficients: least-squares / Chebyshev fits in double.
#pragma once

#include <cmath>

namespace aic::cpu::kernels {

inline float ErfApprox(float x) {
  float ax = std::fabs(x);
  // |x| <= 1: erf(x) = x * P(x^2).
  float t = ax * ax;
  float p = -5.654105860e-04f;
  p = p * t + 4.923277665e-03f;
  p = p * t + -2.671638510e-02f;
  p = p * t + 1.128036441e-01f;
  p = p * t + -3.761234978e-01f;
  p = p * t + 1.128379127e+00f;
  float small = ax * p;
  // 1 < |x| <= 4: Q(u), u = (|x| - 2.5) / 1.5 in [-1, 1] (a Chebyshev fit
  // turned into monomials: their magnitudes sum to 1.2, so Horner in f32 is
  // as accurate as the Chebyshev sum).
  float u = ((ax < 4.0f ? ax : 4.0f) - 2.5f) * (1.0f / 1.5f);
  float q = -1.194982317e-03f;
  q = q * u + 1.861182085e-03f;
  q = q * u + 3.620876867e-03f;
  q = q * u + -1.082422907e-02f;
  q = q * u + 7.264675809e-03f;
  q = q * u + 9.837520727e-03f;
  q = q * u + -3.205092187e-02f;
  q = q * u + 4.631028340e-02f;
  q = q * u + -4.362873199e-02f;
  q = q * u + 2.819797163e-02f;
  q = q * u + -1.225363939e-02f;
  q = q * u + 3.266861136e-03f;
  q = q * u + 9.995930480e-01f;
  float large = q;
  float r = ax <= 1.0f ? small : large;
  r = ax >= 4.0f || r > 1.0f ? 1.0f : r;  // exactly ±1 in the tails
  r = ax != ax ? ax : r;  // NaN stays NaN
  return x < 0.0f ? -r : r;
}

}  // namespace aic::cpu::kernels

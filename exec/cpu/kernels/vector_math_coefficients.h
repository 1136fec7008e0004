// The fitted constants the vector math forms share (vector_math_avx512.h,
// vector_math_avx2.h), so the 16- and 8-lane functions are one fit each.
#pragma once

namespace aic::cpu::kernels::vector_math {

// e^r on |r| <= ln2/2 as 1 + r + r²·P(r): Cephes' expf polynomial P, highest
// power first.
inline constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                     4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
// e^r in double on |r| <= ln2/2 as 1 + r + r²·P(r), P the Taylor series
// 1/k! for k = 13 down to 2 (the remainder is under 1e-17 relative).
inline constexpr double kExpTaylor[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                        1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,
                                        1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,        0.5};
// ln2 in two parts: 0.693359375 is exact in float, so n·kLn2High adds no rounding.
inline constexpr float kLn2High = 0.693359375f;
inline constexpr float kLn2Low = -2.12194440e-4f;

// log(1 + f) on f = m - 1, m in [√½, √2), as f - f²/2 + f³·P(f): Cephes'
// logf polynomial P, highest power first.
inline constexpr float kLogPoly[] = {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                                     -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                                     2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};

// tanh |x| = a·P(a²)/Q(a²) with a = min(|x|, kTanhClamp): the minimax fit
// Eigen uses, highest power first, except that Q's constant term is P's
// (Eigen's is 1.3e-7 larger), so P/Q is exactly 1 where a² underflows and a
// tiny x comes out as itself with no compare. At the clamp 9 the fit rounds
// to exactly 1 (tanh rounds to 1 from 9.01 on), so no compare there either;
// between 7.9 (Eigen's clamp) and 9 it is at most 2.6 of float's spacing at 1
// off (the test). Two compares and blends fewer took a Zen 3 from 0.045 to
// 0.034 ms on 98304 floats: the loop is bound by the FMA pipes.
inline constexpr float kTanhClamp = 9.0f;
inline constexpr float kTanhP[] = {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
                                   5.12229709037114e-08f,  1.48572235717979e-05f, 6.37261928875436e-04f,
                                   4.89352455891786e-03f};
inline constexpr float kTanhQ[] = {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                   4.89352455891786e-03f};

}  // namespace aic::cpu::kernels::vector_math

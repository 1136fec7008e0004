// y[i] = table[x[i]] over bytes: ai.aic QLinearLookup, an elementwise function
// of an 8-bit tensor tabulated at compile time (rewrite/rules/quantized_rules.cc).
// An int8 x indexes table[x + 128], which is the byte x ^ 0x80.
//
// Why not a plain loop: one byte load per element leaves a 200K-element
// MobileNet activation at ~60 µs; with AVX-512 VBMI two vpermi2b look up 64
// bytes in the two halves of the table and a blend on the index's top bit
// picks one, about 20× faster. Elsewhere the plain loop runs.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

void LookupBytes(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, bool signed_index);

}  // namespace aic::cpu::kernels

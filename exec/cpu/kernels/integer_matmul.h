// The integer pieces around MatMulInteger's oneDNN product (the lowering,
// exec/cpu/ops_native_integer.cc, has oneDNN compute S = A·B' in s32 with
// B' = B as int8, uint8 B shifted by -128): zero points applied exactly
// afterwards,
//   C = (A - a_zp)·(B' - b_zp') = S - a_zp·colsum(B') - b_zp'·(rowsum(A) - K·a_zp),
// with b_zp' = b_zp - 128 for uint8 B. Arithmetic wraps modulo 2^32 (in
// uint32), so C is exact whenever the true product fits in int32, and wraps
// as the reference's int64 -> int32 conversion does when it does not.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// How the zero points apply to the rows x n product S.
struct IntegerMatMulFixup {
  int64_t rows = 0;  // all rows of A (leading dims folded)
  int64_t m = 1;     // rows per matrix: a per-row a_zp has m entries, row r takes entry r % m
  int64_t k = 0;
  int64_t n = 0;
  // a_zp: null (none), one value, or m values; uint8 or int8 (a_signed).
  const void* a_zero = nullptr;
  bool a_signed = false;
  bool a_per_row = false;
  // colsum(B') and b_zp' per column (n each); b_zero null when every b_zp' is 0
  // (rowsum(A) is then not needed).
  const int32_t* col_sums = nullptr;
  const int32_t* b_zero = nullptr;
  // A's bytes (rows x k), read for its row sums when b_zero is set.
  const void* a = nullptr;
};

// c (rows x n) holds S on entry and C on return.
void ApplyZeroPoints(const IntegerMatMulFixup& f, int32_t* c);
// As ApplyZeroPoints, then y = f32(C) * scale (a runtime scalar), the
// MatMulInteger -> Cast -> Mul chain of dynamically quantized models, with
// the rounding of each of those ops.
void ApplyZeroPointsScaled(const IntegerMatMulFixup& f, const int32_t* s, float scale, float* y);

// bias[j] = -a_zp·col_sums[j] (wrapping), a_zp one int8 (a_signed) or uint8
// value: the zero point folded into a bias of the raw product.
void ZeroPointBias(const void* a_zero, bool a_signed, const int32_t* col_sums, int64_t n, int32_t* bias);
// colsum over the k rows of a k x n int8 matrix.
void ColumnSums(const int8_t* b, int64_t k, int64_t n, int32_t* sums);
// uint8 -> int8 by subtracting 128 (flipping the top bit).
void ShiftToSigned(const uint8_t* x, int64_t count, int8_t* y);

}  // namespace aic::cpu::kernels

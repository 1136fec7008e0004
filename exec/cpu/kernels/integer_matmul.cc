// Row by row: the row sum of A (when a b zero point needs it), then one
// vectorized pass over the row's columns; rows are spread over threads.
#include "exec/cpu/kernels/integer_matmul.h"

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

template <typename T>
AIC_KERNEL_CLONES uint32_t RowSum(const T* a, int64_t k) {
  int32_t sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < k; ++i) sum += a[i];
  return static_cast<uint32_t>(sum);
}

uint32_t AZeroOf(const IntegerMatMulFixup& f, int64_t row) {
  if (f.a_zero == nullptr) return 0;
  int64_t i = f.a_per_row ? row % f.m : 0;
  int32_t z = f.a_signed ? static_cast<const int8_t*>(f.a_zero)[i] : static_cast<const uint8_t*>(f.a_zero)[i];
  return static_cast<uint32_t>(z);
}

// The row's a_zp and t = rowsum(A) - K·a_zp (0 when no b zero point reads it).
void RowTerms(const IntegerMatMulFixup& f, int64_t row, uint32_t* az, uint32_t* t) {
  *az = AZeroOf(f, row);
  *t = 0;
  if (f.b_zero == nullptr) return;
  uint32_t rs = f.a_signed ? RowSum(static_cast<const int8_t*>(f.a) + row * f.k, f.k)
                           : RowSum(static_cast<const uint8_t*>(f.a) + row * f.k, f.k);
  *t = rs - static_cast<uint32_t>(f.k) * *az;
}

AIC_KERNEL_CLONES void FixRow(const int32_t* s, const int32_t* cs, const int32_t* bz, uint32_t az, uint32_t t,
                              int64_t n, int32_t* c) {
  if (bz == nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      c[j] = static_cast<int32_t>(static_cast<uint32_t>(s[j]) - az * static_cast<uint32_t>(cs[j]));
    }
    return;
  }
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    c[j] = static_cast<int32_t>(static_cast<uint32_t>(s[j]) - az * static_cast<uint32_t>(cs[j]) -
                                t * static_cast<uint32_t>(bz[j]));
  }
}

AIC_KERNEL_CLONES void FixRowScaled(const int32_t* s, const int32_t* cs, const int32_t* bz, uint32_t az, uint32_t t,
                                    int64_t n, float scale, float* y) {
  if (bz == nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      auto c = static_cast<int32_t>(static_cast<uint32_t>(s[j]) - az * static_cast<uint32_t>(cs[j]));
      y[j] = static_cast<float>(c) * scale;
    }
    return;
  }
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    auto c = static_cast<int32_t>(static_cast<uint32_t>(s[j]) - az * static_cast<uint32_t>(cs[j]) -
                                  t * static_cast<uint32_t>(bz[j]));
    y[j] = static_cast<float>(c) * scale;
  }
}

}  // namespace

void ApplyZeroPoints(const IntegerMatMulFixup& f, int32_t* c) {
  ParallelFor(f.rows, f.n, [&](int64_t r) {
    uint32_t az, t;
    RowTerms(f, r, &az, &t);
    FixRow(c + r * f.n, f.col_sums, f.b_zero, az, t, f.n, c + r * f.n);
  });
}

void ApplyZeroPointsScaled(const IntegerMatMulFixup& f, const int32_t* s, float scale, float* y) {
  ParallelFor(f.rows, f.n, [&](int64_t r) {
    uint32_t az, t;
    RowTerms(f, r, &az, &t);
    FixRowScaled(s + r * f.n, f.col_sums, f.b_zero, az, t, f.n, scale, y + r * f.n);
  });
}

void ZeroPointBias(const void* a_zero, bool a_signed, const int32_t* col_sums, int64_t n, int32_t* bias) {
  IntegerMatMulFixup f;
  f.a_zero = a_zero;
  f.a_signed = a_signed;
  uint32_t az = AZeroOf(f, 0);
  for (int64_t j = 0; j < n; ++j) bias[j] = static_cast<int32_t>(0u - az * static_cast<uint32_t>(col_sums[j]));
}

AIC_KERNEL_CLONES void ColumnSums(const int8_t* b, int64_t k, int64_t n, int32_t* sums) {
  for (int64_t j = 0; j < n; ++j) sums[j] = 0;
  for (int64_t i = 0; i < k; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) sums[j] += b[i * n + j];
  }
}

AIC_KERNEL_CLONES void ShiftToSigned(const uint8_t* x, int64_t count, int8_t* y) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) y[i] = static_cast<int8_t>(x[i] ^ 0x80u);
}

}  // namespace aic::cpu::kernels

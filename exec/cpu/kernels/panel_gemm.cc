// Panels of 16 columns, each k-major: a tile of up to four rows of A times
// one panel keeps 8 accumulators in registers and reads each panel row
// (two vectors) once per 4 rows. One or two rows (a single sequence) split
// k into even and odd halves so 4 independent FMA chains hide the FMA
// latency. Every loop over rows and halves is unrolled (GCC pragmas) so the
// accumulator arrays live in registers: rolled, they went through the stack
// and the kernel ran at a third of oneDNN's speed.
#include "exec/cpu/kernels/panel_gemm.h"

#include <algorithm>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kP = PanelMatrix::kPanel;

// Writes the tile's first `cols` columns: all 16 straight from registers.
#ifdef AIC_HAVE_AVX2_MATH
AIC_AVX2 inline void StoreRow(float* c, __m256 lo, __m256 hi, int64_t cols) {
  if (cols == kP) {
    _mm256_storeu_ps(c, lo);
    _mm256_storeu_ps(c + 8, hi);
    return;
  }
  alignas(32) float buf[kP];
  _mm256_store_ps(buf, lo);
  _mm256_store_ps(buf + 8, hi);
  std::copy(buf, buf + cols, c);
}

template <int kRows>
AIC_AVX2 void TileAvx2(const float* a, int64_t lda, const float* panel, int64_t k, float* c, int64_t ldc,
                       int64_t cols) {
  constexpr int kSets = kRows <= 2 ? 2 : 1;  // k split in kSets interleaved halves
  __m256 acc[kSets][kRows][2];
#pragma GCC unroll 4
  for (int s = 0; s < kSets; ++s) {
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) acc[s][r][0] = acc[s][r][1] = _mm256_setzero_ps();
  }
  int64_t p = 0;
  for (; p + kSets <= k; p += kSets) {
#pragma GCC unroll 4
    for (int s = 0; s < kSets; ++s) {
      const __m256 b0 = _mm256_loadu_ps(panel + (p + s) * kP);
      const __m256 b1 = _mm256_loadu_ps(panel + (p + s) * kP + 8);
    #pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + r * lda + p + s);
        acc[s][r][0] = _mm256_fmadd_ps(av, b0, acc[s][r][0]);
        acc[s][r][1] = _mm256_fmadd_ps(av, b1, acc[s][r][1]);
      }
    }
  }
  for (; p < k; ++p) {
    const __m256 b0 = _mm256_loadu_ps(panel + p * kP);
    const __m256 b1 = _mm256_loadu_ps(panel + p * kP + 8);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      acc[0][r][0] = _mm256_fmadd_ps(av, b0, acc[0][r][0]);
      acc[0][r][1] = _mm256_fmadd_ps(av, b1, acc[0][r][1]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    __m256 lo = acc[0][r][0], hi = acc[0][r][1];
    if (kSets == 2) {
      lo = _mm256_add_ps(lo, acc[kSets - 1][r][0]);
      hi = _mm256_add_ps(hi, acc[kSets - 1][r][1]);
    }
    StoreRow(c + r * ldc, lo, hi, cols);
  }
}

AIC_AVX2 void PanelAvx2(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, float* c, int64_t ldc,
                        int64_t cols) {
  int64_t r = 0;
  for (; r + 4 <= m; r += 4) TileAvx2<4>(a + r * lda, lda, panel, k, c + r * ldc, ldc, cols);
  switch (m - r) {
    case 3: TileAvx2<3>(a + r * lda, lda, panel, k, c + r * ldc, ldc, cols); break;
    case 2: TileAvx2<2>(a + r * lda, lda, panel, k, c + r * ldc, ldc, cols); break;
    case 1: TileAvx2<1>(a + r * lda, lda, panel, k, c + r * ldc, ldc, cols); break;
    default: break;
  }
}
#endif

// Without AVX2 and FMA: the same panel order, one row at a time.
AIC_KERNEL_CLONES void PanelPortable(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, float* c,
                                     int64_t ldc, int64_t cols) {
  for (int64_t r = 0; r < m; ++r) {
    float acc[kP] = {};
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[r * lda + p];
#pragma omp simd
      for (int64_t j = 0; j < kP; ++j) acc[j] += av * panel[p * kP + j];
    }
    std::copy(acc, acc + cols, c + r * ldc);
  }
}

}  // namespace

PanelMatrix::PanelMatrix(const float* bt, int64_t n, int64_t k, int64_t ldbt)
    : n_(n), k_(k), panels_((n + kP - 1) / kP), packed_(static_cast<size_t>(panels_ * k * kP), 0.0f) {
  for (int64_t j = 0; j < n; ++j) {
    float* panel = packed_.data() + (j / kP) * k * kP + j % kP;
    for (int64_t p = 0; p < k; ++p) panel[p * kP] = bt[j * ldbt + p];
  }
}

void PanelMatrix::Multiply(const float* a, int64_t m, int64_t lda, float* c, int64_t ldc, bool threaded) const {
  if (m <= 0 || n_ <= 0) return;
  if (k_ == 0) {
    for (int64_t r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + n_, 0.0f);
    return;
  }
  ParallelFor(panels_, threaded ? m * k_ * kP : 0, [&](int64_t q) {
    const float* panel = packed_.data() + q * k_ * kP;
    const int64_t cols = std::min(kP, n_ - q * kP);
#ifdef AIC_HAVE_AVX2_MATH
    if (avx2::HaveAvx2Fma()) return PanelAvx2(a, m, lda, panel, k_, c + q * kP, ldc, cols);
#endif
    PanelPortable(a, m, lda, panel, k_, c + q * kP, ldc, cols);
  });
}

}  // namespace aic::cpu::kernels

// Column panels read as one stream each: a panel is k rows of `width`
// columns, contiguous, so a tile of m (<= 4) rows of A times one panel keeps
// m x 4 vector accumulators in registers and walks the panel's bytes once,
// front to back, which the hardware prefetcher follows. Four accumulators a
// row are four independent FMA chains, enough to hide the FMA latency at one
// row; the loads, not the FMAs, bound it. Loops over rows and vectors are
// unrolled by template (rolled, arrays of vectors spill to the stack).
#include "exec/cpu/kernels/gemv.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

// Four vectors a panel row: 64 floats with AVX-512, 32 with AVX2.
constexpr int kVectors = 4;

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
template <int kRows>
AIC_AVX512 void TileAvx512(const float* a, int64_t lda, const float* panel, int64_t k, const float* bias, float* c,
                           int64_t ldc, int64_t cols) {
  constexpr int64_t kW = 16 * kVectors;
  __m512 acc[kRows][kVectors];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* row = panel + p * kW;
    __m512 b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = _mm512_load_ps(row + 16 * v);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(av, b[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    const int64_t left = cols - 16 * v;
    if (left <= 0) break;
    const __mmask16 mask = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 bv = bias != nullptr ? _mm512_maskz_loadu_ps(mask, bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask, _mm512_add_ps(acc[r][v], bv));
  }
}
AIC_AVX512_END

void PanelAvx512(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, const float* bias, float* c,
                 int64_t ldc, int64_t cols) {
  switch (m) {
    case 4: return TileAvx512<4>(a, lda, panel, k, bias, c, ldc, cols);
    case 3: return TileAvx512<3>(a, lda, panel, k, bias, c, ldc, cols);
    case 2: return TileAvx512<2>(a, lda, panel, k, bias, c, ldc, cols);
    default: return TileAvx512<1>(a, lda, panel, k, bias, c, ldc, cols);
  }
}
#endif

#ifdef AIC_HAVE_AVX2_MATH
template <int kRows>
AIC_AVX2 void TileAvx2(const float* a, int64_t lda, const float* panel, int64_t k, const float* bias, float* c,
                       int64_t ldc, int64_t cols) {
  constexpr int64_t kW = 8 * kVectors;
  __m256 acc[kRows][kVectors];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* row = panel + p * kW;
    __m256 b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = _mm256_load_ps(row + 8 * v);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm256_fmadd_ps(av, b[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    alignas(32) float out[kW];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) _mm256_store_ps(out + 8 * v, acc[r][v]);
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = out[j] + (bias != nullptr ? bias[j] : 0.0f);
  }
}

void PanelAvx2(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, const float* bias, float* c,
               int64_t ldc, int64_t cols) {
  switch (m) {
    case 4: return TileAvx2<4>(a, lda, panel, k, bias, c, ldc, cols);
    case 3: return TileAvx2<3>(a, lda, panel, k, bias, c, ldc, cols);
    case 2: return TileAvx2<2>(a, lda, panel, k, bias, c, ldc, cols);
    default: return TileAvx2<1>(a, lda, panel, k, bias, c, ldc, cols);
  }
}
#endif

// Without AVX2 and FMA: the same panel order, one row at a time.
AIC_KERNEL_CLONES void PanelPortable(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k,
                                     const float* bias, float* c, int64_t ldc, int64_t cols, int64_t width) {
  float acc[64];
  for (int64_t r = 0; r < m; ++r) {
    std::fill(acc, acc + width, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[r * lda + p];
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) acc[j] += av * panel[p * width + j];
    }
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = acc[j] + (bias != nullptr ? bias[j] : 0.0f);
  }
}

std::atomic<int> forced_form{0};

int64_t PanelWidthForThisCpu() {
  const int form = forced_form.load(std::memory_order_relaxed);
  if (form == 0 && avx512::HaveAvx512()) return 16 * kVectors;
  if (form <= 1 && avx2::HaveAvx2Fma()) return 8 * kVectors;
  return 16;
}

}  // namespace

GemvMatrix::GemvMatrix(const float* w, int64_t k, int64_t n, int64_t ld, bool transposed, float scale)
    : k_(k), n_(n), width_(PanelWidthForThisCpu()), panels_((n + width_ - 1) / width_) {
  const size_t count = static_cast<size_t>(std::max<int64_t>(panels_ * k * width_, 1));
  // 64-byte aligned: a panel row is whole cache lines, read by aligned loads.
  packed_.reset(static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)));
  std::memset(packed_.get(), 0, count * sizeof(float));
  for (int64_t q = 0; q < panels_; ++q) {
    float* panel = packed_.get() + q * k * width_;
    const int64_t cols = std::min(width_, n - q * width_);
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t col = q * width_ + j;
        panel[p * width_ + j] = scale * (transposed ? w[col * ld + p] : w[p * ld + col]);
      }
    }
  }
}

int ForceGemvForm(int form) { return forced_form.exchange(form); }

void GemvMatrix::Unpack(float* w, int64_t ld, bool transposed) const {
  for (int64_t col = 0; col < n_; ++col) {
    const float* panel = packed_.get() + (col / width_) * k_ * width_ + col % width_;
    for (int64_t p = 0; p < k_; ++p) (transposed ? w[col * ld + p] : w[p * ld + col]) = panel[p * width_];
  }
}

void GemvMatrix::Multiply(const float* a, int64_t m, int64_t lda, const float* bias, float* c, int64_t ldc,
                          bool threaded) const {
  if (m <= 0 || n_ <= 0) return;
  ParallelFor(panels_, threaded ? m * k_ * width_ : 0, [&](int64_t q) {
    const float* panel = packed_.get() + q * k_ * width_;
    const int64_t cols = std::min(width_, n_ - q * width_);
    const float* panel_bias = bias != nullptr ? bias + q * width_ : nullptr;
    float* out = c + q * width_;
    for (int64_t r = 0; r < m; r += kMaxRows) {
      const int64_t rows = std::min(kMaxRows, m - r);
#ifdef AIC_HAVE_AVX512_MATH
      if (width_ == 16 * kVectors) {
        PanelAvx512(a + r * lda, rows, lda, panel, k_, panel_bias, out + r * ldc, ldc, cols);
        continue;
      }
#endif
#ifdef AIC_HAVE_AVX2_MATH
      if (width_ == 8 * kVectors) {
        PanelAvx2(a + r * lda, rows, lda, panel, k_, panel_bias, out + r * ldc, ldc, cols);
        continue;
      }
#endif
      PanelPortable(a + r * lda, rows, lda, panel, k_, panel_bias, out + r * ldc, ldc, cols, width_);
    }
  });
}

}  // namespace aic::cpu::kernels

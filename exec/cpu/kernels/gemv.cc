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

// A panel's rows as vectors, for the tiles below: float panels are loaded,
// 8-bit ones widened and dequantized as DequantizeLinear does, (float(q) -
// zero) · scale, with the panel's column scales and zeros held in registers.
#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
struct FloatRows512 {
  const float* panel;
  AIC_AVX512 __m512 Get(int64_t p, int v) const { return _mm512_load_ps(panel + p * 64 + 16 * v); }
};

template <bool kSigned, bool kZeros>
struct QuantizedRows512 {
  const uint8_t* panel;
  __m512 scale[kVectors];
  __m512i zero[kVectors];
  AIC_AVX512 QuantizedRows512(const void* p, const float* scales, const int32_t* zeros)
      : panel(static_cast<const uint8_t*>(p)) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      scale[v] = _mm512_loadu_ps(scales + 16 * v);
      zero[v] = _mm512_loadu_si512(zeros + 16 * v);
    }
  }
  AIC_AVX512 __m512 Get(int64_t p, int v) const {
    const __m128i bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(panel + p * 64 + 16 * v));
    __m512i q = kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
    if (kZeros) q = _mm512_sub_epi32(q, zero[v]);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(q), scale[v]);
  }
};

template <int kRows, class Rows>
AIC_AVX512 void TileAvx512(const float* a, int64_t lda, const Rows& rows, int64_t k, const float* bias, float* c,
                           int64_t ldc, int64_t cols) {
  __m512 acc[kRows][kVectors];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    __m512 b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = rows.Get(p, v);
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

template <class Rows>
AIC_AVX512 void RowsAvx512(const float* a, int64_t m, int64_t lda, const Rows& rows, int64_t k, const float* bias,
                           float* c, int64_t ldc, int64_t cols) {
  switch (m) {
    case 4: return TileAvx512<4>(a, lda, rows, k, bias, c, ldc, cols);
    case 3: return TileAvx512<3>(a, lda, rows, k, bias, c, ldc, cols);
    case 2: return TileAvx512<2>(a, lda, rows, k, bias, c, ldc, cols);
    default: return TileAvx512<1>(a, lda, rows, k, bias, c, ldc, cols);
  }
}

template <bool kSigned, bool kZeros>
AIC_AVX512 void QuantizedAvx512(const float* a, int64_t m, int64_t lda, const void* panel, const float* scales,
                                const int32_t* zeros, int64_t k, const float* bias, float* c, int64_t ldc,
                                int64_t cols) {
  RowsAvx512(a, m, lda, QuantizedRows512<kSigned, kZeros>(panel, scales, zeros), k, bias, c, ldc, cols);
}
AIC_AVX512_END

void PanelAvx512(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, const float* bias, float* c,
                 int64_t ldc, int64_t cols) {
  RowsAvx512(a, m, lda, FloatRows512{panel}, k, bias, c, ldc, cols);
}

void QuantizedPanelAvx512(const float* a, int64_t m, int64_t lda, const void* panel, bool is_signed, bool zeros_zero,
                          const float* scales, const int32_t* zeros, int64_t k, const float* bias, float* c,
                          int64_t ldc, int64_t cols) {
  if (is_signed) {
    return zeros_zero ? QuantizedAvx512<true, false>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols)
                      : QuantizedAvx512<true, true>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols);
  }
  return zeros_zero ? QuantizedAvx512<false, false>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols)
                    : QuantizedAvx512<false, true>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols);
}
#endif

#ifdef AIC_HAVE_AVX2_MATH
struct FloatRows256 {
  const float* panel;
  AIC_AVX2 __m256 Get(int64_t p, int v) const { return _mm256_load_ps(panel + p * 32 + 8 * v); }
};

template <bool kSigned, bool kZeros>
struct QuantizedRows256 {
  const uint8_t* panel;
  __m256 scale[kVectors];
  __m256i zero[kVectors];
  AIC_AVX2 QuantizedRows256(const void* p, const float* scales, const int32_t* zeros)
      : panel(static_cast<const uint8_t*>(p)) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      scale[v] = _mm256_loadu_ps(scales + 8 * v);
      zero[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zeros + 8 * v));
    }
  }
  AIC_AVX2 __m256 Get(int64_t p, int v) const {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(panel + p * 32 + 8 * v));
    __m256i q = kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
    if (kZeros) q = _mm256_sub_epi32(q, zero[v]);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), scale[v]);
  }
};

template <int kRows, class Rows>
AIC_AVX2 void TileAvx2(const float* a, int64_t lda, const Rows& rows, int64_t k, const float* bias, float* c,
                       int64_t ldc, int64_t cols) {
  constexpr int64_t kW = 8 * kVectors;
  __m256 acc[kRows][kVectors];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    __m256 b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = rows.Get(p, v);
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

template <class Rows>
AIC_AVX2 void RowsAvx2(const float* a, int64_t m, int64_t lda, const Rows& rows, int64_t k, const float* bias, float* c,
                       int64_t ldc, int64_t cols) {
  switch (m) {
    case 4: return TileAvx2<4>(a, lda, rows, k, bias, c, ldc, cols);
    case 3: return TileAvx2<3>(a, lda, rows, k, bias, c, ldc, cols);
    case 2: return TileAvx2<2>(a, lda, rows, k, bias, c, ldc, cols);
    default: return TileAvx2<1>(a, lda, rows, k, bias, c, ldc, cols);
  }
}

template <bool kSigned, bool kZeros>
AIC_AVX2 void QuantizedAvx2(const float* a, int64_t m, int64_t lda, const void* panel, const float* scales,
                            const int32_t* zeros, int64_t k, const float* bias, float* c, int64_t ldc, int64_t cols) {
  RowsAvx2(a, m, lda, QuantizedRows256<kSigned, kZeros>(panel, scales, zeros), k, bias, c, ldc, cols);
}

AIC_AVX2 void PanelAvx2(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k, const float* bias,
                        float* c, int64_t ldc, int64_t cols) {
  RowsAvx2(a, m, lda, FloatRows256{panel}, k, bias, c, ldc, cols);
}

void QuantizedPanelAvx2(const float* a, int64_t m, int64_t lda, const void* panel, bool is_signed, bool zeros_zero,
                        const float* scales, const int32_t* zeros, int64_t k, const float* bias, float* c, int64_t ldc,
                        int64_t cols) {
  if (is_signed) {
    return zeros_zero ? QuantizedAvx2<true, false>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols)
                      : QuantizedAvx2<true, true>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols);
  }
  return zeros_zero ? QuantizedAvx2<false, false>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols)
                    : QuantizedAvx2<false, true>(a, m, lda, panel, scales, zeros, k, bias, c, ldc, cols);
}
#endif

// Without AVX2 and FMA: the same panel order, one row at a time; `weight`
// gives the panel's value at (row p, column j).
template <class Weight>
void PortableRows(const float* a, int64_t m, int64_t lda, const Weight& weight, int64_t k, const float* bias, float* c,
                  int64_t ldc, int64_t cols, int64_t width) {
  float acc[64];
  for (int64_t r = 0; r < m; ++r) {
    std::fill(acc, acc + width, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[r * lda + p];
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) acc[j] += av * weight(p, j);
    }
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = acc[j] + (bias != nullptr ? bias[j] : 0.0f);
  }
}

AIC_KERNEL_CLONES void PanelPortable(const float* a, int64_t m, int64_t lda, const float* panel, int64_t k,
                                     const float* bias, float* c, int64_t ldc, int64_t cols, int64_t width) {
  PortableRows(
      a, m, lda, [panel, width](int64_t p, int64_t j) { return panel[p * width + j]; }, k, bias, c, ldc, cols, width);
}

template <class Q>
void QuantizedPortable(const float* a, int64_t m, int64_t lda, const Q* panel, const float* scales,
                       const int32_t* zeros, int64_t k, const float* bias, float* c, int64_t ldc, int64_t cols,
                       int64_t width) {
  PortableRows(
      a, m, lda,
      [panel, scales, zeros, width](int64_t p, int64_t j) {
        return static_cast<float>(static_cast<int32_t>(panel[p * width + j]) - zeros[j]) * scales[j];
      },
      k, bias, c, ldc, cols, width);
}

std::atomic<int> forced_form{0};

int64_t PanelWidthForThisCpu() {
  const int form = forced_form.load(std::memory_order_relaxed);
  if (form == 0 && avx512::HaveAvx512()) return 16 * kVectors;
  if (form <= 1 && avx2::HaveAvx2Fma()) return 8 * kVectors;
  return 16;
}

}  // namespace

void GemvMatrix::Allocate(int64_t element_bytes) {
  element_bytes_ = element_bytes;
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(panels_ * k_ * width_ * element_bytes, 1));
  // 64-byte aligned: a panel row is whole cache lines, read by aligned loads.
  packed_.reset(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  std::memset(packed_.get(), 0, bytes);
}

GemvMatrix::GemvMatrix(const float* w, int64_t k, int64_t n, int64_t ld, bool transposed, float scale)
    : k_(k), n_(n), width_(PanelWidthForThisCpu()), panels_((n + width_ - 1) / width_) {
  Allocate(sizeof(float));
  float* packed = static_cast<float*>(packed_.get());
  for (int64_t q = 0; q < panels_; ++q) {
    float* panel = packed + q * k * width_;
    const int64_t cols = std::min(width_, n - q * width_);
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t col = q * width_ + j;
        panel[p * width_ + j] = scale * (transposed ? w[col * ld + p] : w[p * ld + col]);
      }
    }
  }
}

GemvMatrix::GemvMatrix(const Quantized& w, int64_t k, int64_t n, int64_t ld, bool transposed)
    : k_(k), n_(n), width_(PanelWidthForThisCpu()), panels_((n + width_ - 1) / width_), is_signed_(w.is_signed) {
  Allocate(1);
  scales_.assign(static_cast<size_t>(panels_ * width_), 0.0f);
  zeros_.assign(static_cast<size_t>(panels_ * width_), 0);
  for (int64_t j = 0; j < n; ++j) {
    scales_[j] = w.scales[j];
    zeros_[j] = w.zeros[j];
    zeros_zero_ = zeros_zero_ && w.zeros[j] == 0;
  }
  const auto* values = static_cast<const uint8_t*>(w.values);  // the bytes, signed or not
  uint8_t* packed = static_cast<uint8_t*>(packed_.get());
  for (int64_t q = 0; q < panels_; ++q) {
    uint8_t* panel = packed + q * k * width_;
    const int64_t cols = std::min(width_, n - q * width_);
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t col = q * width_ + j;
        panel[p * width_ + j] = values[transposed ? col * ld + p : p * ld + col];
      }
    }
  }
}

int ForceGemvForm(int form) { return forced_form.exchange(form); }

float GemvMatrix::Dequantized(int64_t index, int64_t col) const {
  const uint8_t byte = static_cast<const uint8_t*>(packed_.get())[index];
  const int32_t q = is_signed_ ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
  return static_cast<float>(q - zeros_[col]) * scales_[col];
}

void GemvMatrix::Unpack(float* w, int64_t ld, bool transposed) const {
  for (int64_t col = 0; col < n_; ++col) {
    const int64_t first = (col / width_) * k_ * width_ + col % width_;
    for (int64_t p = 0; p < k_; ++p) {
      const int64_t index = first + p * width_;
      (transposed ? w[col * ld + p] : w[p * ld + col]) =
          quantized() ? Dequantized(index, col) : static_cast<const float*>(packed_.get())[index];
    }
  }
}

void GemvMatrix::UnpackQuantized(void* q, int64_t ld, bool transposed) const {
  auto* out = static_cast<uint8_t*>(q);
  const auto* packed = static_cast<const uint8_t*>(packed_.get());
  for (int64_t col = 0; col < n_; ++col) {
    const int64_t first = (col / width_) * k_ * width_ + col % width_;
    for (int64_t p = 0; p < k_; ++p) out[transposed ? col * ld + p : p * ld + col] = packed[first + p * width_];
  }
}

void GemvMatrix::Multiply(const float* a, int64_t m, int64_t lda, const float* bias, float* c, int64_t ldc,
                          bool threaded) const {
  if (m <= 0 || n_ <= 0) return;
  ParallelFor(panels_, threaded ? m * k_ * width_ : 0, [&](int64_t q) {
    const int64_t offset = q * k_ * width_;
    const float* panel = static_cast<const float*>(packed_.get()) + offset;
    const uint8_t* panel8 = static_cast<const uint8_t*>(packed_.get()) + offset;
    const float* scales = scales_.data() + q * width_;
    const int32_t* zeros = zeros_.data() + q * width_;
    const int64_t cols = std::min(width_, n_ - q * width_);
    const float* panel_bias = bias != nullptr ? bias + q * width_ : nullptr;
    float* out = c + q * width_;
    for (int64_t r = 0; r < m; r += kMaxRows) {
      const int64_t rows = std::min(kMaxRows, m - r);
      const float* ar = a + r * lda;
      float* cr = out + r * ldc;
#ifdef AIC_HAVE_AVX512_MATH
      if (width_ == 16 * kVectors) {
        if (quantized()) {
          QuantizedPanelAvx512(ar, rows, lda, panel8, is_signed_, zeros_zero_, scales, zeros, k_, panel_bias, cr, ldc,
                               cols);
        } else {
          PanelAvx512(ar, rows, lda, panel, k_, panel_bias, cr, ldc, cols);
        }
        continue;
      }
#endif
#ifdef AIC_HAVE_AVX2_MATH
      if (width_ == 8 * kVectors) {
        if (quantized()) {
          QuantizedPanelAvx2(ar, rows, lda, panel8, is_signed_, zeros_zero_, scales, zeros, k_, panel_bias, cr, ldc,
                             cols);
        } else {
          PanelAvx2(ar, rows, lda, panel, k_, panel_bias, cr, ldc, cols);
        }
        continue;
      }
#endif
      if (!quantized()) {
        PanelPortable(ar, rows, lda, panel, k_, panel_bias, cr, ldc, cols, width_);
      } else if (is_signed_) {
        QuantizedPortable(ar, rows, lda, reinterpret_cast<const int8_t*>(panel8), scales, zeros, k_, panel_bias, cr,
                          ldc, cols, width_);
      } else {
        QuantizedPortable(ar, rows, lda, panel8, scales, zeros, k_, panel_bias, cr, ldc, cols, width_);
      }
    }
  });
}

}  // namespace aic::cpu::kernels

// Products of a few rows by constant weights, C[m, n] = A[m, k] · B + bias
// with m at most kMaxRows: a classifier's head ([1, 1280] x [1280, 1000]), an
// SE block's 1x1 convs at 1x1, a decoder's step. They are bound by reading
// B once from memory; oneDNN 2.6's matmul (brg, AVX-512) read a 5 MB head at
// 11 GB/s where ONNX Runtime reads it at 19 (mobilenet_v3_large's two head
// Gemms 0.47 + 0.45 ms against 0.28 + 0.26, aic-onnx bench --profile beside
// ORT's profiler). B is packed once into column panels, each one sequential
// stream read by a tile of register accumulators.
//
// 8-bit weights (a QDQ model's DequantizeLinear of int8 or uint8 constants)
// stay 8-bit in the panels and are dequantized as they are read, by the
// arithmetic DequantizeLinear uses, (float(q) - zero) · scale per column:
// the product is bit for bit the one over the folded float weights, from a
// quarter of the bytes (mobilenet_v3_large_int8's head: 10 MB -> 2.5 MB).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace aic::cpu::kernels {

class GemvMatrix {
 public:
  static constexpr int64_t kMaxRows = 4;

  // B = scale · W for W k×n row-major (row stride ld), or, `transposed`,
  // B = scale · Wᵀ for W n×k row-major (a Gemm's transB, a conv's [O, C]).
  GemvMatrix(const float* w, int64_t k, int64_t n, int64_t ld, bool transposed, float scale = 1.0f);

  // B = dequantized Q for Q laid out as `w` above, int8 (`is_signed`) or
  // uint8, with column j's value (float(q) - zeros[j]) · scales[j]; scales
  // and zeros hold n values each.
  struct Quantized {
    const void* values = nullptr;
    bool is_signed = true;
    std::vector<float> scales;
    std::vector<int32_t> zeros;
  };
  GemvMatrix(const Quantized& q, int64_t k, int64_t n, int64_t ld, bool transposed);

  // C[r, 0:n) = A[r, 0:k) · B + bias (bias: n values, or null) for r < m,
  // rows of A and C at strides lda and ldc; 1 <= m <= kMaxRows. Threaded
  // over column panels when `threaded` and B is big enough.
  void Multiply(const float* a, int64_t m, int64_t lda, const float* bias, float* c, int64_t ldc,
                bool threaded = true) const;

  // Writes W back (as the constructor read it, row stride ld) from the
  // packed panels: exact when scale was 1; for 8-bit weights, their
  // dequantized values, exactly as DequantizeLinear computes them. For a
  // weight whose plain bytes were released once packed (Lowerer::ReleaseWeight).
  void Unpack(float* w, int64_t ld, bool transposed) const;
  // The 8-bit values themselves, as the constructor read them (quantized() only).
  void UnpackQuantized(void* q, int64_t ld, bool transposed) const;

  int64_t rows() const { return k_; }
  int64_t cols() const { return n_; }
  bool quantized() const { return element_bytes_ == 1; }
  int64_t packed_bytes() const { return panels_ * k_ * width_ * element_bytes_; }
  // Columns per panel on this CPU: 64 with AVX-512, 32 with AVX2+FMA, else 16.
  int64_t panel_width() const { return width_; }

 private:
  void Allocate(int64_t element_bytes);
  float Dequantized(int64_t panel_index, int64_t col) const;

  int64_t k_ = 0, n_ = 0, width_ = 16, panels_ = 0, element_bytes_ = 4;
  bool is_signed_ = true, zeros_zero_ = true;
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  // [panel][k][width_] floats or 8-bit values; the last panel's missing columns are 0.
  std::unique_ptr<void, Free> packed_;
  std::vector<float> scales_;   // 8-bit form: per column, padded to whole panels with 0
  std::vector<int32_t> zeros_;  // likewise
};

// Tests of the narrower forms on a wider CPU: 0 the widest this CPU runs
// (the default), 1 at most AVX2 (32-column panels), 2 the portable loop
// (16). Applies to matrices built after it; returns the setting it replaced.
int ForceGemvForm(int form);

}  // namespace aic::cpu::kernels

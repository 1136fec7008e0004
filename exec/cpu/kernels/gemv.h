// Products of a few rows by constant weights, C[m, n] = A[m, k] · B + bias
// with m at most kMaxRows: a classifier's head ([1, 1280] x [1280, 1000]), an
// SE block's 1x1 convs at 1x1, a decoder's step. They are bound by reading
// B once from memory; oneDNN 2.6's matmul (brg, AVX-512) read a 5 MB head at
// 11 GB/s where ONNX Runtime reads it at 19 (mobilenet_v3_large's two head
// Gemms 0.47 + 0.45 ms against 0.28 + 0.26, aic-onnx bench --profile beside
// ORT's profiler). B is packed once into column panels, each one sequential
// stream read by a tile of register accumulators.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace aic::cpu::kernels {

class GemvMatrix {
 public:
  static constexpr int64_t kMaxRows = 4;

  // B = scale · W for W k×n row-major (row stride ld), or, `transposed`,
  // B = scale · Wᵀ for W n×k row-major (a Gemm's transB, a conv's [O, C]).
  GemvMatrix(const float* w, int64_t k, int64_t n, int64_t ld, bool transposed, float scale = 1.0f);

  // C[r, 0:n) = A[r, 0:k) · B + bias (bias: n values, or null) for r < m,
  // rows of A and C at strides lda and ldc; 1 <= m <= kMaxRows. Threaded
  // over column panels when `threaded` and B is big enough.
  void Multiply(const float* a, int64_t m, int64_t lda, const float* bias, float* c, int64_t ldc,
                bool threaded = true) const;

  // Writes W back (as the constructor read it, row stride ld) from the
  // packed panels: exact when scale was 1. For a weight whose plain bytes were
  // released once packed (Lowerer::ReleaseWeight).
  void Unpack(float* w, int64_t ld, bool transposed) const;

  int64_t rows() const { return k_; }
  int64_t cols() const { return n_; }
  // Columns per panel on this CPU: 64 with AVX-512, 32 with AVX2+FMA, else 16.
  int64_t panel_width() const { return width_; }

 private:
  int64_t k_ = 0, n_ = 0, width_ = 16, panels_ = 0;
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> packed_;  // [panel][k][width_]; the last panel's missing columns are 0
};

// Tests of the narrower forms on a wider CPU: 0 the widest this CPU runs
// (the default), 1 at most AVX2 (32-column panels), 2 the portable loop
// (16). Applies to matrices built after it; returns the setting it replaced.
int ForceGemvForm(int form);

}  // namespace aic::cpu::kernels

// A GEMM right operand packed once for many products with a small left
// operand: a recurrent cell multiplies its fixed R by the [batch, hidden]
// state at every time step, too small a product for a general GEMM to earn
// back its per-call packing (oneDNN's sgemm repacked R's 256 KB at each of
// an LSTM's steps: half its run, batch 8, hidden 128).
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

class PanelMatrix {
 public:
  // B = Bᵀᵀ for the n×k row-major `bt` (row stride ldbt): a cell's R rows,
  // one per gate unit, are B's columns.
  PanelMatrix(const float* bt, int64_t n, int64_t k, int64_t ldbt);
  PanelMatrix() = default;  // 0×0

  // C[m, 0:n) = A[m, 0:k) · B, rows of A and C at strides lda and ldc.
  // Threaded over column panels when `threaded` and the product is big
  // enough.
  void Multiply(const float* a, int64_t m, int64_t lda, float* c, int64_t ldc, bool threaded = true) const;

  int64_t cols() const { return n_; }
  int64_t depth() const { return k_; }

  static constexpr int64_t kPanel = 16;  // columns per panel: two AVX2 vectors

 private:
  int64_t n_ = 0, k_ = 0, panels_ = 0;
  std::vector<float> packed_;  // [panel][k][kPanel]; the last panel's missing columns are 0
};

}  // namespace aic::cpu::kernels

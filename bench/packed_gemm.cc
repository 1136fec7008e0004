// What packing a constant B once would save oneDNN 2.6's f32 GEMM on this CPU:
// dnnl_sgemm (the public call, which packs B's panels on every call, as the
// matmul primitive's gemm:jit does where there is no AVX-512) against
// oneDNN's own sgemm_pack + sgemm_compute (exported by libdnnl 2.6 but not
// in its public headers: the MKL-style packed API its RNNs use), at a
// transformer's linear-layer shapes. Prints the best of 15 runs each.
//
// What it found, and why the executor does not pack (session of 2026-12-06,
// Zen 3, medians of 5 rounds against the matmul primitive as lowered):
// - Most of what a packed B seemed to save was post-op handling: gemm:jit
//   applies a binary post-op (the bias) one element at a time after the GEMM
//   ([128,256]x[256,1024]: 0.729 ms plain, 0.803 with the bias post-op, 0.741
//   with the bias as the matmul's own argument). With the bias an argument
//   (ops_matmul.cc) and binary post-ops left to steps of their own
//   (post_ops.cc BinaryPostOpsRunApart), packing adds 0-5% at M >= 64 and
//   loses at M = 1 (the primitive's GEMV).
// - sgemm_pack bakes the thread partition into the packed buffer: packed on
//   2 threads and computed on 1 it crashed (segfault), packed on 1 it computes
//   on 1 whatever the count. Only M = 2..16 gained much (0.54-0.85x).
// Build and run (not part of the project's build):
//   g++ -O2 bench/packed_gemm.cc -o /tmp/packed_gemm -ldnnl && OMP_NUM_THREADS=1 /tmp/packed_gemm
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace dnnl::impl::cpu {  // column-major, as Fortran BLAS
dnnl_status_t sgemm_pack_get_size(const char* identifier, const char* transa, const char* transb, const dnnl_dim_t* M,
                                  const dnnl_dim_t* N, const dnnl_dim_t* K, const dnnl_dim_t* lda, const dnnl_dim_t* ldb,
                                  size_t* size, bool* pack);
dnnl_status_t sgemm_pack(const char* identifier, const char* transa, const char* transb, const dnnl_dim_t* M,
                         const dnnl_dim_t* N, const dnnl_dim_t* K, const dnnl_dim_t* lda, const dnnl_dim_t* ldb,
                         const float* src, float* dst);
dnnl_status_t sgemm_compute(const char* transa, const char* transb, const dnnl_dim_t* M, const dnnl_dim_t* N,
                            const dnnl_dim_t* K, const float* A, const dnnl_dim_t* lda, const float* B,
                            const dnnl_dim_t* ldb, const float* beta, float* C, const dnnl_dim_t* ldc);
}  // namespace dnnl::impl::cpu

namespace {

template <typename F>
double BestMs(F f) {
  double best = 1e30;
  for (int r = 0; r < 15; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best * 1e3;
}

}  // namespace

int main() {
  namespace cpu = dnnl::impl::cpu;
  for (dnnl_dim_t m : {128, 500}) {
    const dnnl_dim_t k = 768, n = 3072;
    std::vector<float> a(m * k, 0.01f), b(k * n, 0.02f), c(m * n);
    // Row-major C[m, n] = A[m, k] B[k, n] is column-major C' = B' A': B is the first operand.
    const double plain = BestMs([&] { dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n); });
    const char first = 'A', no = 'N', packed = 'P';
    const dnnl_dim_t ldb_cm = n, lda_cm = k, ldc = n;
    const float beta = 0;
    size_t bytes = 0;
    bool worth = false;
    cpu::sgemm_pack_get_size(&first, &no, &no, &n, &m, &k, &ldb_cm, &lda_cm, &bytes, &worth);
    std::vector<float> panel(bytes / sizeof(float) + 16);
    cpu::sgemm_pack(&first, &no, &no, &n, &m, &k, &ldb_cm, &lda_cm, b.data(), panel.data());
    const double ms = BestMs([&] {
      cpu::sgemm_compute(&packed, &no, &n, &m, &k, panel.data(), &ldb_cm, a.data(), &lda_cm, &beta, c.data(), &ldc);
    });
    std::printf("[%ld, %ld] x [%ld, %ld]: dnnl_sgemm %.3f ms, packed B %.3f ms (%.2fx); c[0] %.4f (exact %.4f)\n",
                static_cast<long>(m), static_cast<long>(k), static_cast<long>(k), static_cast<long>(n), plain, ms,
                ms / plain, c[0], 0.01 * 0.02 * k);
  }
  return 0;
}

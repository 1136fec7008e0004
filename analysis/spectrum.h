// Weight spectra: the singular values of a layer's weight matrix from LAPACK
// (Debian liblapacke over OpenBLAS), and what they say: entropy effective
// rank, stable rank, numerical rank, and the smallest rank that keeps a given
// share of the spectral energy (a low-rank factorization candidate).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/report.h"
#include "graph/tensor.h"

namespace aic::analysis {

// Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from cpuid
// when it loads and takes a virtualised Xeon that reports AVX-512 for a
// Prescott: SSE3 kernels, dsyrk 3-8x slower than its SkylakeX ones. It reads
// OPENBLAS_CORETYPE at load time only, so a command about to decompose
// weights calls this first: unless the user set the variable, or the
// kernels already match what the CPU supports, it sets it (SkylakeX for
// AVX-512 F/BW/DQ/VL, Haswell for AVX2+FMA) and re-executes the process.
void UseOpenBlasKernelsForThisCpu();

// Machine epsilon of a floating-point dtype (float32 for anything else).
double DTypeEpsilon(DType t);

// Singular values (descending) of `weight` viewed as a row-major
// [rows, cols] matrix (rows·cols must equal its element count). Float, half
// and bfloat16 weights: the square roots of the eigenvalues of the Gram
// matrix of the short side, in double (dsyrk + dsyevd; each σᵢ² within about
// k·eps₆₄·σ₁², far below a float32 weight's own rounding). Double weights:
// dgesdd, values only.
inline constexpr const char* kGramMethod = "LAPACK dsyevd on the double Gram matrix";
inline constexpr const char* kExactSvdMethod = "LAPACK dgesdd";
absl::StatusOr<std::vector<double>> SingularValues(const Tensor& weight, int64_t rows, int64_t cols,
                                                   std::string* method = nullptr);

// The thin SVD A = U·diag(s)·Vᵀ of a row-major [rows, cols] matrix in
// double (LAPACK dgesdd): u [rows, k], vt [k, cols] row-major, s descending,
// k = min(rows, cols). What a low-rank factorization is cut from.
struct ThinSvd {
  int64_t rows = 0, cols = 0, k = 0;
  std::vector<double> u, s, vt;
};
absl::StatusOr<ThinSvd> ComputeThinSvd(std::vector<double> a, int64_t rows, int64_t cols);

// Fills effective/stable/numerical rank from spectrum.singular_values.
void ComputeRanks(Spectrum& spectrum, double eps);

// The smallest r with Σ_{i<=r} σᵢ² >= energy · Σσᵢ², and its costs and error.
// `macs` is the layer's MACs (-1 when unknown).
LowRank LowRankCandidate(const Spectrum& spectrum, double energy, int64_t macs);

}  // namespace aic::analysis

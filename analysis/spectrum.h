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

// Machine epsilon of a floating-point dtype (float32 for anything else).
double DTypeEpsilon(DType t);

// Singular values (descending) of `weight` viewed as a row-major
// [rows, cols] matrix (rows·cols must equal its element count). Matrices up
// to kDoubleSvdMaxDim on their short side go through dgesdd in double; larger
// ones through sgesdd in float, which is about twice as fast and as exact as
// a float32 weight deserves.
inline constexpr int64_t kDoubleSvdMaxDim = 1024;
absl::StatusOr<std::vector<double>> SingularValues(const Tensor& weight, int64_t rows, int64_t cols,
                                                   std::string* method = nullptr);

// Rough seconds one SVD of that size takes on one core (for progress).
double EstimatedSvdSeconds(int64_t rows, int64_t cols);

// Fills effective/stable/numerical rank from spectrum.singular_values.
void ComputeRanks(Spectrum& spectrum, double eps);

// The smallest r with Σ_{i<=r} σᵢ² >= energy · Σσᵢ², and its costs and error.
// `macs` is the layer's MACs (-1 when unknown).
LowRank LowRankCandidate(const Spectrum& spectrum, double energy, int64_t macs);

}  // namespace aic::analysis

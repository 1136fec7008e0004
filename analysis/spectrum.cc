#include "analysis/spectrum.h"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"

// OpenBLAS's own thread pool spins on oversubscribed machines and can make an
// SVD ten times slower than one thread; the report runs LAPACK on one thread.
extern "C" void openblas_set_num_threads(int num_threads);

namespace aic::analysis {

double DTypeEpsilon(DType t) {
  switch (t) {
    case DType::kDouble:
      return std::numeric_limits<double>::epsilon();
    case DType::kFloat16:
      return 9.765625e-4;  // 2^-10
    case DType::kBFloat16:
      return 7.8125e-3;  // 2^-7
    default:
      return std::numeric_limits<float>::epsilon();
  }
}

double EstimatedSvdSeconds(int64_t rows, int64_t cols) {
  double m = static_cast<double>(std::max(rows, cols));
  double n = static_cast<double>(std::min(rows, cols));
  // Values only: ~4mn² - 4n³/3 flops (bidiagonalization); measured on one
  // core: dgesdd ~5 GFLOP/s, sgesdd ~25 (4096×4096 in about 7 s).
  double rate = n <= static_cast<double>(kDoubleSvdMaxDim) ? 5e9 : 2.5e10;
  return (4.0 * m * n * n - 4.0 * n * n * n / 3.0) / rate;
}

absl::StatusOr<std::vector<double>> SingularValues(const Tensor& weight, int64_t rows, int64_t cols,
                                                   std::string* method) {
  if (rows <= 0 || cols <= 0 || rows * cols != weight.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot view ", weight.num_elements(), " elements as a [", rows, ", ", cols, "] matrix"));
  }
  if (!IsFloatingPoint(weight.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight dtype ", DTypeName(weight.dtype()), " is not floating point"));
  }
  static const bool kOneThread = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)kOneThread;
  const int64_t n_el = weight.num_elements();
  const int64_t k = std::min(rows, cols);
  // The row-major [rows, cols] buffer is the column-major [cols, rows] matrix,
  // its transpose: same singular values, and LAPACK prefers column-major.
  const lapack_int m = static_cast<lapack_int>(cols), n = static_cast<lapack_int>(rows);
  std::vector<double> out(static_cast<size_t>(k));
  lapack_int info = 0;
  if (k <= kDoubleSvdMaxDim) {
    std::vector<double> a(static_cast<size_t>(n_el));
    if (weight.dtype() == DType::kFloat) {
      const float* p = weight.data<float>();
      for (int64_t i = 0; i < n_el; ++i) a[i] = p[i];
    } else {
      for (int64_t i = 0; i < n_el; ++i) a[i] = weight.ElementAsDouble(i);
    }
    info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, a.data(), m, out.data(), nullptr, 1, nullptr,
                          1);
    if (method != nullptr) *method = "LAPACK dgesdd";
  } else {
    std::vector<float> a(static_cast<size_t>(n_el));
    if (weight.dtype() == DType::kFloat) {
      std::copy(weight.data<float>(), weight.data<float>() + n_el, a.begin());
    } else {
      for (int64_t i = 0; i < n_el; ++i) a[i] = static_cast<float>(weight.ElementAsDouble(i));
    }
    std::vector<float> s(static_cast<size_t>(k));
    info =
        LAPACKE_sgesdd(LAPACK_COL_MAJOR, 'N', m, n, a.data(), m, s.data(), nullptr, 1, nullptr, 1);
    std::copy(s.begin(), s.end(), out.begin());
    if (method != nullptr) *method = "LAPACK sgesdd";
  }
  if (info != 0) {
    return absl::InternalError(absl::StrCat("LAPACK SVD did not converge (info ", info, ")"));
  }
  for (double& s : out) {
    if (!std::isfinite(s)) return absl::InvalidArgumentError("weight has non-finite values");
  }
  std::sort(out.begin(), out.end(), std::greater<double>());
  return out;
}

void ComputeRanks(Spectrum& sp, double eps) {
  const auto& s = sp.singular_values;
  sp.effective_rank = sp.stable_rank = 0;
  sp.numerical_rank = 0;
  if (s.empty() || s[0] <= 0) return;
  double sum = std::accumulate(s.begin(), s.end(), 0.0);
  double sum_sq = 0, entropy = 0;
  for (double v : s) {
    sum_sq += v * v;
    double p = v / sum;
    if (p > 0) entropy -= p * std::log(p);
  }
  sp.effective_rank = std::exp(entropy);
  sp.stable_rank = sum_sq / (s[0] * s[0]);
  sp.tolerance = s[0] * static_cast<double>(std::max(sp.rows, sp.cols)) * eps;
  for (double v : s) sp.numerical_rank += v > sp.tolerance ? 1 : 0;
}

LowRank LowRankCandidate(const Spectrum& sp, double energy, int64_t macs) {
  LowRank lr;
  const auto& s = sp.singular_values;
  const int64_t m = sp.rows, n = sp.cols;
  lr.params_before = m * n;
  lr.break_even_rank = static_cast<double>(m) * static_cast<double>(n) / static_cast<double>(m + n);
  lr.macs_before = macs;
  double total = 0;
  for (double v : s) total += v * v;
  if (s.empty() || total <= 0) return lr;
  double kept = 0;
  size_t r = 0;
  while (r < s.size()) {
    kept += s[r] * s[r];
    ++r;
    // A relative slack so that energy 1.0 stops at the full rank despite rounding.
    if (kept >= energy * total * (1 - 1e-12)) break;
  }
  lr.rank = static_cast<int64_t>(r);
  lr.energy_kept = kept / total;
  lr.relative_frobenius_error = std::sqrt(std::max(0.0, total - kept) / total);
  lr.spectral_error = r < s.size() ? s[r] : 0.0;
  lr.params_after = lr.rank * (m + n);
  lr.pays = static_cast<double>(lr.rank) < lr.break_even_rank;
  lr.macs_after = macs < 0 ? -1
                           : static_cast<int64_t>(std::llround(
                                 static_cast<double>(macs) * static_cast<double>(lr.params_after) /
                                 static_cast<double>(lr.params_before)));
  return lr;
}

}  // namespace aic::analysis

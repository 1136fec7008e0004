#include "analysis/spectrum.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "support/reexec.h"

// OpenBLAS's own thread pool spins on oversubscribed machines and can make an
// SVD ten times slower than one thread; the report runs LAPACK on one thread.
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" char* openblas_get_corename();

namespace aic::analysis {

void UseOpenBlasKernelsForThisCpu() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice stands
  __builtin_cpu_init();
  const char* wanted = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    wanted = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    wanted = "Haswell";
  }
  if (wanted == nullptr) return;
  // Newer cores (Cooperlake, SapphireRapids, Zen) are as good: only the
  // pre-AVX2 fallbacks are replaced.
  const std::string core = openblas_get_corename();
  static const char* const kOld[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                                     "Atom", "Katmai", "Coppermine", "Northwood", "Banias",
                                     "Sandybridge", "Barcelona", "Opteron", "Bobcat"};
  bool old = false;
  for (const char* k : kOld) old |= core == k;
  if (!old) return;
  std::vector<std::string> args = OwnArguments();
  if (args.empty()) return;
  setenv("OPENBLAS_CORETYPE", wanted, 1);
  ExecWithArguments("/proc/self/exe", std::move(args));
  // execv failed: carry on with the slower kernels.
}

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

namespace {

// Values only, exactly: LAPACK's divide-and-conquer SVD in double, for double
// weights (whose rounding is below what the Gram route resolves).
absl::Status DoubleSvd(const Tensor& weight, int64_t rows, int64_t cols, std::vector<double>& out) {
  // The row-major [rows, cols] buffer is the column-major [cols, rows] matrix,
  // its transpose: same singular values, and LAPACK prefers column-major.
  const lapack_int m = static_cast<lapack_int>(cols), n = static_cast<lapack_int>(rows);
  std::vector<double> a(weight.data<double>(), weight.data<double>() + weight.num_elements());
  lapack_int info =
      LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, a.data(), m, out.data(), nullptr, 1, nullptr, 1);
  if (info != 0) {
    return absl::InternalError(absl::StrCat("LAPACK SVD did not converge (info ", info, ")"));
  }
  return absl::OkStatus();
}

// σᵢ² are the eigenvalues of the k×k Gram matrix of the short side (W·Wᵀ or
// Wᵀ·W), formed in double by dsyrk and solved by dsyevd: 2.5-5x faster than
// an SVD of W at the sizes of transformer layers. In double, each
// eigenvalue is within about k·eps₆₄·σ₁² of σᵢ², so a σᵢ above √(k·eps₆₄)·σ₁
// (≈ 4e-7·σ₁ at k = 768) comes out to the bits the weight has; a float32
// weight's own rounding (the numerical-rank tolerance σ₁·max(m,n)·2⁻²³) is
// far above that floor.
absl::Status GramEigenvalues(const Tensor& weight, int64_t rows, int64_t cols,
                             std::vector<double>& out) {
  const int64_t n_el = weight.num_elements();
  std::vector<double> a(static_cast<size_t>(n_el));
  if (weight.dtype() == DType::kFloat) {
    const float* p = weight.data<float>();
    for (int64_t i = 0; i < n_el; ++i) a[i] = p[i];
  } else {
    for (int64_t i = 0; i < n_el; ++i) a[i] = weight.ElementAsDouble(i);
  }
  // Before the Gram: a NaN there would come out of the clamp below as σ = 0.
  for (double v : a) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("weight has non-finite values");
  }
  const int64_t k = std::min(rows, cols);
  std::vector<double> gram(static_cast<size_t>(k * k));
  // Row-major A [rows, cols]: A·Aᵀ when rows is the short side, else Aᵀ·A.
  const bool rows_short = rows <= cols;
  cblas_dsyrk(CblasRowMajor, CblasUpper, rows_short ? CblasNoTrans : CblasTrans,
              static_cast<blasint>(k), static_cast<blasint>(rows_short ? cols : rows), 1.0,
              a.data(), static_cast<blasint>(cols), 0.0, gram.data(), static_cast<blasint>(k));
  a = {};
  // The row-major upper triangle is the column-major lower one.
  std::vector<double> eig(static_cast<size_t>(k));
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', static_cast<lapack_int>(k),
                                   gram.data(), static_cast<lapack_int>(k), eig.data());
  if (info != 0) {
    return absl::InternalError(
        absl::StrCat("LAPACK symmetric eigensolver did not converge (info ", info, ")"));
  }
  for (int64_t i = 0; i < k; ++i) out[i] = std::sqrt(std::max(0.0, eig[i]));
  return absl::OkStatus();
}

// Once per process, before the first LAPACK call (see the note at the top).
void UseOneBlasThread() {
  static const bool kOneThread = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)kOneThread;
}

}  // namespace

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
  UseOneBlasThread();
  std::vector<double> out(static_cast<size_t>(std::min(rows, cols)));
  const bool exact = weight.dtype() == DType::kDouble;
  absl::Status s = exact ? DoubleSvd(weight, rows, cols, out) : GramEigenvalues(weight, rows, cols, out);
  if (!s.ok()) return s;
  if (method != nullptr) *method = exact ? kExactSvdMethod : kGramMethod;
  for (double& v : out) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("weight has non-finite values");
  }
  std::sort(out.begin(), out.end(), std::greater<double>());
  return out;
}

absl::StatusOr<ThinSvd> ComputeThinSvd(std::vector<double> a, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0 || static_cast<int64_t>(a.size()) != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat("cannot view ", a.size(), " elements as a [", rows, ", ", cols, "] matrix"));
  }
  for (double v : a) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("weight has non-finite values");
  }
  UseOneBlasThread();
  ThinSvd svd;
  svd.rows = rows;
  svd.cols = cols;
  svd.k = std::min(rows, cols);
  svd.u.resize(static_cast<size_t>(rows * svd.k));
  svd.s.resize(static_cast<size_t>(svd.k));
  svd.vt.resize(static_cast<size_t>(svd.k * cols));
  lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', static_cast<lapack_int>(rows), static_cast<lapack_int>(cols),
                                   a.data(), static_cast<lapack_int>(cols), svd.s.data(), svd.u.data(),
                                   static_cast<lapack_int>(svd.k), svd.vt.data(), static_cast<lapack_int>(cols));
  if (info != 0) return absl::InternalError(absl::StrCat("LAPACK SVD did not converge (info ", info, ")"));
  return svd;
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

#include "exec/cpu/kernels/unary.h"

#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "exec/cpu/kernels/erf.h"
#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/log.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/unary_avx2.h"
#include "exec/cpu/kernels/unary_avx512.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

template <typename F>
inline void Map(const float* x, float* y, int64_t n, F f) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// One cloned row kernel per op; the body is a scalar lambda.
#define AIC_UNARY(name, expr)                                                                        \
  AIC_KERNEL_CLONES void name(const float* x, float* y, int64_t n) { Map(x, y, n, [](float v) { return expr; }); }

AIC_UNARY(ErfRow, ErfApprox(v))
AIC_UNARY(ReciprocalRow, 1.0f / v)
AIC_UNARY(FloorRow, std::floor(v))
AIC_UNARY(CeilRow, std::ceil(v))
AIC_UNARY(RoundRow, std::nearbyint(v))  // half to even under the default rounding mode
AIC_UNARY(SinRow, std::sin(v))
AIC_UNARY(CosRow, std::cos(v))
AIC_UNARY(LogRow, LogApprox(v))
// log(1 + e^v) without overflow: max(v, 0) + log1p(e^-|v|).
AIC_UNARY(SoftplusRow, (v > 0.0f ? v : 0.0f) + std::log1p(std::exp(-std::fabs(v))))
AIC_UNARY(SoftsignRow, v / (1.0f + std::fabs(v)))
AIC_UNARY(SignRow, v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v))
AIC_UNARY(GeluErfRow, 0.5f * v * (1.0f + ErfApprox(v * 0.70710678118654752f)))
// Mish(x) = x·tanh(ln(1 + e^x)) = x·n/(n + 2) with n = e^x·(e^x + 2): one exp,
// no cancellation for negative x; beyond x = 20 it is x to f32 precision.
inline float MishOf(float v) {
  float t = ExpApprox(v);
  float n = t * (t + 2.0f);
  return v > 20.0f ? v : v * n / (n + 2.0f);
}
AIC_UNARY(MishRow, MishOf(v))
AIC_UNARY(GeluTanhRow, 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))))

#undef AIC_UNARY

}  // namespace

UnaryRowFn FastUnaryKernel(const std::string& op) {
  if (avx512::HaveAvx512()) return Avx512UnaryKernel(op);
  return Avx2UnaryKernel(op);
}

UnaryRowFn UnaryKernel(const std::string& op) {
  if (UnaryRowFn fast = FastUnaryKernel(op); fast != nullptr) return fast;
  static const auto* table = new absl::flat_hash_map<std::string, UnaryRowFn>{
      {"Erf", ErfRow},           {"Reciprocal", ReciprocalRow}, {"Floor", FloorRow},
      {"Ceil", CeilRow},         {"Round", RoundRow},           {"Sin", SinRow},
      {"Cos", CosRow},           {"Log", LogRow},               {"Softplus", SoftplusRow},
      {"Softsign", SoftsignRow}, {"Sign", SignRow},             {"GeluErf", GeluErfRow},
      {"GeluTanh", GeluTanhRow}, {"Mish", MishRow},
  };
  auto it = table->find(op);
  return it == table->end() ? nullptr : it->second;
}

void UnaryF32(UnaryRowFn fn, const float* x, float* y, int64_t n) {
  ParallelPieces(n, [&](int64_t begin, int64_t len) { fn(x + begin, y + begin, len); });
}

namespace {

AIC_KERNEL_CLONES void HardSigmoidRow(const float* x, float* y, int64_t n, float alpha, float beta) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = alpha * x[i] + beta;
    v = v > 1.0f ? 1.0f : v;
    y[i] = v > 0.0f ? v : (v != v ? v : 0.0f);  // NaN stays NaN
  }
}

}  // namespace

void HardSigmoidF32(const float* x, float* y, int64_t n, float alpha, float beta) {
  ParallelPieces(n, [&](int64_t begin, int64_t len) { HardSigmoidRow(x + begin, y + begin, len, alpha, beta); });
}

namespace {

AIC_KERNEL_CLONES void IsNaNRun(const float* x, uint8_t* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i] ? 1 : 0;
}

AIC_KERNEL_CLONES void IsInfRun(const float* x, uint8_t* y, int64_t n, bool positive, bool negative) {
  const float inf = std::numeric_limits<float>::infinity();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = ((positive && x[i] == inf) || (negative && x[i] == -inf)) ? 1 : 0;
}

}  // namespace

void IsNaNF32(const float* x, uint8_t* y, int64_t n) {
  constexpr int64_t kPiece = 8192;
  ParallelFor((n + kPiece - 1) / kPiece, kPiece, [&](int64_t p) {
    int64_t begin = p * kPiece;
    IsNaNRun(x + begin, y + begin, (n - begin < kPiece ? n - begin : kPiece));
  });
}

void IsInfF32(const float* x, uint8_t* y, int64_t n, bool positive, bool negative) {
  constexpr int64_t kPiece = 8192;
  ParallelFor((n + kPiece - 1) / kPiece, kPiece, [&](int64_t p) {
    int64_t begin = p * kPiece;
    IsInfRun(x + begin, y + begin, (n - begin < kPiece ? n - begin : kPiece), positive, negative);
  });
}

}  // namespace aic::cpu::kernels

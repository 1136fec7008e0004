#include "exec/cpu/kernels/recurrence.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/kernels/vector_math_coefficients.h"
#include "oneapi/dnnl/dnnl.h"
#include "support/status.h"

namespace aic::cpu::kernels {

namespace {

using Kind = GateActivation::Kind;

GateActivation Decode(const RnnActivation& a) {
  // ParseRnnActivations stores each function's canonical name.
  static constexpr std::pair<const char*, Kind> kKinds[] = {
      {"Relu", Kind::kRelu},
      {"Tanh", Kind::kTanh},
      {"Sigmoid", Kind::kSigmoid},
      {"Affine", Kind::kAffine},
      {"LeakyRelu", Kind::kLeakyRelu},
      {"ThresholdedRelu", Kind::kThresholdedRelu},
      {"ScaledTanh", Kind::kScaledTanh},
      {"HardSigmoid", Kind::kHardSigmoid},
      {"Elu", Kind::kElu},
      {"Softsign", Kind::kSoftsign},
      {"Softplus", Kind::kSoftplus},
  };
  GateActivation g;
  for (const auto& [name, kind] : kKinds) {
    if (a.name == name) g.kind = kind;
  }
  g.alpha = static_cast<float>(a.alpha);
  g.beta = static_cast<float>(a.beta);
  return g;
}

// tanh in f32 as the vector kernels compute it (vector_math_coefficients.h:
// Eigen's odd rational fit of |x| clamped at 9, the sign copied back), written
// scalar and branch-free so the compiler vectorizes it. A tiny |x| returns x.
inline float TanhApprox(float x) {
  namespace vm = vector_math;
  const float a = std::min(std::fabs(x), vm::kTanhClamp);  // NaN stays NaN
  const float a2 = a * a;
  float p = vm::kTanhP[0];
  for (size_t i = 1; i < std::size(vm::kTanhP); ++i) p = p * a2 + vm::kTanhP[i];
  float q = vm::kTanhQ[0];
  for (size_t i = 1; i < std::size(vm::kTanhQ); ++i) q = q * a2 + vm::kTanhQ[i];
  return std::copysign(a * (p / q), x);
}

template <typename F>
inline void MapInPlace(float* x, int64_t n, F f) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) x[j] = f(x[j]);
}

// One cloned row kernel per activation, x[j] = f(x[j]) with the function's
// alpha and beta, as in unary.cc. Elu and Softplus (rare in recurrent cells)
// go through double libm, the reference's own arithmetic, rather than
// another approximation.
using ActivationRow = void (*)(float* x, int64_t n, float alpha, float beta);

#define AIC_ACTIVATION(name, expr)                                                        \
  AIC_KERNEL_CLONES void name(float* x, int64_t n, float alpha, float beta) {             \
    MapInPlace(x, n, [alpha, beta](float v) { return expr; });                            \
  }

AIC_ACTIVATION(ReluRow, std::max(v, 0.0f))
AIC_ACTIVATION(TanhRow, TanhApprox(v))
AIC_ACTIVATION(SigmoidRow, 1.0f / (1.0f + ExpApprox(-v)))
AIC_ACTIVATION(AffineRow, alpha * v + beta)
AIC_ACTIVATION(LeakyReluRow, v >= 0 ? v : alpha * v)
AIC_ACTIVATION(ThresholdedReluRow, v > alpha ? v : 0.0f)
AIC_ACTIVATION(ScaledTanhRow, alpha * TanhApprox(beta * v))
AIC_ACTIVATION(HardSigmoidRow, std::min(std::max(alpha * v + beta, 0.0f), 1.0f))
AIC_ACTIVATION(SoftsignRow, v / (1 + std::fabs(v)))

#undef AIC_ACTIVATION

void EluRow(float* x, int64_t n, float alpha, float) {
  for (int64_t j = 0; j < n; ++j) {
    const double v = x[j];
    x[j] = static_cast<float>(v >= 0 ? v : alpha * (std::exp(v) - 1));
  }
}

void SoftplusRow(float* x, int64_t n, float, float) {
  for (int64_t j = 0; j < n; ++j) x[j] = static_cast<float>(std::log1p(std::exp(static_cast<double>(x[j]))));
}

// The gates' usual Tanh and Sigmoid through the hand-vectorized unary
// kernels where this CPU has them (unary.h: the same approximations with FMA
// and without a division per element); the clones above took a quarter of
// an LSTM's time (batch 8, hidden 128: 1.5x ONNX Runtime's, Zen 3).
void FastTanhRow(float* x, int64_t n, float, float) {
  static const UnaryRowFn tanh_row = FastUnaryKernel("Tanh");
  tanh_row(x, x, n);
}

void FastSigmoidRow(float* x, int64_t n, float, float) {
  static const UnaryRowFn sigmoid_row = FastUnaryKernel("Sigmoid");
  sigmoid_row(x, x, n);
}

ActivationRow RowOf(Kind kind) {
  static const bool fast_tanh = FastUnaryKernel("Tanh") != nullptr;
  static const bool fast_sigmoid = FastUnaryKernel("Sigmoid") != nullptr;
  switch (kind) {
    case Kind::kRelu: return ReluRow;
    case Kind::kTanh: return fast_tanh ? FastTanhRow : TanhRow;
    case Kind::kSigmoid: return fast_sigmoid ? FastSigmoidRow : SigmoidRow;
    case Kind::kAffine: return AffineRow;
    case Kind::kLeakyRelu: return LeakyReluRow;
    case Kind::kThresholdedRelu: return ThresholdedReluRow;
    case Kind::kScaledTanh: return ScaledTanhRow;
    case Kind::kHardSigmoid: return HardSigmoidRow;
    case Kind::kElu: return EluRow;
    case Kind::kSoftsign: return SoftsignRow;
    case Kind::kSoftplus: return SoftplusRow;
  }
  return TanhRow;
}

void Activate(const GateActivation& f, float* x, int64_t n) { RowOf(f.kind)(x, n, f.alpha, f.beta); }

// The clip attribute as bounds; ±inf when there is none, which passes every
// value (NaN included) through unchanged, as the reference's unclipped path.
struct Clip {
  float lo, hi;
  float operator()(float v) const { return v < lo ? lo : (hi < v ? hi : v); }
};

// The row kernels: one batch row's gates at one time step. `xg` is the
// row's input projection (G·H), `g` its recurrent product, overwritten by
// the activated gates; h (and c) are updated in place.

AIC_KERNEL_CLONES void RnnRow(const float* xg, const float* bias, float* g, float* h, int64_t H, Clip clip,
                              const GateActivation& f) {
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) g[j] = clip(xg[j] + bias[j] + g[j]);
  Activate(f, g, H);
  std::copy(g, g + H, h);
}

// GRU's update and reset gates (z, r into g's first 2·H) and, for the
// default linear_before_reset=0, rh = r⊙h for the candidate's product.
AIC_KERNEL_CLONES void GruGates(const float* xg, const float* bias, float* g, const float* h, float* rh, int64_t H,
                                Clip clip, const GateActivation& f, bool linear_before_reset) {
#pragma omp simd
  for (int64_t j = 0; j < 2 * H; ++j) g[j] = clip(xg[j] + bias[j] + g[j]);
  Activate(f, g, 2 * H);
  if (!linear_before_reset) {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) rh[j] = g[H + j] * h[j];
  }
}

// GRU's candidate and new state. g[2H..3H) holds R_h·(r⊙h) (Rb_h is in
// `bias`), or for linear_before_reset R_h·h, to which r applies after
// adding Rb_h (`rec_bias`).
AIC_KERNEL_CLONES void GruUpdate(const float* xg, const float* bias, const float* rec_bias, float* g, float* h,
                                 int64_t H, Clip clip, const GateActivation& f, bool linear_before_reset) {
  const float* z = g;
  const float* r = g + H;
  float* cand = g + 2 * H;
  if (linear_before_reset) {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) cand[j] = clip(xg[2 * H + j] + bias[2 * H + j] + r[j] * (cand[j] + rec_bias[j]));
  } else {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) cand[j] = clip(xg[2 * H + j] + bias[2 * H + j] + cand[j]);
  }
  Activate(f, cand, H);
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) h[j] = (1 - z[j]) * cand[j] + z[j] * h[j];
}

// LSTM: i, f, c̃ from the old c's peepholes; the new c; then o from the new
// c's peephole, and h = o ⊙ act2(c). `tc` is scratch for act2(c).
AIC_KERNEL_CLONES void LstmRow(const float* xg, const float* bias, const float* peep, float* g, float* h, float* c,
                               float* tc, int64_t H, Clip clip, const GateActivation* act, bool input_forget) {
  float* gi = g;
  float* go = g + H;
  float* gf = g + 2 * H;
  float* gc = g + 3 * H;
  const float *pi = peep, *po = peep + H, *pf = peep + 2 * H;
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) gi[j] = clip(xg[j] + bias[j] + gi[j] + pi[j] * c[j]);
  if (!input_forget) {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) gf[j] = clip(xg[2 * H + j] + bias[2 * H + j] + gf[j] + pf[j] * c[j]);
  }
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) gc[j] = clip(xg[3 * H + j] + bias[3 * H + j] + gc[j]);
  Activate(act[0], gi, H);
  if (!input_forget) Activate(act[0], gf, H);
  Activate(act[1], gc, H);
  if (input_forget) {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) c[j] = (1 - gi[j]) * c[j] + gi[j] * gc[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  }
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) go[j] = clip(xg[H + j] + bias[H + j] + go[j] + po[j] * c[j]);
  Activate(act[0], go, H);
  std::copy(c, c + H, tc);
  Activate(act[2], tc, H);
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) h[j] = go[j] * tc[j];
}

// C[m, n] = A[m, k] · B[n, k]ᵀ, row-major with leading dims.
absl::Status GemmNT(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                    int64_t ldc) {
  if (dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) != dnnl_success) {
    return absl::InternalError("recurrence: dnnl_sgemm failed");
  }
  return absl::OkStatus();
}

}  // namespace

Recurrence::Recurrence(const RecurrenceConfig& cfg, Tensor w, Tensor r, const float* b, const float* p,
                       const std::vector<RnnActivation>& acts)
    : cfg_(cfg), gates_(RnnNumGates(cfg.cell)), w_(std::move(w)) {
  const int64_t H = cfg_.hidden, GH = gates_ * H;
  const size_t per_dir = RnnDefaultActivations(cfg_.cell).size();
  const bool lbr = cfg_.cell == RnnCell::kGru && cfg_.linear_before_reset;
  for (int d = 0; d < cfg_.dirs; ++d) {
    Direction dir;
    dir.w = w_.data<float>() + d * GH * cfg_.input;
    const float* rd = r.data<float>() + d * GH * H;
    if (cfg_.cell == RnnCell::kGru && !cfg_.linear_before_reset) {
      dir.rec = PanelMatrix(rd, 2 * H, H, H);
      dir.rec_candidate = PanelMatrix(rd + 2 * H * H, H, H, H);
    } else {
      dir.rec = PanelMatrix(rd, GH, H, H);
    }
    dir.bias.assign(static_cast<size_t>(GH), 0.0f);
    if (b != nullptr) {
      const float* wb = b + d * 2 * GH;
      const float* rb = wb + GH;
      for (int64_t k = 0; k < GH; ++k) {
        // linear_before_reset's candidate adds Rb inside r⊙(R_h·h + Rb_h).
        const bool inside = lbr && k >= 2 * H;
        dir.bias[k] = inside ? wb[k] : wb[k] + rb[k];
        if (inside) dir.rec_bias.push_back(rb[k]);
      }
    }
    if (lbr && dir.rec_bias.empty()) dir.rec_bias.assign(static_cast<size_t>(H), 0.0f);
    if (cfg_.cell == RnnCell::kLstm) {
      dir.peep.assign(static_cast<size_t>(3 * H), 0.0f);
      if (p != nullptr) std::copy(p + d * 3 * H, p + (d + 1) * 3 * H, dir.peep.begin());
    }
    for (size_t a = 0; a < per_dir; ++a) dir.act[a] = Decode(acts[d * per_dir + a]);
    dirs_.push_back(std::move(dir));
  }
}

int64_t Recurrence::ScratchFloats() const {
  const int64_t B = cfg_.batch, GH = gates_ * cfg_.hidden;
  return cfg_.seq * B * GH + B * GH + 3 * B * cfg_.hidden;
}

absl::Status Recurrence::Run(const RecurrenceIo& io) const {
  const int64_t S = cfg_.seq, B = cfg_.batch, I = cfg_.input, H = cfg_.hidden, GH = gates_ * H;
  const int64_t D = cfg_.dirs;
  auto len_of = [&](int64_t b) -> int64_t {
    if (io.lens == nullptr) return S;
    return io.lens_int64 ? static_cast<const int64_t*>(io.lens)[b] : static_cast<const int32_t*>(io.lens)[b];
  };
  int64_t longest = 0;
  bool ragged = false;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = len_of(b);
    if (len < 0 || len > S) return absl::InvalidArgumentError(absl::StrCat("sequence length ", len, " outside [0, ", S, "]"));
    longest = std::max(longest, len);
    ragged |= len < S;
  }
  // Steps past a row's length are never written.
  if (io.y != nullptr && ragged) std::fill(io.y, io.y + S * D * B * H, 0.0f);

  float* gx = io.scratch;     // [S·B, G·H], rows in X's order
  float* gh = gx + S * B * GH;  // [B, G·H]
  float* h = gh + B * GH;       // [B, H]
  float* c = h + B * H;         // [B, H]
  float* t = c + B * H;         // [B, H]
  auto state_at = [&](int64_t d, int64_t b) { return (cfg_.batch_first ? b * D + d : d * B + b) * H; };
  auto y_at = [&](int64_t s, int64_t d, int64_t b) {
    return (cfg_.batch_first ? (b * S + s) * D + d : (s * D + d) * B + b) * H;
  };
  auto x_row = [&](int64_t s, int64_t b) { return cfg_.batch_first ? b * S + s : s * B + b; };
  const float limit = cfg_.clip > 0 ? cfg_.clip : std::numeric_limits<float>::infinity();
  const Clip clip{-limit, limit};
  const bool gru_two_products = cfg_.cell == RnnCell::kGru && !cfg_.linear_before_reset;
  const int threads = omp_get_max_threads();
  const int64_t row_pieces = threads > 1 && B >= 2 * threads ? threads : 1;
  const int64_t rows_per_piece = (B + row_pieces - 1) / row_pieces;

  for (int64_t d = 0; d < D; ++d) {
    const Direction& p = dirs_[static_cast<size_t>(d)];
    const bool reverse = cfg_.reverse || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t at = state_at(d, b);
      if (io.h0 != nullptr) {
        std::copy(io.h0 + at, io.h0 + at + H, h + b * H);
      } else {
        std::fill(h + b * H, h + (b + 1) * H, 0.0f);
      }
      if (io.c0 != nullptr) {
        std::copy(io.c0 + at, io.c0 + at + H, c + b * H);
      } else {
        std::fill(c + b * H, c + (b + 1) * H, 0.0f);
      }
    }
    // GRU's product reads the r⊙h rows of finished batch rows too: keep them finite.
    std::fill(t, t + B * H, 0.0f);
    if (longest > 0) AIC_RETURN_IF_ERROR(GemmNT(S * B, GH, I, io.x, I, p.w, I, gx, GH));
    for (int64_t step = 0; step < longest; ++step) {
      auto time_of = [&](int64_t b) {
        const int64_t len = len_of(b);
        return step >= len ? -1 : reverse ? len - 1 - step : step;
      };
      // Batch rows [b0, b1) through the whole step: each row needs only its
      // own h (and GRU's r⊙h), so threads can take rows; `threaded` lets the
      // products split their column panels instead.
      auto step_rows = [&](int64_t b0, int64_t b1, bool threaded) {
        p.rec.Multiply(h + b0 * H, b1 - b0, H, gh + b0 * GH, GH, threaded);
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t s = time_of(b);
          if (s < 0) continue;
          const float* xg = gx + x_row(s, b) * GH;
          float* g = gh + b * GH;
          switch (cfg_.cell) {
            case RnnCell::kRnn:
              RnnRow(xg, p.bias.data(), g, h + b * H, H, clip, p.act[0]);
              break;
            case RnnCell::kGru:
              GruGates(xg, p.bias.data(), g, h + b * H, t + b * H, H, clip, p.act[0], cfg_.linear_before_reset);
              break;
            case RnnCell::kLstm:
              LstmRow(xg, p.bias.data(), p.peep.data(), g, h + b * H, c + b * H, t + b * H, H, clip, p.act,
                      cfg_.input_forget);
              break;
          }
        }
        if (cfg_.cell == RnnCell::kGru) {
          if (gru_two_products) p.rec_candidate.Multiply(t + b0 * H, b1 - b0, H, gh + b0 * GH + 2 * H, GH, threaded);
          for (int64_t b = b0; b < b1; ++b) {
            const int64_t s = time_of(b);
            if (s < 0) continue;
            GruUpdate(gx + x_row(s, b) * GH, p.bias.data(), p.rec_bias.data(), gh + b * GH, h + b * H, H, clip,
                      p.act[1], cfg_.linear_before_reset);
          }
        }
        if (io.y != nullptr) {
          for (int64_t b = b0; b < b1; ++b) {
            const int64_t s = time_of(b);
            if (s >= 0) std::copy(h + b * H, h + (b + 1) * H, io.y + y_at(s, d, b));
          }
        }
      };
      // Rows over threads once each gets two; else one team per product
      // (a single sequence: the products' panels are the only parallel work).
      if (row_pieces > 1) {
        ParallelFor(row_pieces, rows_per_piece * GH * H, [&](int64_t q) {
          step_rows(q * rows_per_piece, std::min(B, (q + 1) * rows_per_piece), false);
        });
      } else {
        step_rows(0, B, true);
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      const int64_t at = state_at(d, b);
      if (io.yh != nullptr) std::copy(h + b * H, h + (b + 1) * H, io.yh + at);
      if (io.yc != nullptr) std::copy(c + b * H, c + (b + 1) * H, io.yc + at);
    }
  }
  return absl::OkStatus();
}

}  // namespace aic::cpu::kernels

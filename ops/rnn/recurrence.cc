// The recurrence time loop and the three cell updates (RNN, GRU, LSTM), in
// double, one batch row and direction at a time; see recurrence.h.
#include "ops/rnn/recurrence.h"

#include <algorithm>
#include <cmath>

#include "ops/misc/numeric_util.h"
#include "ops/rnn/rnn_activation.h"

namespace aic {

const char* RnnCellName(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn: return "RNN";
    case RnnCell::kGru: return "GRU";
    case RnnCell::kLstm: return "LSTM";
  }
  return "?";
}

int RnnNumGates(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn: return 1;
    case RnnCell::kGru: return 3;
    case RnnCell::kLstm: return 4;
  }
  return 1;
}

std::vector<std::string> RnnDefaultActivations(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn: return {"Tanh"};
    case RnnCell::kGru: return {"Sigmoid", "Tanh"};
    case RnnCell::kLstm: return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

int RnnNumDirections(const Node& node) {
  std::string d = node.GetString("direction", "forward");
  if (d == "forward" || d == "reverse") return 1;
  if (d == "bidirectional") return 2;
  return -1;
}

absl::Status InferRecurrence(OpContext& ctx, RnnCell cell) {
  const int dirs = RnnNumDirections(ctx.node());
  if (dirs < 0) return ctx.Error("direction must be forward, reverse or bidirectional");
  for (size_t i : {0, 1, 2}) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " (X, W, R) is required");
  }
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "X"));
  const int64_t layout = ctx.opset() >= 14 ? ctx.node().GetInt("layout", 0) : 0;
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const Shape& r = ctx.input_shape(2);
  if (x.has_rank() && x.rank() != 3) return ctx.Error("X must have rank 3, got ", x.ToString());
  if (w.has_rank() && w.rank() != 3) return ctx.Error("W must have rank 3, got ", w.ToString());
  if (r.has_rank() && r.rank() != 3) return ctx.Error("R must have rank 3, got ", r.ToString());
  Dim hidden = ctx.FreshDim();
  if (ctx.node().HasAttr("hidden_size")) {
    hidden = Dim(ctx.node().GetInt("hidden_size", 0));
  } else if (r.has_rank() && !r[2].is_unknown()) {
    hidden = r[2];
  } else if (w.has_rank() && w[1].is_value()) {
    hidden = Dim(w[1].value() / RnnNumGates(cell));
  }
  if (w.has_rank() && w[0].is_value() && w[0].value() != dirs) {
    return ctx.Error("W has ", w[0].value(), " directions, direction attribute says ", dirs);
  }
  Dim seq = x.has_rank() ? x[layout == 0 ? 0 : 1] : ctx.FreshDim();
  Dim batch = x.has_rank() ? x[layout == 0 ? 1 : 0] : ctx.FreshDim();
  const DType dt = ctx.input_dtype(0);
  if (layout == 0) {
    ctx.set_output(0, dt, Shape({seq, Dim(dirs), batch, hidden}));
  } else {
    ctx.set_output(0, dt, Shape({batch, seq, Dim(dirs), hidden}));
  }
  Shape state = layout == 0 ? Shape({Dim(dirs), batch, hidden}) : Shape({batch, Dim(dirs), hidden});
  for (size_t o = 1; o < ctx.num_outputs(); ++o) ctx.set_output(o, dt, state);
  return absl::OkStatus();
}

namespace {

double Dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

// One direction's parameters, as views into the whole-tensor vectors.
struct DirParams {
  const double* w;   // [G·H, I]
  const double* r;   // [G·H, H]
  const double* wb;  // [G·H]
  const double* rb;  // [G·H]
  const double* p;   // [3·H] (LSTM peepholes: i, o, f) or nullptr
  const RnnActivation* act;  // this direction's activations
};

struct CellConfig {
  RnnCell cell;
  int64_t hidden;
  int64_t input;
  double clip;  // <= 0: none
  bool linear_before_reset;
  bool input_forget;
};

// Updates h (and c for LSTM) in place for one batch row and one time step.
void Step(const CellConfig& cfg, const DirParams& dp, const double* x, std::vector<double>& h,
          std::vector<double>& c) {
  const int64_t H = cfg.hidden, I = cfg.input, G = RnnNumGates(cfg.cell);
  auto clip = [&](double v) { return cfg.clip > 0 ? std::clamp(v, -cfg.clip, cfg.clip) : v; };
  // gx = W·x + Wb and gh = R·h + Rb, gate blocks of H rows each.
  std::vector<double> gx(static_cast<size_t>(G * H)), gh(static_cast<size_t>(G * H));
  for (int64_t k = 0; k < G * H; ++k) {
    gx[static_cast<size_t>(k)] = Dot(dp.w + k * I, x, I) + dp.wb[k];
    gh[static_cast<size_t>(k)] = Dot(dp.r + k * H, h.data(), H) + dp.rb[k];
  }
  auto at = [&](const std::vector<double>& v, int gate, int64_t j) {
    return v[static_cast<size_t>(gate * H + j)];
  };
  std::vector<double> next(static_cast<size_t>(H));
  switch (cfg.cell) {
    case RnnCell::kRnn:
      for (int64_t j = 0; j < H; ++j) next[j] = dp.act[0](clip(at(gx, 0, j) + at(gh, 0, j)));
      break;
    case RnnCell::kGru: {
      std::vector<double> z(H), rh(H);  // update gate, r ⊙ h_{t-1}
      std::vector<double> r(H);
      for (int64_t j = 0; j < H; ++j) {
        z[j] = dp.act[0](clip(at(gx, 0, j) + at(gh, 0, j)));
        r[j] = dp.act[0](clip(at(gx, 1, j) + at(gh, 1, j)));
        rh[j] = r[j] * h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        // linear_before_reset applies r after R_h·h (cuDNN's variant); the
        // default applies it to h before the product.
        const double rec = cfg.linear_before_reset
                               ? r[j] * at(gh, 2, j)
                               : Dot(dp.r + (2 * H + j) * H, rh.data(), H) + dp.rb[2 * H + j];
        const double cand = dp.act[1](clip(at(gx, 2, j) + rec));
        next[j] = (1 - z[j]) * cand + z[j] * h[j];
      }
      break;
    }
    case RnnCell::kLstm: {
      const double* p = dp.p;
      for (int64_t j = 0; j < H; ++j) {
        const double pi = p ? p[j] : 0, po = p ? p[H + j] : 0, pf = p ? p[2 * H + j] : 0;
        const double i = dp.act[0](clip(at(gx, 0, j) + at(gh, 0, j) + pi * c[j]));
        const double f = cfg.input_forget ? 1 - i
                                          : dp.act[0](clip(at(gx, 2, j) + at(gh, 2, j) + pf * c[j]));
        const double g = dp.act[1](clip(at(gx, 3, j) + at(gh, 3, j)));
        c[j] = f * c[j] + i * g;
        const double o = dp.act[0](clip(at(gx, 1, j) + at(gh, 1, j) + po * c[j]));
        next[j] = o * dp.act[2](c[j]);
      }
      break;
    }
  }
  h = std::move(next);
}

}  // namespace

absl::Status RecurrenceKernel(KernelContext& ctx, RnnCell cell) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1, 2}, {3, 4, 5, 6, 7}));
  const Node& node = ctx.node();
  const int dirs = RnnNumDirections(node);
  if (dirs < 0) return ctx.Error("direction must be forward, reverse or bidirectional");
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  const Tensor& rt = ctx.input(2);
  if (!IsRealFloat(xt.dtype())) return ctx.Unimplemented("X dtype ", DTypeName(xt.dtype()));
  if (xt.rank() != 3 || wt.rank() != 3 || rt.rank() != 3) return ctx.Error("X, W, R must have rank 3");
  const int64_t layout = ctx.opset() >= 14 ? node.GetInt("layout", 0) : 0;
  const int64_t G = RnnNumGates(cell);
  const int64_t S = xt.dim(layout == 0 ? 0 : 1), B = xt.dim(layout == 0 ? 1 : 0), I = xt.dim(2);
  const int64_t H = rt.dim(2);
  if (node.HasAttr("hidden_size") && node.GetInt("hidden_size", 0) != H) {
    return ctx.Error("hidden_size ", node.GetInt("hidden_size", 0), " != R's last dim ", H);
  }
  if (wt.dims() != std::vector<int64_t>{dirs, G * H, I} ||
      rt.dims() != std::vector<int64_t>{dirs, G * H, H}) {
    return ctx.Error("W ", DimsToString(wt.dims()), " / R ", DimsToString(rt.dims()),
                     " do not match ", dirs, " direction(s), ", G, " gate(s), hidden ", H,
                     ", input ", I);
  }
  AIC_ASSIGN_OR_RETURN(std::vector<RnnActivation> acts,
                       ParseRnnActivations(node, RnnDefaultActivations(cell), dirs));
  const std::vector<double> x = ToDoubles(xt), w = ToDoubles(wt), r = ToDoubles(rt);
  std::vector<double> bias(static_cast<size_t>(dirs * 2 * G * H), 0.0);
  if (ctx.has_input(3)) {
    if (ctx.input(3).num_elements() != dirs * 2 * G * H) return ctx.Error("B has the wrong size");
    bias = ToDoubles(ctx.input(3));
  }
  std::vector<int64_t> lens(static_cast<size_t>(B), S);
  if (ctx.has_input(4)) {
    lens = ToInt64s(ctx.input(4));
    if (static_cast<int64_t>(lens.size()) != B) return ctx.Error("sequence_lens must have B entries");
    for (int64_t l : lens) {
      if (l < 0 || l > S) return ctx.Error("sequence length ", l, " outside [0, ", S, "]");
    }
  }
  // States are [D, B, H] (layout 0) or [B, D, H] (layout 1).
  auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return static_cast<size_t>((layout == 0 ? d * B + b : b * dirs + d) * H + j);
  };
  auto read_state = [&](size_t input) -> absl::StatusOr<std::vector<double>> {
    if (!ctx.has_input(input)) return std::vector<double>(static_cast<size_t>(dirs * B * H), 0.0);
    if (ctx.input(input).num_elements() != dirs * B * H) {
      return ctx.Error("initial state input ", input, " must have ", dirs * B * H, " elements");
    }
    return ToDoubles(ctx.input(input));
  };
  AIC_ASSIGN_OR_RETURN(std::vector<double> h0, read_state(5));
  std::vector<double> c0(static_cast<size_t>(dirs * B * H), 0.0);
  std::vector<double> peep;
  if (cell == RnnCell::kLstm) {
    AIC_ASSIGN_OR_RETURN(c0, read_state(6));
    if (ctx.has_input(7)) {
      if (ctx.input(7).num_elements() != dirs * 3 * H) return ctx.Error("P must be [D, 3·H]");
      peep = ToDoubles(ctx.input(7));
    }
  }
  const CellConfig cfg{cell, H, I, node.HasAttr("clip") ? node.GetFloat("clip", 0) : 0.0,
                       node.GetInt("linear_before_reset", 0) != 0,
                       node.GetInt("input_forget", 0) != 0};
  const bool reverse_only = node.GetString("direction", "forward") == "reverse";
  const size_t per_dir = RnnDefaultActivations(cell).size();

  std::vector<double> y(static_cast<size_t>(S * dirs * B * H), 0.0);  // [S, D, B, H]
  std::vector<double> yh(static_cast<size_t>(dirs * B * H)), yc(yh.size());
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = reverse_only || d == 1;
    DirParams dp{w.data() + d * G * H * I,
                 r.data() + d * G * H * H,
                 bias.data() + d * 2 * G * H,
                 bias.data() + d * 2 * G * H + G * H,
                 peep.empty() ? nullptr : peep.data() + d * 3 * H,
                 acts.data() + d * per_dir};
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0[state_index(d, b, j)];
        c[j] = c0[state_index(d, b, j)];
      }
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t t = 0; t < len; ++t) {
        const int64_t s = reverse ? len - 1 - t : t;
        const int64_t x_off = (layout == 0 ? s * B + b : b * S + s) * I;
        Step(cfg, dp, x.data() + x_off, h, c);
        std::copy(h.begin(), h.end(), y.begin() + ((s * dirs + d) * B + b) * H);
      }
      for (int64_t j = 0; j < H; ++j) {
        yh[state_index(d, b, j)] = h[j];
        yc[state_index(d, b, j)] = c[j];
      }
    }
  }
  const DType dt = xt.dtype();
  if (layout == 0) {
    ctx.set_output(0, FromDoubles(y, {S, dirs, B, H}, dt));
  } else {  // [S, D, B, H] -> [B, S, D, H]
    std::vector<double> yt(y.size());
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t b = 0; b < B; ++b)
          std::copy_n(y.begin() + ((s * dirs + d) * B + b) * H, H,
                      yt.begin() + ((b * S + s) * dirs + d) * H);
    ctx.set_output(0, FromDoubles(yt, {B, S, dirs, H}, dt));
  }
  std::vector<int64_t> state_dims =
      layout == 0 ? std::vector<int64_t>{dirs, B, H} : std::vector<int64_t>{B, dirs, H};
  if (ctx.num_outputs() > 1) ctx.set_output(1, FromDoubles(yh, state_dims, dt));
  if (ctx.num_outputs() > 2 && cell == RnnCell::kLstm) ctx.set_output(2, FromDoubles(yc, state_dims, dt));
  return absl::OkStatus();
}

}  // namespace aic

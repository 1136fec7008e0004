// Signal processing (opset 17): DFT and STFT, the Hann / Hamming / Blackman
// window generators and MelWeightMatrix. Complex values travel as a trailing
// axis of 2 (real, imaginary). The reference DFT is the O(N²) sum, computed in
// double: slow but plainly the definition.
#include <cmath>
#include <complex>
#include <numbers>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

using Complex = std::complex<double>;

// out[k] = Σ_{j<n} in[j]·e^{∓2πi·jk/length}, k < out_len; inputs past n (when
// length > n) are zero padding. Inverse transforms scale by 1/length.
void Dft(const std::vector<Complex>& in, int64_t length, bool inverse, int64_t out_len,
         Complex* out) {
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(in.size()), length);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < out_len; ++k) {
    Complex s = 0;
    for (int64_t j = 0; j < n; ++j) {
      // Reduce j·k mod length first: keeps the angle small and exact.
      const double angle = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % length) /
                           static_cast<double>(length);
      s += in[static_cast<size_t>(j)] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? s / static_cast<double>(length) : s;
  }
}

// Scalar integer input i when it is present (at run time).
std::optional<int64_t> ScalarInput(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i) || ctx.input(i).num_elements() != 1) return std::nullopt;
  return ToInt64s(ctx.input(i))[0];
}

// ...and statically, when the input is a known constant.
std::optional<int64_t> ConstScalar(const OpContext& ctx, size_t i) {
  const Tensor* t = ctx.has_input(i) ? ctx.input_constant(i) : nullptr;
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  return ToInt64s(*t)[0];
}

// ---- DFT ----

// The transformed axis, counted on the full input rank (the trailing complex
// axis cannot be chosen): opset 17-19 read attribute `axis` (default 1), opset
// 20 reads optional input 2 (default -2). nullopt when input 2 is not known.
template <typename Ctx>
absl::StatusOr<std::optional<int64_t>> DftAxis(const Ctx& ctx, std::optional<int64_t> axis_input,
                                               int64_t rank) {
  int64_t axis = ctx.node().GetInt("axis", 1);
  if (ctx.opset() >= 20) {
    if (ctx.has_input(2) && !axis_input) return std::optional<int64_t>();
    axis = axis_input.value_or(-2);
  }
  absl::StatusOr<int64_t> a = NormalizeAxis(axis, rank);
  if (!a.ok() || *a == rank - 1) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return std::optional<int64_t>(*a);
}

// numpy's irfft: the first length/2 + 1 bins of a Hermitian spectrum give a
// real signal of `length` samples; the imaginary parts of bin 0 (and of bin
// length/2 when length is even) are ignored.
void InverseRealDft(const std::vector<Complex>& in, int64_t length, double* out) {
  auto bin = [&](int64_t k) {
    return k < static_cast<int64_t>(in.size()) ? in[static_cast<size_t>(k)] : Complex(0);
  };
  const int64_t pairs = (length - 1) / 2;  // bins with a conjugate partner
  for (int64_t t = 0; t < length; ++t) {
    double s = bin(0).real();
    for (int64_t k = 1; k <= pairs; ++k) {
      const double angle = 2 * std::numbers::pi * static_cast<double>((k * t) % length) /
                           static_cast<double>(length);
      s += 2 * (bin(k) * Complex(std::cos(angle), std::sin(angle))).real();
    }
    if (length % 2 == 0) s += (t % 2 == 0 ? 1 : -1) * bin(length / 2).real();
    out[t] = s / static_cast<double>(length);
  }
}

absl::Status DftKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}, {1, 2}));
  const Tensor& x = ctx.input(0);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("DFT of ", DTypeName(x.dtype()));
  if (x.rank() < 2 || (x.dim(x.rank() - 1) != 1 && x.dim(x.rank() - 1) != 2)) {
    return ctx.Error("input must end in a complex axis of 1 or 2, got ", DimsToString(x.dims()));
  }
  const int64_t rank = x.rank();
  absl::StatusOr<std::optional<int64_t>> ax = DftAxis(ctx, ScalarInput(ctx, 2), rank);
  if (!ax.ok()) return ctx.Error(ax.status().message());
  if (!ax->has_value()) return ctx.Error("axis must be a scalar");
  const int64_t axis = **ax;
  const bool inverse = ctx.node().GetInt("inverse", 0) != 0;
  const bool onesided = ctx.node().GetInt("onesided", 0) != 0;
  // inverse + onesided is the inverse real DFT: one-sided bins in, real samples out.
  const bool real_out = inverse && onesided;
  const int64_t n = x.dim(axis);
  const int64_t length = ScalarInput(ctx, 1).value_or(real_out ? 2 * (n - 1) : n);
  if (length < 1) return ctx.Error("dft_length must be positive, got ", length);
  const int64_t out_len = real_out ? length : onesided ? length / 2 + 1 : length;
  const int64_t out_c = real_out ? 1 : 2;
  const bool complex_in = x.dim(rank - 1) == 2;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
  const std::vector<double> xs = ToDoubles(x);
  std::vector<int64_t> out_dims = x.dims();
  out_dims[axis] = out_len;
  out_dims[rank - 1] = out_c;
  std::vector<double> y(static_cast<size_t>(outer * out_len * inner * out_c));
  std::vector<Complex> seq(static_cast<size_t>(n)), res(static_cast<size_t>(out_len));
  std::vector<double> real_res(static_cast<size_t>(real_out ? out_len : 0));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = static_cast<size_t>(((o * n + j) * inner + i) * (complex_in ? 2 : 1));
        seq[j] = Complex(xs[at], complex_in ? xs[at + 1] : 0.0);
      }
      if (real_out) {
        InverseRealDft(seq, length, real_res.data());
      } else {
        Dft(seq, length, inverse, out_len, res.data());
      }
      for (int64_t k = 0; k < out_len; ++k) {
        const size_t at = static_cast<size_t>(((o * out_len + k) * inner + i) * out_c);
        if (real_out) {
          y[at] = real_res[k];
        } else {
          y[at] = res[k].real();
          y[at + 1] = res[k].imag();
        }
      }
    }
  }
  ctx.set_output(0, FromDoubles(y, out_dims, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferDft(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "input"));
  const Shape& x = ctx.input_shape(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), x);
    return absl::OkStatus();
  }
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2, got ", x.ToString());
  absl::StatusOr<std::optional<int64_t>> axis = DftAxis(ctx, ConstScalar(ctx, 2), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const bool inverse = ctx.node().GetInt("inverse", 0) != 0;
  const bool onesided = ctx.node().GetInt("onesided", 0) != 0;
  const bool real_out = inverse && onesided;
  std::vector<Dim> dims = x.dims();
  dims.back() = Dim(real_out ? 1 : 2);
  if (!axis->has_value()) {
    // Axis unknown until run time: only the length-preserving case is known.
    if (ctx.has_input(1) || onesided) {
      for (size_t d = 0; d + 1 < dims.size(); ++d) dims[d] = ctx.FreshDim();
    }
    ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
    return absl::OkStatus();
  }
  const int64_t a = **axis;
  Dim len = dims[a];
  if (ctx.has_input(1)) {
    std::optional<int64_t> l = ConstScalar(ctx, 1);
    len = l ? Dim(*l) : ctx.FreshDim();
  } else if (real_out) {
    len = len.is_value() ? Dim(2 * (len.value() - 1)) : ctx.FreshDim();
  }
  if (onesided && !inverse) len = len.is_value() ? Dim(len.value() / 2 + 1) : ctx.FreshDim();
  dims[a] = len;
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return absl::OkStatus();
}

// ---- STFT ----

absl::Status StftKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}, {2, 3}));
  const Tensor& sig = ctx.input(0);
  if (!IsRealFloat(sig.dtype())) return ctx.Unimplemented("STFT of ", DTypeName(sig.dtype()));
  if (sig.rank() != 3 || (sig.dim(2) != 1 && sig.dim(2) != 2)) {
    return ctx.Error("signal must be [batch, length, 1 or 2]");
  }
  const std::optional<int64_t> step = ScalarInput(ctx, 1);
  if (!step || *step < 1) return ctx.Error("frame_step must be a positive scalar");
  std::vector<double> window;
  if (ctx.has_input(2)) window = ToDoubles(ctx.input(2));
  const int64_t frame = ScalarInput(ctx, 3).value_or(static_cast<int64_t>(window.size()));
  if (frame < 1 || frame > sig.dim(1)) return ctx.Error("frame_length ", frame, " out of range");
  if (!window.empty() && static_cast<int64_t>(window.size()) != frame) {
    return ctx.Error("window length ", window.size(), " != frame_length ", frame);
  }
  const bool onesided = ctx.node().GetInt("onesided", 1) != 0;
  const int64_t bins = onesided ? frame / 2 + 1 : frame;
  const int64_t batch = sig.dim(0), len = sig.dim(1), frames = (len - frame) / *step + 1;
  const bool complex_in = sig.dim(2) == 2;
  const std::vector<double> xs = ToDoubles(sig);
  std::vector<double> y(static_cast<size_t>(batch * frames * bins * 2));
  std::vector<Complex> seq(static_cast<size_t>(frame)), res(static_cast<size_t>(bins));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frame; ++j) {
        const size_t at = static_cast<size_t>((b * len + f * *step + j) * sig.dim(2));
        const double w = window.empty() ? 1.0 : window[static_cast<size_t>(j)];
        seq[j] = w * Complex(xs[at], complex_in ? xs[at + 1] : 0.0);
      }
      Dft(seq, frame, false, bins, res.data());
      for (int64_t k = 0; k < bins; ++k) {
        const size_t at = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        y[at] = res[k].real();
        y[at + 1] = res[k].imag();
      }
    }
  }
  ctx.set_output(0, FromDoubles(y, {batch, frames, bins, 2}, sig.dtype()));
  return absl::OkStatus();
}

absl::Status InferStft(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "signal"));
  const Shape& s = ctx.input_shape(0);
  if (s.has_rank() && s.rank() != 3) return ctx.Error("signal must have rank 3, got ", s.ToString());
  std::optional<int64_t> frame = ConstScalar(ctx, 3);
  if (!frame && ctx.has_input(2) && ctx.input_shape(2).has_rank() && ctx.input_shape(2).rank() == 1 &&
      ctx.input_shape(2)[0].is_value()) {
    frame = ctx.input_shape(2)[0].value();
  }
  const std::optional<int64_t> step = ConstScalar(ctx, 1);
  Dim batch = s.has_rank() ? s[0] : ctx.FreshDim();
  Dim frames = ctx.FreshDim(), bins = ctx.FreshDim();
  if (frame && step && *step > 0 && s.has_rank() && s[1].is_value()) {
    frames = Dim((s[1].value() - *frame) / *step + 1);
  }
  if (frame) bins = Dim(ctx.node().GetInt("onesided", 1) != 0 ? *frame / 2 + 1 : *frame);
  ctx.set_output(0, ctx.input_dtype(0), Shape({batch, frames, bins, 2}));
  return absl::OkStatus();
}

Traits FourierTraits(const OpContext& ctx, bool short_time) {
  Traits t;
  t.semantic_name = short_time ? "STFT" : "DFT";
  t.meaning = short_time ? "X[f, k] = Σ_n w[n]·x[f·step + n]·e^{−2πi·kn/L}"
                         : "X[k] = Σ_n x[n]·e^{∓2πi·kn/N}";
  t.linearity = Linearity::kLinear;
  // A full DFT is a bijection; onesided output or framing drops information.
  const bool onesided = ctx.node().GetInt("onesided", short_time ? 1 : 0) != 0;
  t.invertibility = short_time || onesided ? Invertibility::kUnknown : Invertibility::kInvertible;
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = "time → frequency";
  return t;
}

// One complex multiply-add (4 real MACs) per input sample per output bin.
Cost FourierCost(const OpContext& ctx, bool short_time) {
  Cost c = BytesOnlyCost(ctx);
  const int64_t out = ctx.num_outputs() ? StaticElements(ctx.output_type(0)) : -1;
  const Shape& x = ctx.input_shape(0);
  if (out < 0 || !x.IsStatic() || x.rank() < 2) return c;
  int64_t per_out;  // input samples summed per output value
  if (short_time) {
    const Shape& o = ctx.output_type(0).shape;
    per_out = o[2].value();  // frame length >= bins; approximate by bins
  } else {
    absl::StatusOr<std::optional<int64_t>> axis = DftAxis(ctx, ConstScalar(ctx, 2), x.rank());
    per_out = axis.ok() && axis->has_value() ? x[**axis].value() : 0;
  }
  c.macs = out / 2 * per_out * 4;
  c.flops = 2 * c.macs;
  return c;
}

// ---- windows ----

enum class Window { kHann, kHamming, kBlackman };

double WindowValue(Window w, int64_t n, int64_t denom) {
  const double x = 2 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(denom);
  switch (w) {
    case Window::kHann: return 0.5 - 0.5 * std::cos(x);
    case Window::kHamming: return 25.0 / 46 - 21.0 / 46 * std::cos(x);
    case Window::kBlackman: return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
  }
  return 0;
}

DType OutputDatatype(const Node& node) {
  return static_cast<DType>(node.GetInt("output_datatype", static_cast<int64_t>(DType::kFloat)));
}

absl::Status WindowKernel(KernelContext& ctx, Window w) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const std::optional<int64_t> size = ScalarInput(ctx, 0);
  if (!size || *size < 0) return ctx.Error("size must be a non-negative scalar");
  // Periodic windows are one period of an N-periodic signal; symmetric ones
  // end where they started (denominator N − 1).
  const bool periodic = ctx.node().GetInt("periodic", 1) != 0;
  const int64_t denom = periodic ? *size : *size - 1;
  std::vector<double> y(static_cast<size_t>(*size));
  for (int64_t n = 0; n < *size; ++n) y[static_cast<size_t>(n)] = denom > 0 ? WindowValue(w, n, denom) : 1.0;
  ctx.set_output(0, FromDoubles(y, {*size}, OutputDatatype(ctx.node())));
  return absl::OkStatus();
}

absl::Status InferGenerator(OpContext& ctx, int rank) {
  const DType dt = OutputDatatype(ctx.node());
  if (!IsKnownDType(static_cast<int32_t>(dt)) || dt == DType::kString) {
    return ctx.Error("bad output_datatype ", static_cast<int>(dt));
  }
  if (rank == 1) {
    std::optional<int64_t> size = ConstScalar(ctx, 0);
    ctx.set_output(0, dt, Shape({size ? Dim(*size) : ctx.FreshDim()}));
  } else {  // MelWeightMatrix: [dft_length/2 + 1, num_mel_bins]
    std::optional<int64_t> mel = ConstScalar(ctx, 0), dft = ConstScalar(ctx, 1);
    ctx.set_output(0, dt, Shape({dft ? Dim(*dft / 2 + 1) : ctx.FreshDim(),
                                 mel ? Dim(*mel) : ctx.FreshDim()}));
  }
  return absl::OkStatus();
}

Traits GeneratorTraits(const char* name, const char* meaning) {
  Traits t;
  t.semantic_name = name;
  t.meaning = meaning;
  t.effect_detail = "generates a constant from its size inputs";
  t.removable_when = "its inputs are constant (fold to an initializer)";
  return t;
}

// ---- MelWeightMatrix ----

// Triangular filters between mel-spaced bin edges, exactly as the ONNX
// reference computes them (edges floored to DFT bins).
absl::Status MelKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1, 2, 3, 4}));
  for (size_t i = 0; i < 5; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).num_elements() != 1) return ctx.Error("input ", i, " must be a scalar");
  }
  const int64_t mel_bins = ToInt64s(ctx.input(0))[0];
  const int64_t dft_length = ToInt64s(ctx.input(1))[0];
  const int64_t sample_rate = ToInt64s(ctx.input(2))[0];
  const double lower = ctx.input(3).ElementAsDouble(0), upper = ctx.input(4).ElementAsDouble(0);
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) return ctx.Error("sizes must be positive");
  const int64_t spec_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low_mel = to_mel(lower), high_mel = to_mel(upper);
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595) - 1);
    edges[static_cast<size_t>(i)] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
  }
  std::vector<double> out(static_cast<size_t>(spec_bins * mel_bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    return out[static_cast<size_t>(std::clamp<int64_t>(j, 0, spec_bins - 1) * mel_bins + i)];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edges[i], mid = edges[i + 1], hi = edges[i + 2];
    if (mid == lo) {
      at(mid, i) = 1;
    } else {
      for (int64_t j = lo; j <= mid; ++j) at(j, i) = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
    }
    for (int64_t j = mid; j < hi; ++j) at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
  }
  ctx.set_output(0, FromDoubles(out, {spec_bins, mel_bins}, OutputDatatype(ctx.node())));
  return absl::OkStatus();
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  for (bool short_time : {false, true}) {
    r.Register(OpDef{
        .domain = "",
        .op_type = short_time ? "STFT" : "DFT",
        .since_version = 17,
        .infer = short_time ? InferStft : InferDft,
        .traits = [short_time](const OpContext& ctx) { return FourierTraits(ctx, short_time); },
        .cost = [short_time](const OpContext& ctx) { return FourierCost(ctx, short_time); },
        .kernel = short_time ? StftKernel : DftKernel,
    });
  }
  struct WindowOp {
    const char* name;
    Window w;
    const char* meaning;
  };
  for (const WindowOp& op : {WindowOp{"HannWindow", Window::kHann, "w[n] = 0.5 − 0.5·cos(2πn/N)"},
                             WindowOp{"HammingWindow", Window::kHamming,
                                      "w[n] = 25/46 − 21/46·cos(2πn/N)"},
                             WindowOp{"BlackmanWindow", Window::kBlackman,
                                      "w[n] = 0.42 − 0.5·cos(2πn/N) + 0.08·cos(4πn/N)"}}) {
    r.Register(OpDef{
        .domain = "",
        .op_type = op.name,
        .since_version = 17,
        .infer = [](OpContext& ctx) { return InferGenerator(ctx, 1); },
        .traits = [op](const OpContext&) { return GeneratorTraits("Window", op.meaning); },
        .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 4); },
        .kernel = [w = op.w](KernelContext& ctx) { return WindowKernel(ctx, w); },
    });
  }
  r.Register(OpDef{
      .domain = "",
      .op_type = "MelWeightMatrix",
      .since_version = 17,
      .infer = [](OpContext& ctx) { return InferGenerator(ctx, 2); },
      .traits = [](const OpContext&) {
        return GeneratorTraits("MelWeightMatrix", "triangular filters on the mel scale, mel(f) = 2595·log10(1 + f/700)");
      },
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = MelKernel,
  });
}

}  // namespace aic

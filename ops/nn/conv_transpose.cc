// ConvTranspose: the adjoint of Conv. The reference kernel scatters every
// input element through the kernel into the (padded) output, which is the
// definition; output size comes from strides, output_padding, pads or
// output_shape/auto_pad (conv_geometry.cc).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/conv_internal.h"

namespace aic {

namespace {

absl::StatusOr<TransposeWindow> TransposeWindowFor(const Node& node, const std::vector<int64_t>& x,
                                                   const std::vector<int64_t>& w, int64_t group) {
  auto fail = [&](auto... args) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": ", args...));
  };
  if (x.size() < 3) return fail("input must have rank >= 3, got ", DimsToString(x));
  if (w.size() != x.size()) return fail("weight ", DimsToString(w), " vs input ", DimsToString(x));
  if (group <= 0 || w[0] != x[1] || x[1] % group != 0) {
    return fail("weight has ", w[0], " input channels, input has ", x[1], " (group ", group, ")");
  }
  std::vector<int64_t> kernel = node.GetInts("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
  if (!std::equal(kernel.begin(), kernel.end(), w.begin() + 2, w.end())) {
    return fail("kernel_shape does not match the weight");
  }
  return ReadTransposeWindow(node, kernel);
}

absl::Status ConvTransposeKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  int64_t group = ctx.node().GetInt("group", 1);
  AIC_ASSIGN_OR_RETURN(TransposeWindow tw, TransposeWindowFor(ctx.node(), xt.dims(), wt.dims(), group));
  const std::vector<int64_t>& xd = xt.dims();
  std::vector<int64_t> in_sp(xd.begin() + 2, xd.end());
  std::vector<int64_t> out_sp = ResolveTransposeWindow(tw, in_sp);
  const Window& win = tw.window;
  size_t nsp = win.rank();
  int64_t batch = xd[0], c_in = xd[1], c_per_group = c_in / group;
  int64_t m_per_group = wt.dim(1), m_out = m_per_group * group;
  int64_t in_size = NumElements(in_sp), out_size = NumElements(out_sp), kvol = win.kernel_volume();
  for (int64_t d : out_sp) {
    if (d < 0) return ctx.Error("negative output extent");
  }
  std::vector<double> x = TensorToDoubles(xt), w = TensorToDoubles(wt);
  std::vector<double> y(static_cast<size_t>(batch * m_out * out_size), 0.0);
  std::vector<int64_t> out_strides(nsp, 1);
  for (size_t k = nsp; k-- > 1;) out_strides[k - 1] = out_strides[k] * out_sp[k];
  std::vector<int64_t> i(nsp, 0), kk(nsp, 0);
  int64_t ii = 0;
  if (in_size > 0 && out_size > 0) {
    do {
      // Output offset each kernel tap of this input position lands on (-1: cropped).
      std::vector<int64_t> taps;
      std::fill(kk.begin(), kk.end(), 0);
      do {
        int64_t off = 0;
        for (size_t d = 0; d < nsp && off >= 0; ++d) {
          int64_t pos = i[d] * win.strides[d] + kk[d] * win.dilations[d] - win.pad_begin(d);
          off = (pos < 0 || pos >= out_sp[d]) ? -1 : off + pos * out_strides[d];
        }
        taps.push_back(off);
      } while (NextMultiIndex(kk, win.kernel));
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t c = 0; c < c_in; ++c) {
          double xv = x[static_cast<size_t>((n * c_in + c) * in_size + ii)];
          int64_t g = c / c_per_group;
          for (int64_t mo = 0; mo < m_per_group; ++mo) {
            double* yp = y.data() + (n * m_out + g * m_per_group + mo) * out_size;
            const double* wp = w.data() + (c * m_per_group + mo) * kvol;
            for (int64_t t = 0; t < kvol; ++t) {
              if (taps[static_cast<size_t>(t)] >= 0) yp[taps[static_cast<size_t>(t)]] += xv * wp[t];
            }
          }
        }
      }
      ++ii;
    } while (NextMultiIndex(i, in_sp));
  }
  if (ctx.has_input(2)) {
    std::vector<double> b = TensorToDoubles(ctx.input(2));
    if (static_cast<int64_t>(b.size()) != m_out) return ctx.Error("bias size != out channels");
    for (size_t k = 0; k < y.size(); ++k) {
      y[k] += b[static_cast<size_t>((static_cast<int64_t>(k) / out_size) % m_out)];
    }
  }
  std::vector<int64_t> y_dims = {batch, m_out};
  y_dims.insert(y_dims.end(), out_sp.begin(), out_sp.end());
  ctx.set_output(0, DoublesToTensor(y, y_dims, xt.dtype()));
  return absl::OkStatus();
}

absl::Status InferConvTranspose(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  DType dt = ctx.input_dtype(0);
  int64_t group = ctx.node().GetInt("group", 1);
  if (!x.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3, got ", x.ToString());
  if (group <= 0) return ctx.Error("group must be positive");
  size_t nsp = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel = ctx.node().GetInts("kernel_shape", {});
  Dim m = ctx.FreshDim();
  if (w.has_rank()) {
    if (w.rank() != x.rank()) return ctx.Error("weight ", w.ToString(), " vs input ", x.ToString());
    if (w[0].is_value() && x[1].is_value() && w[0].value() != x[1].value()) {
      return ctx.Error("weight has ", w[0].value(), " input channels, input has ", x[1].value());
    }
    if (w[1].is_value()) m = w[1].value() * group;
    if (kernel.empty()) {
      for (size_t k = 0; k < nsp; ++k) kernel.push_back(w[k + 2].is_value() ? w[k + 2].value() : -1);
    }
  }
  std::vector<Dim> out = {x[0], m};
  bool kernel_known = kernel.size() == nsp &&
                      std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k > 0; });
  std::vector<int64_t> in_sp;
  bool in_known = true;
  for (size_t k = 0; k < nsp; ++k) {
    in_known &= x[k + 2].is_value();
    in_sp.push_back(x[k + 2].is_value() ? x[k + 2].value() : 1);
  }
  if (kernel_known) {
    auto tw = ReadTransposeWindow(ctx.node(), kernel);
    if (!tw.ok()) return tw.status();
    std::vector<int64_t> sp = ResolveTransposeWindow(*tw, in_sp);
    bool given = !tw->output_shape.empty();
    for (size_t k = 0; k < nsp; ++k) {
      if (given || in_known) {
        // Why: ONNX Runtime refuses an empty deconvolution output; so do we.
        if (sp[k] <= 0) return ctx.Error("output extent ", sp[k], " on spatial axis ", k, " (must be positive)");
        out.push_back(sp[k]);
      } else {
        out.push_back(ctx.FreshDim());
      }
    }
  } else {
    for (size_t k = 0; k < nsp; ++k) out.push_back(ctx.FreshDim());
  }
  ctx.set_output(0, dt, Shape(std::move(out)));
  return absl::OkStatus();
}

}  // namespace

void RegisterConvTransposeOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "ConvTranspose",
                   .since_version = 1,
                   .infer = InferConvTranspose,
                   .traits = [](const OpContext& ctx) { return ConvTraits(ctx, 1, 2, true); },
                   .cost = [](const OpContext& ctx) { return ConvCost(ctx, 0, 1, 2, true, {1, 2}); },
                   .kernel = ConvTransposeKernel});
}

}  // namespace aic

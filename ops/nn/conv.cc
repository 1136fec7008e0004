// The Conv family: Conv (1D/2D/3D, groups, dilations, strides, pads,
// auto_pad), ConvInteger and QLinearConv; ConvTranspose is in
// conv_transpose.cc. All three forward ops run one direct-loop core in double
// (the oracle): the integer variants subtract zero points before it and
// ConvInteger/QLinearConv convert (and requantize) after. With a constant
// weight a Conv is the seed's trainable affine "Conv" layer, sized by channels.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/conv_internal.h"
#include "ops/util/cost_util.h"

namespace aic {

std::vector<double> ConvForward(const std::vector<double>& x, const std::vector<int64_t>& x_dims,
                                const std::vector<double>& w, const std::vector<int64_t>& w_dims,
                                const std::vector<double>* bias, int64_t group, Window& win,
                                std::vector<int64_t>* y_dims) {
  size_t nsp = win.rank();
  int64_t batch = x_dims[0], c_in = x_dims[1], m_out = w_dims[0];
  int64_t c_per_group = c_in / group, m_per_group = m_out / group;
  std::vector<int64_t> in_sp(x_dims.begin() + 2, x_dims.end());
  std::vector<int64_t> out_sp = ResolveWindow(win, in_sp);
  *y_dims = {batch, m_out};
  y_dims->insert(y_dims->end(), out_sp.begin(), out_sp.end());
  int64_t in_size = NumElements(in_sp), out_size = NumElements(out_sp);
  int64_t kvol = win.kernel_volume();
  std::vector<double> y(static_cast<size_t>(batch * m_out * out_size), 0.0);
  if (out_size == 0) return y;
  std::vector<int64_t> in_strides(nsp, 1);
  for (size_t k = nsp; k-- > 1;) in_strides[k - 1] = in_strides[k] * in_sp[k];
  std::vector<int64_t> o(nsp, 0), kk(nsp, 0);
  int64_t oi = 0;
  do {
    // Input offset of every kernel tap for this output position (-1: padding).
    std::vector<int64_t> taps;
    taps.reserve(static_cast<size_t>(kvol));
    std::fill(kk.begin(), kk.end(), 0);
    do {
      int64_t off = 0;
      for (size_t d = 0; d < nsp && off >= 0; ++d) {
        int64_t pos = o[d] * win.strides[d] - win.pad_begin(d) + kk[d] * win.dilations[d];
        off = (pos < 0 || pos >= in_sp[d]) ? -1 : off + pos * in_strides[d];
      }
      taps.push_back(off);
    } while (NextMultiIndex(kk, win.kernel));
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t m = 0; m < m_out; ++m) {
        int64_t g = m / m_per_group;
        double acc = bias != nullptr ? (*bias)[static_cast<size_t>(m)] : 0.0;
        for (int64_t ci = 0; ci < c_per_group; ++ci) {
          const double* xp = x.data() + (n * c_in + g * c_per_group + ci) * in_size;
          const double* wp = w.data() + (m * c_per_group + ci) * kvol;
          for (int64_t t = 0; t < kvol; ++t) {
            if (taps[static_cast<size_t>(t)] >= 0) acc += xp[taps[static_cast<size_t>(t)]] * wp[t];
          }
        }
        y[static_cast<size_t>((n * m_out + m) * out_size + oi)] = acc;
      }
    }
    ++oi;
  } while (NextMultiIndex(o, out_sp));
  return y;
}

absl::StatusOr<Window> ConvWindowFor(const Node& node, const std::vector<int64_t>& x_dims,
                                     const std::vector<int64_t>& w_dims, int64_t group) {
  auto fail = [&](auto... args) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": ", args...));
  };
  if (x_dims.size() < 3) return fail("input must have rank >= 3, got ", DimsToString(x_dims));
  if (w_dims.size() != x_dims.size()) {
    return fail("weight ", DimsToString(w_dims), " does not match input ", DimsToString(x_dims));
  }
  if (group <= 0 || x_dims[1] % group != 0 || w_dims[0] % group != 0) {
    return fail("channels ", x_dims[1], " / ", w_dims[0], " not divisible by group ", group);
  }
  if (w_dims[1] * group != x_dims[1]) {
    return fail("weight has ", w_dims[1], " input channels per group, input has ", x_dims[1],
                " channels in ", group, " groups");
  }
  std::vector<int64_t> kernel =
      node.GetInts("kernel_shape", std::vector<int64_t>(w_dims.begin() + 2, w_dims.end()));
  if (!std::equal(kernel.begin(), kernel.end(), w_dims.begin() + 2, w_dims.end())) {
    return fail("kernel_shape does not match the weight");
  }
  return ReadWindow(node, kernel);
}

absl::Status InferConvLike(OpContext& ctx, size_t x_i, size_t w_i, DType out_dtype) {
  const Shape& x = ctx.input_shape(x_i);
  const Shape& w = ctx.input_shape(w_i);
  int64_t group = ctx.node().GetInt("group", 1);
  if (!x.has_rank()) {
    ctx.set_output(0, out_dtype, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3, got ", x.ToString());
  size_t nsp = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel = ctx.node().GetInts("kernel_shape", {});
  if (w.has_rank()) {
    if (w.rank() != x.rank()) return ctx.Error("weight ", w.ToString(), " vs input ", x.ToString());
    if (group <= 0) return ctx.Error("group must be positive");
    if (w[1].is_value() && x[1].is_value() && w[1].value() * group != x[1].value()) {
      return ctx.Error("weight has ", w[1].value(), " input channels per group, input has ",
                       x[1].value(), " channels in ", group, " groups");
    }
    if (kernel.empty()) {
      for (size_t k = 0; k < nsp; ++k) kernel.push_back(w[k + 2].is_value() ? w[k + 2].value() : -1);
    }
  }
  std::vector<Dim> out = {x[0], w.has_rank() ? w[0] : ctx.FreshDim()};
  bool kernel_known = kernel.size() == nsp &&
                      std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k > 0; });
  if (!kernel_known) {
    for (size_t k = 0; k < nsp; ++k) out.push_back(ctx.FreshDim());
  } else {
    auto win = ReadWindow(ctx.node(), kernel);
    if (!win.ok()) return win.status();
    for (size_t k = 0; k < nsp; ++k) {
      out.push_back(WindowOutputDim(*win, k, x[k + 2], [&] { return ctx.FreshDim(); }));
      // Why: a window larger than the padded input leaves nothing (ONNX
      // Runtime refuses the node); a model that asks for it is malformed.
      if (out.back().is_value() && out.back().value() <= 0) {
        return ctx.Error("the window does not fit the padded input on spatial axis ", k, " (", x[k + 2].ToString(), ")");
      }
    }
  }
  ctx.set_output(0, out_dtype, Shape(std::move(out)));
  return absl::OkStatus();
}

Traits ConvTraits(const OpContext& ctx, size_t w_i, size_t b_i, bool transpose) {
  const Tensor* w = ctx.input_constant(w_i);
  int64_t group = ctx.node().GetInt("group", 1);
  const char* meaning = transpose ? "y = Wᵀ ⋆ x" : "y = W ⋆ x";
  bool has_bias = ctx.has_input(b_i);
  if (w == nullptr || w->rank() < 3) {
    Traits t;
    t.semantic_name = transpose ? "ConvTranspose" : "Conv";
    t.meaning = absl::StrCat(meaning, has_bias ? " + b" : "", " (bilinear in x and W)");
    t.linearity = Linearity::kNonlinear;
    return t;
  }
  int64_t in = transpose ? w->dim(0) : w->dim(1) * group;
  int64_t out = transpose ? w->dim(1) * group : w->dim(0);
  Traits t = LinearLayerTraits(transpose ? "ConvTranspose" : "Conv",
                               absl::StrCat(meaning, has_bias ? " + b" : ""), in, out, has_bias);
  // Only a pointwise (1×1, unit stride, one group) conv is a plain square
  // matrix on channels; other convs mix positions, so say nothing.
  bool pointwise = group == 1 && w->num_elements() == w->dim(0) * w->dim(1);
  for (int64_t s : ctx.node().GetInts("strides", {})) pointwise &= s == 1;
  if (!pointwise) t.invertibility = Invertibility::kUnknown;
  return t;
}

Cost ConvCost(const OpContext& ctx, size_t x_i, size_t w_i, size_t b_i, bool transpose,
              std::initializer_list<size_t> param_inputs) {
  Cost c = BytesOnlyCost(ctx, param_inputs);
  if (ctx.input_constant(w_i) == nullptr) c.params = 0;
  const Shape& x = ctx.input_shape(x_i);
  const Shape& w = ctx.input_shape(w_i);
  const Shape& y = ctx.output_type(0).shape;
  if (!x.IsStatic() || !w.IsStatic() || !y.IsStatic() || w.rank() < 3) {
    c.known = false;
    return c;
  }
  int64_t group = std::max<int64_t>(1, ctx.node().GetInt("group", 1));
  int64_t kvol = 1;
  for (int64_t k = 2; k < w.rank(); ++k) kvol *= w[static_cast<size_t>(k)].value();
  if (transpose) {
    c.macs = *x.NumElements() * (w[1].value()) * kvol;  // W: [C, M/group, k...]
  } else {
    c.macs = *y.NumElements() * (x[1].value() / group) * kvol;
  }
  c.flops = 2 * c.macs + (ctx.has_input(b_i) ? *y.NumElements() : 0);
  return c;
}

namespace {

absl::Status ConvKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (!IsRealDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  int64_t group = ctx.node().GetInt("group", 1);
  AIC_ASSIGN_OR_RETURN(Window win, ConvWindowFor(ctx.node(), x.dims(), w.dims(), group));
  std::vector<double> bias;
  if (ctx.has_input(2)) {
    bias = TensorToDoubles(ctx.input(2));
    if (static_cast<int64_t>(bias.size()) != w.dim(0)) return ctx.Error("bias size != out channels");
  }
  std::vector<int64_t> y_dims;
  std::vector<double> y = ConvForward(TensorToDoubles(x), x.dims(), TensorToDoubles(w), w.dims(),
                                      ctx.has_input(2) ? &bias : nullptr, group, win, &y_dims);
  ctx.set_output(0, DoublesToTensor(y, y_dims, x.dtype()));
  return absl::OkStatus();
}

// x - x_zero_point (scalar) and w - w_zero_point (scalar or per output channel), as doubles.
absl::Status ShiftedOperands(KernelContext& ctx, size_t x_i, size_t xzp_i, size_t w_i,
                             size_t wzp_i, std::vector<double>* x, std::vector<double>* w) {
  const Tensor& xt = ctx.input(x_i);
  const Tensor& wt = ctx.input(w_i);
  if (!IsQuant8DType(xt.dtype()) || !IsQuant8DType(wt.dtype())) {
    return ctx.Unimplemented("quantized operands must be int8/uint8");
  }
  *x = TensorToDoubles(xt);
  *w = TensorToDoubles(wt);
  if (ctx.has_input(xzp_i)) {
    std::vector<double> zp = TensorToDoubles(ctx.input(xzp_i));
    if (zp.size() != 1) return ctx.Error("x_zero_point must be a scalar");
    for (double& v : *x) v -= zp[0];
  }
  if (ctx.has_input(wzp_i)) {
    std::vector<double> zp = TensorToDoubles(ctx.input(wzp_i));
    int64_t per = wt.rank() > 0 && wt.dim(0) > 0 ? wt.num_elements() / wt.dim(0) : 1;
    if (zp.size() != 1 && static_cast<int64_t>(zp.size()) != wt.dim(0)) {
      return ctx.Error("w_zero_point must be a scalar or one per output channel");
    }
    for (size_t i = 0; i < w->size(); ++i) {
      (*w)[i] -= zp[zp.size() == 1 ? 0 : i / static_cast<size_t>(per)];
    }
  }
  return absl::OkStatus();
}

absl::Status ConvIntegerKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  int64_t group = ctx.node().GetInt("group", 1);
  AIC_ASSIGN_OR_RETURN(Window win, ConvWindowFor(ctx.node(), xt.dims(), wt.dims(), group));
  std::vector<double> x, w;
  AIC_RETURN_IF_ERROR(ShiftedOperands(ctx, 0, 2, 1, 3, &x, &w));
  std::vector<int64_t> y_dims;
  std::vector<double> y = ConvForward(x, xt.dims(), w, wt.dims(), nullptr, group, win, &y_dims);
  ctx.set_output(0, DoublesToTensor(y, y_dims, DType::kInt32));
  return absl::OkStatus();
}

// inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
absl::Status QLinearConvKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(3);
  int64_t group = ctx.node().GetInt("group", 1);
  AIC_ASSIGN_OR_RETURN(Window win, ConvWindowFor(ctx.node(), xt.dims(), wt.dims(), group));
  std::vector<double> x, w;
  AIC_RETURN_IF_ERROR(ShiftedOperands(ctx, 0, 2, 3, 5, &x, &w));
  std::vector<double> bias;
  if (ctx.has_input(8)) bias = TensorToDoubles(ctx.input(8));
  std::vector<int64_t> y_dims;
  std::vector<double> acc = ConvForward(x, xt.dims(), w, wt.dims(), ctx.has_input(8) ? &bias : nullptr,
                                        group, win, &y_dims);
  std::vector<double> xs = TensorToDoubles(ctx.input(1)), ws = TensorToDoubles(ctx.input(4));
  std::vector<double> ys = TensorToDoubles(ctx.input(6));
  if (xs.size() != 1 || ys.size() != 1 || ws.empty()) return ctx.Error("bad scale shapes");
  DType out_dtype = ctx.has_input(7) ? ctx.input(7).dtype() : DType::kUint8;
  int64_t yzp = ctx.has_input(7) ? TensorToInt64(ctx.input(7)).at(0) : 0;
  int64_t m_out = y_dims[1], per = NumElements(y_dims) / std::max<int64_t>(1, y_dims[0] * m_out);
  std::vector<int64_t> y(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    size_t m = static_cast<size_t>((static_cast<int64_t>(i) / std::max<int64_t>(per, 1)) % m_out);
    float scale = static_cast<float>(xs[0]) * static_cast<float>(ws[ws.size() == 1 ? 0 : m]) /
                  static_cast<float>(ys[0]);
    y[i] = QuantizeValue(acc[i] * static_cast<double>(scale), yzp, out_dtype);
  }
  ctx.set_output(0, Int64ToTensor(y, y_dims, out_dtype));
  return absl::OkStatus();
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "Conv",
                   .since_version = 1,
                   .infer = [](OpContext& ctx) { return InferConvLike(ctx, 0, 1, ctx.input_dtype(0)); },
                   .traits = [](const OpContext& ctx) { return ConvTraits(ctx, 1, 2, false); },
                   .cost = [](const OpContext& ctx) { return ConvCost(ctx, 0, 1, 2, false, {1, 2}); },
                   .kernel = ConvKernel});
  r.Register(OpDef{.domain = "",
                   .op_type = "ConvInteger",
                   .since_version = 10,
                   .infer = [](OpContext& ctx) { return InferConvLike(ctx, 0, 1, DType::kInt32); },
                   .traits = [](const OpContext& ctx) { return ConvTraits(ctx, 1, 99, false); },
                   .cost = [](const OpContext& ctx) { return ConvCost(ctx, 0, 1, 99, false, {1}); },
                   .kernel = ConvIntegerKernel});
  r.Register(OpDef{.domain = "",
                   .op_type = "QLinearConv",
                   .since_version = 10,
                   .infer =
                       [](OpContext& ctx) {
                         DType out = ctx.has_input(7) ? ctx.input_dtype(7) : DType::kUint8;
                         return InferConvLike(ctx, 0, 3, out);
                       },
                   .traits = [](const OpContext& ctx) { return ConvTraits(ctx, 3, 8, false); },
                   .cost = [](const OpContext& ctx) { return ConvCost(ctx, 0, 3, 8, false, {3, 8}); },
                   .kernel = QLinearConvKernel});
  RegisterConvTransposeOp(r);
  RegisterDeformConvOp(r);
}

}  // namespace aic

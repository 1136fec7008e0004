// DeformConv (opset 19): a convolution whose kernel taps are moved, per
// output position, by learned offsets (and optionally scaled by a mask),
// sampling X with zero-padded (multi)linear interpolation between pixels.
// Offsets are [N, offset_group · K · r, out...] (K taps of an r-D kernel,
// each with r coordinates, outermost first); the mask is [N, offset_group · K,
// out...]. The reference kernel is the direct loop in double, any spatial rank.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/conv_internal.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// X[c] (a volume of `dims`) at a fractional position, outside reads as 0.
double SampleLinear(const double* vol, const std::vector<int64_t>& dims, const std::vector<double>& pos) {
  const size_t r = dims.size();
  double sum = 0;
  for (unsigned corner = 0; corner < (1u << r); ++corner) {
    double weight = 1;
    int64_t at = 0;
    bool inside = true;
    for (size_t d = 0; d < r && inside; ++d) {
      const double lo = std::floor(pos[d]);
      const bool up = (corner >> d) & 1u;
      const int64_t i = static_cast<int64_t>(lo) + (up ? 1 : 0);
      weight *= up ? pos[d] - lo : 1 - (pos[d] - lo);
      inside = i >= 0 && i < dims[d];
      at = at * dims[d] + i;
    }
    if (inside && weight != 0) sum += weight * vol[at];
  }
  return sum;
}

absl::Status DeformConvKernel(KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is required");
  }
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  const Tensor& ot = ctx.input(2);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  const int64_t group = ctx.node().GetInt("group", 1);
  const int64_t offset_group = ctx.node().GetInt("offset_group", 1);
  AIC_ASSIGN_OR_RETURN(Window win, ConvWindowFor(ctx.node(), xt.dims(), wt.dims(), group));
  const size_t r = win.rank();
  const std::vector<int64_t> in_sp(xt.dims().begin() + 2, xt.dims().end());
  const std::vector<int64_t> out_sp = ResolveWindow(win, in_sp);
  const int64_t batch = xt.dim(0), c_in = xt.dim(1), m_out = wt.dim(0);
  const int64_t kvol = win.kernel_volume();
  if (offset_group <= 0 || c_in % offset_group != 0) {
    return ctx.Error("channels ", c_in, " not divisible by offset_group ", offset_group);
  }
  std::vector<int64_t> want_offset = {batch, offset_group * kvol * static_cast<int64_t>(r)};
  want_offset.insert(want_offset.end(), out_sp.begin(), out_sp.end());
  if (ot.dims() != want_offset) {
    return ctx.Error("offset must be ", DimsToString(want_offset), ", got ", DimsToString(ot.dims()));
  }
  std::vector<double> bias, mask;
  if (ctx.has_input(3)) {
    bias = TensorToDoubles(ctx.input(3));
    if (static_cast<int64_t>(bias.size()) != m_out) return ctx.Error("bias size != out channels");
  }
  if (ctx.has_input(4)) {
    std::vector<int64_t> want_mask = want_offset;
    want_mask[1] = offset_group * kvol;
    if (ctx.input(4).dims() != want_mask) {
      return ctx.Error("mask must be ", DimsToString(want_mask), ", got ", DimsToString(ctx.input(4).dims()));
    }
    mask = TensorToDoubles(ctx.input(4));
  }
  const std::vector<double> x = TensorToDoubles(xt), w = TensorToDoubles(wt), off = TensorToDoubles(ot);
  const int64_t in_size = NumElements(in_sp), out_size = NumElements(out_sp);
  const int64_t c_per_group = c_in / group, m_per_group = m_out / group, c_per_og = c_in / offset_group;
  std::vector<int64_t> y_dims = {batch, m_out};
  y_dims.insert(y_dims.end(), out_sp.begin(), out_sp.end());
  std::vector<double> y(static_cast<size_t>(batch * m_out * out_size), 0.0);
  std::vector<int64_t> o(r), k(r);
  std::vector<double> pos(r);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t op = 0; op < out_size; ++op) {
      for (int64_t t = op, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
        o[d] = t % out_sp[d];
        t /= out_sp[d];
      }
      for (int64_t og = 0; og < offset_group; ++og) {
        for (int64_t kp = 0; kp < kvol; ++kp) {
          for (int64_t t = kp, d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
            k[d] = t % win.kernel[d];
            t /= win.kernel[d];
          }
          // Where this tap samples, for every channel of the offset group.
          const int64_t tap = og * kvol + kp;
          for (size_t d = 0; d < r; ++d) {
            const double shift = off[((b * offset_group * kvol * r) + tap * r + d) * out_size + op];
            pos[d] = static_cast<double>(o[d] * win.strides[d] - win.pad_begin(d) + k[d] * win.dilations[d]) + shift;
          }
          const double scale = mask.empty() ? 1.0 : mask[(b * offset_group * kvol + tap) * out_size + op];
          if (scale == 0) continue;
          for (int64_t c = og * c_per_og; c < (og + 1) * c_per_og; ++c) {
            const double v = scale * SampleLinear(x.data() + (b * c_in + c) * in_size, in_sp, pos);
            if (v == 0) continue;
            const int64_t g = c / c_per_group;
            for (int64_t m = g * m_per_group; m < (g + 1) * m_per_group; ++m) {
              y[(b * m_out + m) * out_size + op] += v * w[(m * c_per_group + c % c_per_group) * kvol + kp];
            }
          }
        }
      }
    }
  }
  if (!bias.empty()) {
    for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) y[i] += bias[(i / out_size) % m_out];
  }
  ctx.set_output(0, DoublesToTensor(y, y_dims, xt.dtype()));
  return absl::OkStatus();
}

Traits DeformConvTraits(const OpContext& ctx) {
  Traits t = ConvTraits(ctx, 1, 3, false);
  t.semantic_name = "DeformConv";
  t.meaning = absl::StrCat("y = W ⋆ x sampled at kernel taps moved by offsets", ctx.has_input(4) ? ", scaled by mask" : "",
                           ctx.has_input(3) ? " + b" : "");
  // Linear in x for fixed offsets, but the offsets are data: nonlinear as a node.
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kUnknown;
  return t;
}

// A Conv's MACs, plus 2^r interpolation taps per sampled value.
Cost DeformConvCost(const OpContext& ctx) {
  Cost c = ConvCost(ctx, 0, 1, 3, false, {1, 3});
  if (c.known && ctx.input_shape(0).has_rank()) c.flops += c.macs * (int64_t{1} << (ctx.input_shape(0).rank() - 2)) * 2;
  return c;
}

}  // namespace

void RegisterDeformConvOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "DeformConv",
                   .since_version = 19,
                   .infer = [](OpContext& ctx) { return InferConvLike(ctx, 0, 1, ctx.input_dtype(0)); },
                   .traits = DeformConvTraits,
                   .cost = DeformConvCost,
                   .kernel = DeformConvKernel});
}

}  // namespace aic

// Kernel taps of a Conv that read only padding, dropped. A dilated conv on a
// small feature map (DeepLab's ASPP: 3x3 at dilations 24 and 36 with equal
// pads on a 20x20 map) has outer taps that fall in the zero padding for
// every output position: they add w·0. Cropping the kernel to the taps that
// reach the input, with the leading pads moved by as much, computes the same
// sums without them; where one tap is left per axis the conv is pointwise
// (and its dilation moot). oneDNN 2.6 ran those two convs as im2col + GEMM
// over all nine taps: 21 ms each at 1 thread on a Zen 3, most of
// deeplabv3_mobilenet_v3_large's time (bench/ZOO.md).
#include <cmath>
#include <cstring>

#include "ops/nn/conv_geometry.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"

namespace aic::rewrite {

namespace {

// Whether tap k of an axis reads the input for some output position o in
// [0, out): 0 <= o·stride - pad_begin + k·dilation < in.
bool TapReadsInput(int64_t k, int64_t in, int64_t out, int64_t stride, int64_t dilation, int64_t pad_begin) {
  const int64_t offset = k * dilation - pad_begin;
  for (int64_t o = 0; o < out; ++o) {
    int64_t at = o * stride + offset;
    if (at >= in) return false;  // later positions only go further
    if (at >= 0) return true;
  }
  return false;
}

// Whether every element of `w` with a spatial index outside [lo, hi] is
// finite (a dropped tap multiplied only zeros: exact unless it was inf/NaN).
bool DroppedTapsFinite(const Tensor& w, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  if (w.dtype() == DType::kFloat) {
    // The common case, typed: a per-element dtype switch over ASPP's 2.2M
    // weights took 12 ms a conv.
    bool all_finite = true;
    for (float v : w.span<float>()) all_finite &= std::isfinite(v);
    if (all_finite) return true;
  }
  const size_t spatial = lo.size();
  const std::vector<int64_t>& d = w.dims();
  const int64_t n = w.num_elements();
  std::vector<int64_t> index(d.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    bool kept = true;
    for (size_t a = 0; a < spatial; ++a) {
      int64_t i = index[2 + a];
      kept = kept && i >= lo[a] && i <= hi[a];
    }
    if (!kept && !std::isfinite(w.ElementAsDouble(e))) return false;
    for (size_t a = d.size(); a-- > 0;) {
      if (++index[a] < d[a]) break;
      index[a] = 0;
    }
  }
  return true;
}

// W[:, :, lo0..hi0, lo1..hi1, ...]: the kept taps, any dtype.
Tensor CropTaps(const Tensor& w, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  const size_t spatial = lo.size();
  std::vector<int64_t> dims = w.dims();
  for (size_t a = 0; a < spatial; ++a) dims[2 + a] = hi[a] - lo[a] + 1;
  Tensor out(w.dtype(), dims);
  const size_t elem = w.byte_size() / static_cast<size_t>(std::max<int64_t>(1, w.num_elements()));
  const auto* src = static_cast<const char*>(w.raw_data());
  auto* dst = static_cast<char*>(out.mutable_raw_data());
  // Row-major walk of the output, mapping each index back into W.
  const std::vector<int64_t>& wd = w.dims();
  std::vector<int64_t> index(dims.size(), 0);
  const int64_t n = out.num_elements();
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (size_t a = 0; a < dims.size(); ++a) {
      int64_t i = index[a] + (a >= 2 ? lo[a - 2] : 0);
      at = at * wd[a] + i;
    }
    std::memcpy(dst + static_cast<size_t>(e) * elem, src + static_cast<size_t>(at) * elem, elem);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++index[a] < dims[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

// Conv(x, W, b) -> Conv(x, W[live taps], b) with pads moved by the dropped
// leading taps and trailing pads that keep the output size.
ClassId DropDeadConvTaps(RuleContext& ctx, ClassId cls, const ENode& n) {
  EGraph& g = ctx.g;
  const Tensor* w = ChildValue(g, n, 1);
  if (w == nullptr || w->rank() < 3 || !IsFloat(w->dtype())) {
    return ctx.Decline("weights not a known floating-point tensor of rank 3 or more");
  }
  const Shape* xs = RankedShape(g, Child(g, n, 0));
  const Shape* ys = RankedShape(g, cls);
  if (xs == nullptr || ys == nullptr || xs->rank() != w->rank() || ys->rank() != w->rank()) {
    return ctx.Decline("input or output rank unknown");
  }
  const size_t spatial = static_cast<size_t>(w->rank()) - 2;
  std::vector<int64_t> in(spatial), out(spatial), kernel(spatial);
  for (size_t a = 0; a < spatial; ++a) {
    const Dim& di = xs->dims()[2 + a];
    const Dim& dout = ys->dims()[2 + a];
    if (!di.is_value() || !dout.is_value()) return ctx.Decline("spatial dims not known");
    in[a] = di.value();
    out[a] = dout.value();
    kernel[a] = w->dim(static_cast<int64_t>(2 + a));
  }
  absl::StatusOr<Window> read = ReadWindow(*n.op, kernel);
  if (!read.ok()) return ctx.Decline("window attributes malformed");
  Window win = *read;
  if (ResolveWindow(win, in) != out) return ctx.Decline("output size does not match the window");
  std::vector<int64_t> lo(spatial), hi(spatial);
  bool dropped = false;
  for (size_t a = 0; a < spatial; ++a) {
    std::vector<bool> live(kernel[a]);
    for (int64_t k = 0; k < kernel[a]; ++k) {
      live[k] = TapReadsInput(k, in[a], out[a], win.strides[a], win.dilations[a], win.pad_begin(a));
    }
    lo[a] = 0;
    while (lo[a] < kernel[a] && !live[lo[a]]) ++lo[a];
    if (lo[a] == kernel[a]) return ctx.Decline("no tap reads the input");  // all zeros + bias: not ours
    hi[a] = kernel[a] - 1;
    while (!live[hi[a]]) --hi[a];
    dropped = dropped || lo[a] > 0 || hi[a] < kernel[a] - 1;
  }
  if (!dropped) return ctx.Decline("every tap reads the input somewhere");
  // New pads: the leading ones less the dropped taps' span; the trailing
  // ones the least that keeps the output size (never negative: ONNX has no
  // negative conv pads).
  std::vector<int64_t> pads(2 * spatial), dilations = win.dilations;
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t taps = hi[a] - lo[a] + 1;
    const int64_t begin = win.pad_begin(a) - lo[a] * win.dilations[a];
    if (begin < 0) return ctx.Decline("the kept taps would need a negative leading pad");
    if (taps == 1) dilations[a] = 1;
    const int64_t extent = (taps - 1) * dilations[a] + 1;
    int64_t end = std::max<int64_t>(0, (out[a] - 1) * win.strides[a] + extent - in[a] - begin);
    if ((in[a] + begin + end - extent) / win.strides[a] + 1 != out[a]) {
      return ctx.Decline("no trailing pad keeps the output size");
    }
    pads[a] = begin;
    pads[spatial + a] = end;
  }
  if (!DroppedTapsFinite(*w, lo, hi)) return ctx.Decline("a dropped tap's weight is not finite");
  std::vector<Attribute> attrs = n.op->attributes;
  SetAttribute(attrs, Attribute::Ints("pads", pads));
  SetAttribute(attrs, Attribute::Ints("dilations", dilations));
  std::vector<int64_t> cropped_kernel(spatial);
  for (size_t a = 0; a < spatial; ++a) cropped_kernel[a] = hi[a] - lo[a] + 1;
  SetAttribute(attrs, Attribute::Ints("kernel_shape", cropped_kernel));
  // The pads are now explicit (ReadWindow resolved any auto_pad).
  if (n.op->GetString("auto_pad", "NOTSET") != "NOTSET") SetAttribute(attrs, Attribute::String("auto_pad", "NOTSET"));
  std::vector<ClassId> children = n.children;
  children[1] = g.AddConst(CropTaps(*w, lo, hi));
  return g.AddOp("Conv", n.op->domain, children, attrs);
}

}  // namespace

void AddConvTapsRules(std::vector<Rule>& rules) {
  rules.push_back({"drop_dead_conv_taps", "Conv(x, W, dilated pads) -> Conv(x, W[taps that read x], pads-)",
                   "Conv", Exactness::kReassociating, 1, DropDeadConvTaps});
}

}  // namespace aic::rewrite

// Lowerings of Conv, ConvTranspose and pooling to oneDNN. The input keeps the
// blocked layout its producer chose (or oneDNN picks one for a plain input),
// the destination layout is left to oneDNN, weights are packed once into the
// primitive's layout, an inference BatchNormalization right after a conv is
// folded into its weights, and the successors become post-ops.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "exec/cpu/kernels/depthwise_conv.h"
#include "exec/cpu/kernels/gemv.h"
#include "exec/cpu/kernels/pair_conv.h"
#include "exec/cpu/kernels/pair_depthwise.h"
#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/kernels/patch_scatter.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
#include "exec/cpu/kernels/conv1d.h"
#include "exec/cpu/kernels/tap_conv.h"
#include "exec/cpu/kernels/blocked_pool.h"
#include "exec/cpu/kernels/window_pool.h"
#include "exec/cpu/layout_copy.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/native_step.h"
#include "ops/fused/standard_aliases.h"

namespace aic::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct Window {
  memory::dims kernel, strides, dilations, pad_l, pad_r;  // dilations as oneDNN counts them (d-1)
};

// Kernel geometry of a conv/pool node over `in` spatial dims producing `out`;
// false when the padding cannot be expressed.
bool ComputeWindow(const Node& n, const std::vector<int64_t>& kernel, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& out, bool transposed, Window* w) {
  size_t sp = kernel.size();
  std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  std::string auto_pad = n.GetString("auto_pad", "NOTSET");
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return false;
  for (size_t i = 0; i < sp; ++i) {
    int64_t ext = (kernel[i] - 1) * dil[i] + 1;
    int64_t pl = pads[i], pr = pads[i + sp];
    if (transposed) {
      if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
      if (auto_pad == "VALID") pl = 0;
      pr = (in[i] - 1) * strides[i] + ext - out[i] - pl;  // output_padding folds in here
    } else if (auto_pad == "VALID") {
      pl = 0;
      pr = (out[i] - 1) * strides[i] + ext - in[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + ext - in[i]);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (n.GetInt("ceil_mode", 0) != 0) {
      pr = std::max<int64_t>(pr, (out[i] - 1) * strides[i] + ext - in[i] - pl);
    }
    if (pl < 0 || pr < 0) return false;
    w->kernel.push_back(kernel[i]);
    w->strides.push_back(strides[i]);
    w->dilations.push_back(dil[i] - 1);
    w->pad_l.push_back(pl);
    w->pad_r.push_back(pr);
  }
  return true;
}

std::vector<int64_t> Spatial(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin() + 2, dims.end());
}

// A conv weight [OC, IC/g, k...] as oneDNN takes it: [g, OC/g, IC/g, k...]
// when grouped.
memory::dims ConvWeightDims(const Tensor& w, int64_t groups) {
  memory::dims dims = ToDnnlDims(w.dims());
  if (groups > 1) {
    dims.insert(dims.begin(), groups);
    dims[1] = w.dim(0) / groups;
  }
  return dims;
}

memory::desc StridedMd(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::dims PlainStrides(const memory::dims& d) {
  memory::dims s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// What both conv lowerings need: f32 activations with a slot, a constant f32
// weight of the input's rank (1-D to 3-D spatial) and, if given, a constant
// f32 bias.
bool ConstantConvOperands(Lowerer& L, const Node& n, const Tensor** w, const Tensor** b) {
  const Value* x = n.input(0);
  *w = L.Const(n.input(1));
  *b = n.has_input(2) ? L.Const(n.input(2)) : nullptr;
  if (!L.IsF32(x) || !L.IsF32(n.output(0)) || L.V(x).slot < 0 || *w == nullptr || (*w)->dtype() != DType::kFloat) {
    return false;
  }
  if (n.has_input(2) && (*b == nullptr || (*b)->dtype() != DType::kFloat)) return false;
  size_t rank = L.V(x).dims.size();
  return rank >= 3 && rank <= 5 && (*w)->rank() == static_cast<int64_t>(rank);
}

// Whether the model's convolutions should write channels blocked by 16 rather
// than the layout oneDNN picks for each (channels-last, for its brgemm
// kernels): so when some grouped conv (more than one channel per group) has
// no fast oneDNN 2.6 kernel reading channels-last but has one reading blocked
// channels, e.g. 16 channels per group (RegNetX-400MF, RegNetY-800MF) or 32
// (ResNeXt-50 32x4d's last stage). Then staying blocked from the stem on spares each such
// conv a reorder in and its block's residual Add a reorder out: RegNetY-800MF
// had 29 reorders, 8% of a run at 2 threads. Asked of oneDNN once per model.
bool ConvsPreferBlocked16(Lowerer& L) {
  if (L.convs_prefer_blocked16.has_value()) return *L.convs_prefer_blocked16;
  L.convs_prefer_blocked16 = false;
  for (const auto& node : L.plan().model->graph->nodes()) {
    const Node& n = *node;
    if (n.op_type != "Conv" || !n.domain.empty() || n.num_inputs() < 2 || n.GetInt("group", 1) <= 1) continue;
    const Tensor* w = n.input(1) != nullptr ? n.input(1)->initializer() : nullptr;
    const std::vector<int64_t>& xd = L.V(n.input(0)).dims;
    const std::vector<int64_t>& od = L.V(n.output(0)).dims;
    if (w == nullptr || w->rank() != 4 || w->dim(1) <= 1 || xd.size() != 4 || od.size() != 4) continue;
    const int64_t groups = n.GetInt("group", 1);
    Window win;
    if (w->dim(0) % groups != 0 || !ComputeWindow(n, Spatial(w->dims()), Spatial(xd), Spatial(od), false, &win)) {
      continue;
    }
    const memory::dims wdims = ConvWeightDims(*w, groups);
    auto fast_from = [&](memory::format_tag src_tag) {
      try {
        dnnl::convolution_forward::primitive_desc pd(
            dnnl::convolution_forward::desc(
                prop_kind::forward_inference, algorithm::convolution_direct,
                memory::desc(ToDnnlDims(xd), memory::data_type::f32, src_tag),
                memory::desc(wdims, memory::data_type::f32, memory::format_tag::any), memory::desc(),
                AnyMd(od), win.strides, win.dilations, win.pad_l, win.pad_r),
            L.plan().engine);
        return !IsSlowImplementation("conv", pd.impl_info_str());
      } catch (const dnnl::error&) {
        return false;
      }
    };
    if (!fast_from(memory::format_tag::nhwc) && fast_from(memory::format_tag::nChw16c)) {
      L.convs_prefer_blocked16 = true;
      break;
    }
  }
  return *L.convs_prefer_blocked16;
}

// Conv weights [OC, IC/g, k...] of `groups` groups as those of groups / m
// groups: each run of m neighbouring groups one group whose weights are
// block-diagonal, zero where an output channel would read an input channel
// of another original group. The same function at m times the products.
Tensor MergeConvGroups(const Tensor& w, int64_t groups, int64_t m) {
  const int64_t oc = w.dim(0), cin_g = w.dim(1), cout_g = oc / groups;
  const int64_t taps = w.num_elements() / (oc * cin_g);
  std::vector<int64_t> dims = w.dims();
  dims[1] = cin_g * m;
  Tensor merged(DType::kFloat, dims);
  float* out = merged.mutable_data<float>();
  std::fill(out, out + merged.num_elements(), 0.0f);
  const float* in = w.data<float>();
  for (int64_t o = 0; o < oc; ++o) {
    const int64_t at = (o / cout_g) % m * cin_g;  // its group's place in the merged group
    std::copy(in + o * cin_g * taps, in + (o + 1) * cin_g * taps, out + (o * cin_g * m + at) * taps);
  }
  return merged;
}

}  // namespace

namespace {

// Weights (as a native kernel reads them) and the bias, if any, kept among
// the plan's constants for a native conv step: their addresses.
struct NativeConvConstants {
  const float* weights;
  const float* bias;
};
NativeConvConstants KeepNativeConvConstants(Plan& plan, Tensor weights, const Tensor& bias) {
  plan.constants.push_back(std::move(weights));
  NativeConvConstants c{plan.constants.back().data<float>(), nullptr};
  if (bias.defined()) {
    plan.constants.push_back(bias);
    c.bias = plan.constants.back().data<float>();
  }
  return c;
}

}  // namespace

// A depthwise 2-D conv (stride 1, no dilation) whose input arrives plain
// runs on our NCHW kernel (kernels/depthwise_conv.h) instead of oneDNN's
// blocked one between two reorders. `weights`/`bias` have any BN folded in.
bool LowerPlainDepthwise(Lowerer& L, const Node& n, const Tensor& weights, const Tensor& bias, const Value* out,
                         const Window& win) {
  const Value* x = n.input(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  const int64_t groups = n.GetInt("group", 1);
  const int s = L.V(x).slot;
  if (xd.size() != 4 || od.size() != 4 || !L.IsF32(x) || !L.IsF32(out) || s < 0 || !L.plan().slots[s].plain ||
      !NativeReady(L, x) || groups != xd[1] || weights.rank() != 4 || weights.dim(0) != groups || weights.dim(1) != 1 ||
      od[1] != groups || NumElements(od) == 0) {
    return false;
  }
  for (size_t i = 0; i < 2; ++i) {
    if (win.strides[i] != 1 || win.dilations[i] != 0) return false;
  }
  // Only with AVX-512 (its register path): the portable one took 1.67x and
  // 2.77x ONNX Runtime's time on a Zen 3 ([1,64,112,112], [1,256,14,14]),
  // oneDNN's jit:avx2 depthwise kernel between two reorders 1.38x and 0.80x
  // (run_ops.py --filter depthwise).
  if (!kernels::avx512::HaveAvx512()) return false;
  kernels::DepthwiseGeometry g;
  g.planes = xd[0] * xd[1];
  g.channels = xd[1];
  g.in_h = xd[2];
  g.in_w = xd[3];
  g.out_h = od[2];
  g.out_w = od[3];
  g.kh = weights.dim(2);
  g.kw = weights.dim(3);
  g.pad_top = win.pad_l[0];
  g.pad_left = win.pad_l[1];
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  const auto [w, b] = KeepNativeConvConstants(L.plan(), weights, bias);
  AddNativeStep(L, n, {in}, slot, [g, w, b](const void* const* i, void* y) {
    kernels::DepthwiseConvF32(static_cast<const float*>(i[0]), w, b, static_cast<float*>(y), g);
    return absl::OkStatus();
  })->kind = "depthwise";
  return true;
}

// A dilated conv whose taps mostly read padding (kernels/tap_conv.h): one
// GEMM per tap over the positions where it reads the input, where those are
// at most 60% of all tap-positions (DeepLab's ASPP at dilation 12 on a 20x20
// map: 36%); a following activation stays a step of its own. Stride 1, one
// group, 2-D, f32.
bool LowerTapConv(Lowerer& L, const Node& n, const Tensor& weights, const Tensor& bias, const Value* out,
                  const Window& win) {
  const Value* x = n.input(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() != 4 || od.size() != 4 || !L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0 || !NativeReady(L, x) ||
      n.GetInt("group", 1) != 1 || weights.rank() != 4 || weights.dtype() != DType::kFloat || NumElements(od) == 0) {
    return false;
  }
  if (win.strides[0] != 1 || win.strides[1] != 1 || (win.dilations[0] == 0 && win.dilations[1] == 0)) return false;
  kernels::TapConvGeometry g;
  g.batch = xd[0];
  g.in_c = xd[1];
  g.out_c = od[1];
  g.in_h = xd[2];
  g.in_w = xd[3];
  g.out_h = od[2];
  g.out_w = od[3];
  g.kh = weights.dim(2);
  g.kw = weights.dim(3);
  g.dh = win.dilations[0] + 1;
  g.dw = win.dilations[1] + 1;
  g.pad_top = win.pad_l[0];
  g.pad_left = win.pad_l[1];
  std::vector<kernels::ConvTap> taps = kernels::LiveTaps(g);
  int64_t live = 0;
  for (const kernels::ConvTap& t : taps) live += t.positions();
  if (10 * live > 6 * g.kh * g.kw * g.out_h * g.out_w) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  std::vector<float> by_tap = kernels::WeightsByTap(weights.data<float>(), g);
  const auto [w, b] = KeepNativeConvConstants(
      L.plan(), Tensor::FromVector<float>(by_tap, {static_cast<int64_t>(by_tap.size())}), bias);
  AddNativeStep(L, n, {in}, slot, [g, taps, w, b](const void* const* i, void* y) {
    kernels::TapConvF32(static_cast<const float*>(i[0]), w, b, static_cast<float*>(y), g, taps);
    return absl::OkStatus();
  })->kind = "tap_conv";
  return true;
}

// A 1-D conv oneDNN runs as im2col + GEMM (no direct kernel for its width:
// 11 taps and more): our direct kernel (kernels/conv1d.h). Stride 1, one
// group, f32; a following activation stays a step of its own.
bool LowerConv1dDirect(Lowerer& L, const Node& n, const Tensor& weights, const Tensor& bias, const Value* out,
                       const Window& win) {
  const Value* x = n.input(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (!kernels::Conv1dAvailable() || xd.size() != 3 || od.size() != 3 || !L.IsF32(x) || !L.IsF32(out) ||
      L.V(x).slot < 0 || !NativeReady(L, x) || n.GetInt("group", 1) != 1 || weights.rank() != 3 ||
      weights.dtype() != DType::kFloat || NumElements(od) == 0 || win.strides[0] != 1) {
    return false;
  }
  kernels::Conv1dGeometry g;
  g.batch = xd[0];
  g.in_c = xd[1];
  g.out_c = od[1];
  g.in_len = xd[2];
  g.out_len = od[2];
  g.kernel = weights.dim(2);
  g.dilation = win.dilations[0] + 1;
  g.pad_left = win.pad_l[0];
  if (g.in_len + win.pad_l[0] + win.pad_r[0] - (g.kernel - 1) * g.dilation != g.out_len) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  std::vector<float> packed = kernels::PackConv1dWeights(weights.data<float>(), g);
  const auto [w, b] = KeepNativeConvConstants(
      L.plan(), Tensor::FromVector<float>(packed, {static_cast<int64_t>(packed.size())}), bias);
  AddNativeStep(L, n, {in}, slot, [g, w, b](const void* const* i, void* y) {
    kernels::Conv1dF32(static_cast<const float*>(i[0]), w, b, static_cast<float*>(y), g);
    return absl::OkStatus();
  })->kind = "conv1d";
  return true;
}

bool LowerConv(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;
  if (!ConstantConvOperands(L, n, &w, &b)) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  int64_t groups = n.GetInt("group", 1);
  int64_t oc = w->dim(0);
  if (groups < 1 || oc % groups != 0) return false;
  Window win;
  if (!ComputeWindow(n, Spatial(w->dims()), Spatial(xd), Spatial(od), false, &win)) return false;

  // An inference BatchNormalization consuming only this conv folds into it.
  const Value* conv_out = out;
  const Node* bn = nullptr;
  Tensor scale, shift;
  const ValueState& os = L.V(out);
  if (L.options().fuse_post_ops && !os.graph_output && os.consumers.size() == 1 &&
      os.consumers[0]->op_type == "BatchNormalization" && os.consumers[0]->domain.empty() &&
      os.consumers[0]->input(0) == out && L.FoldBatchNorm(*os.consumers[0], &scale, &shift) &&
      scale.num_elements() == oc) {
    bn = os.consumers[0];
    conv_out = bn->output(0);
  }
  // The model's weights by reference (a copy would keep their plain bytes
  // from being released once packed: Lowerer::ReleasePlainCopy), or a
  // BN-scaled copy of them.
  const Tensor* weights = w;
  Tensor scaled;
  Tensor bias;
  if (b != nullptr) bias = *b;
  if (bn != nullptr) {
    scaled = w->Clone();
    weights = &scaled;
    float* wp = scaled.mutable_data<float>();
    int64_t per = w->num_elements() / oc;
    Tensor nb(DType::kFloat, {oc});
    for (int64_t o = 0; o < oc; ++o) {
      float k = scale.data<float>()[o];
      for (int64_t j = 0; j < per; ++j) wp[o * per + j] *= k;
      nb.mutable_data<float>()[o] = (b != nullptr ? b->data<float>()[o] : 0.0f) * k + shift.data<float>()[o];
    }
    bias = nb;
  }
  // Weights of `dims` in the layout oneDNN may pick (plain when blocked layouts are off).
  auto weights_any = [&](const memory::dims& dims) {
    return L.options().blocked_layouts ? memory::desc(dims, memory::data_type::f32, memory::format_tag::any)
                                       : StridedMd(dims, PlainStrides(dims));
  };
  memory::dims wdims = ConvWeightDims(*w, groups);
  memory::desc w_plain = StridedMd(wdims, PlainStrides(wdims));
  const memory::desc w_any = weights_any(wdims);
  memory::desc b_md = bias.defined() ? PlainMd({oc}) : memory::desc();
  Plan& plan = L.plan();
  // A 1x1 conv at 1x1 (an SE block's, a head's): a product of N rows.
  const bool one_tap = NumElements(Spatial(w->dims())) == 1;
  const bool point = groups == 1 && one_tap && xd.size() >= 3 && od.size() == xd.size() &&
                     NumElements(Spatial(xd)) == 1 && NumElements(Spatial(od)) == 1;
  if (point && xd[0] <= kernels::GemvMatrix::kMaxRows) {
    FewRowsProduct p;
    p.a = x;
    p.out = conv_out;
    p.m = xd[0];
    p.k = w->dim(1);
    p.n = oc;
    p.weights = weights;
    p.weights_value = weights == w ? n.input(1) : nullptr;
    p.transposed = true;
    p.bias = bias.defined() ? &bias : nullptr;
    p.release_weights = weights == w;
    if (LowerFewRowsProduct(L, n, p)) {
      if (bn != nullptr) L.MarkFused(bn);
      return true;
    }
  }
  std::vector<PostOp> chain = L.CollectPostOps(conv_out);
  if (chain.empty() && LowerPlainDepthwise(L, n, *weights, bias, conv_out, win)) {
    if (bn != nullptr) L.MarkFused(bn);
    return true;
  }
  if (LowerTapConv(L, n, *weights, bias, conv_out, win)) {
    if (bn != nullptr) L.MarkFused(bn);
    return true;
  }
  // bf16 compute (issue #17): a conv whose input and weights the model
  // declares bfloat16 reads both as bfloat16 (AVX512-BF16 dot products, f32
  // accumulation and output). The input is rounded to the bf16 value the
  // model declares (the widened plan keeps it f32 in between); the weights
  // hold bf16 values exactly. Not with a BatchNormalization folded in: its
  // scaled weights are not the model's bf16 values.
  bool bf16 = bn == nullptr && L.ReadsAsBf16(x) && L.ReadsAsBf16(n.input(1));
  auto build_with = [&](const memory::desc& w_md, const memory::desc& src_md, const memory::desc& dst_md) {
    const memory::desc src = bf16 ? WithDataType(src_md, memory::data_type::bf16) : src_md;
    const memory::desc wts = bf16 ? WithDataType(w_md, memory::data_type::bf16) : w_md;
    return L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
      return dnnl::convolution_forward::primitive_desc(
          dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, src, wts,
                                          b_md, dst_md, win.strides, win.dilations, win.pad_l, win.pad_r),
          attr, plan.engine);
    });
  };
  auto build = [&](const memory::desc& src_md, const memory::desc& dst_md) { return build_with(w_any, src_md, dst_md); };
  // The producer's layout first (no reorder). oneDNN 2.6 has only its
  // reference kernel for some (layout, geometry) pairs, e.g. a grouped 3x3
  // conv of 16 channels per group reading a 1x1 conv's channels-last output
  // (RegNet); then a layout of the conv's own choice, then plain NCHW (the
  // im2col + GEMM kernel takes any group size), each at the cost of a reorder.
  memory::desc dst_md = L.options().blocked_layouts ? AnyMd(od) : PlainMd(od);
  if (L.options().blocked_layouts && od.size() == 4 && ConvsPreferBlocked16(L)) {
    dst_md = memory::desc(ToDnnlDims(od), memory::data_type::f32, memory::format_tag::nChw16c);
  }
  // Without a fast bf16 kernel on this CPU: f32 (build reads `bf16`).
  std::optional<decltype(build(dst_md, dst_md))> built_bf16;
  if (bf16) built_bf16 = IfFast("conv", [&] { return build(AnyMd(xd), dst_md); });
  bf16 = built_bf16.has_value();
  auto built = bf16 ? *built_bf16 : build(L.SrcMdOrAny(x), dst_md);
  std::vector<std::pair<memory::desc, memory::desc>> alternatives;
  if (L.options().blocked_layouts) alternatives.emplace_back(AnyMd(xd), AnyMd(od));
  alternatives.emplace_back(PlainMd(xd), PlainMd(od));
  for (const auto& [src_alt, dst_alt] : alternatives) {
    if (!IsSlowImplementation("conv", built.first.impl_info_str())) break;
    try {
      auto alt = build(src_alt, dst_alt);
      if (!IsSlowImplementation("conv", alt.first.impl_info_str())) built = alt;
    } catch (const dnnl::error&) {
    }
  }
  // Where oneDNN 2.6 offers a brgemm kernel first that its direct kernel for
  // the same layouts and post-ops beats (each implementation of one primitive
  // desc timed over 60-300 runs in one process on an AVX-512 Zen 4, 1 thread;
  // 2 threads alike), the direct one:
  // - depthwise (brdgmm_dw -> jit_dw), channels-last, at every shape tried:
  //   3x3 + ReLU [1, 16, 112, 112] 0.063 -> 0.037 ms, [1, 32, 112, 112]
  //   0.132 -> 0.078, [1, 72, 56, 56] 0.112 -> 0.057, [1, 672, 14, 14]
  //   0.052 -> 0.040, stride 2 [1, 64, 112, 112] 0.098 -> 0.079, 5x5
  //   [1, 480, 14, 14] 0.074 -> 0.057, 7x7 [1, 96, 56, 56] 0.485 -> 0.442
  //   (MobileNetV3's and EfficientNet's early depthwise convs had taken up
  //   to 2x ONNX Runtime's time);
  // - strided 1x1 (brgconv_1x1 -> jit_1x1), ResNet's downsampling
  //   projections: 512 -> 1024 channels, [28, 28] -> [14, 14], 4.45 -> 1.77
  //   ms, 1024 -> 2048 2.44 -> 1.76; the smaller ones equal (64 -> 128 at 56:
  //   0.115 / 0.118, 256 -> 512 at 56: 1.80 / 1.80). Stride 1 stays with
  //   brgconv_1x1, as fast or faster there (1024 -> 256 at 14: 1.06 / 1.32).
  // (The op desc outlives the walk: next_impl reads it.)
  const bool strided_1x1 =
      one_tap && std::any_of(win.strides.begin(), win.strides.end(), [](int64_t s) { return s > 1; });
  const char* direct = nullptr;
  if (absl::StrContains(built.first.impl_info_str(), "brdgmm_dw")) direct = "jit_dw";
  if (strided_1x1 && absl::StrContains(built.first.impl_info_str(), "brgconv_1x1")) direct = "jit_1x1";
  if (!bf16 && direct != nullptr) {
    try {
      const dnnl::convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                                              built.first.src_desc(), w_any, b_md, built.first.dst_desc(),
                                              win.strides, win.dilations, win.pad_l, win.pad_r);
      dnnl::convolution_forward::primitive_desc pd(d, Lowerer::MakeAttr(chain, built.second), plan.engine);
      do {
        if (absl::StartsWith(pd.impl_info_str(), direct)) {
          built.first = pd;
          break;
        }
      } while (pd.next_impl());
    } catch (const dnnl::error&) {
    }
  }
  // Groups of 2 or 4 channels: oneDNN 2.6's direct grouped kernels take
  // whole channel blocks (8 with AVX2, 16 with AVX-512) per group, so such
  // convs run im2col + GEMM group by group (DPN/ResNeXt's 32 groups of 4
  // channels at [1, 128, 56, 56]: 3.7 ms, ONNX Runtime 2.6). Neighbouring
  // groups merged into groups of a whole block (MergeConvGroups) run on the
  // direct kernel at 2x or 4x the products: 1.5 ms.
  Tensor merged;
  const int64_t cin_g = w->dim(1);
  if (!bf16 && groups > 1 && cin_g > 1 && absl::StrContains(built.first.impl_info_str(), "gemm")) {
    for (int64_t block : {8, 16}) {
      if (cin_g >= block || block % cin_g != 0 || groups % (block / cin_g) != 0) continue;
      const int64_t m = block / cin_g;
      Tensor candidate = MergeConvGroups(*weights, groups, m);
      const memory::dims merged_dims = ConvWeightDims(candidate, groups / m);
      bool taken = false;
      for (const memory::desc& src_try : {L.SrcMdOrAny(x), AnyMd(xd)}) {
        try {
          auto alt = build_with(weights_any(merged_dims), src_try, dst_md);
          const std::string impl = alt.first.impl_info_str();
          if (!absl::StrContains(impl, "gemm") && !IsSlowImplementation("conv", impl)) {
            built = alt;
            taken = true;
            break;
          }
        } catch (const dnnl::error&) {
        }
      }
      if (!taken) continue;
      merged = std::move(candidate);
      weights = &merged;
      w_plain = StridedMd(merged_dims, PlainStrides(merged_dims));
      break;
    }
  }
  // oneDNN 2.6 on 1-D kernels it has no direct kernel for (11 taps): our
  // direct kernel instead of im2col + GEMM. One sitting on a Zen 3, 1 thread
  // (aic-onnx bench, ORT beside): [1, 8, 16384] 11 taps 1.3-2.5 ms -> 0.29-0.38
  // (ORT 0.65); [1, 16, 16384] dilation 3: 2.9 -> 1.04 (1.73); [1, 32, 4096]:
  // 2.0 -> 1.03 (1.39); [1, 128, 2048]: 11.7 -> 8.2 (8.9); [1, 512, 512]:
  // 34.4 both (35.4).
  if (!bf16 && absl::StrContains(built.first.impl_info_str(), "gemm") &&
      LowerConv1dDirect(L, n, *weights, bias, conv_out, win)) {
    if (bn != nullptr) L.MarkFused(bn);
    return true;
  }
  // A residual Add right after the conv that oneDNN 2.6 took as no binary
  // post-op at speed (its AVX-512 brgconv has only the reference kernel for
  // an operand of the destination's full shape): oneDNN's sum post-op adds
  // into a destination that starts as the residual, written in the
  // residual's own layout, unpadded (Step::accumulate; ResNet-50 ran its 16
  // residual Adds as binary steps, 1.05 ms of 76 at 1 thread, ONNX Runtime
  // fuses them).
  if (!bf16 && !merged.defined() && built.second == 0 && !chain.empty() && chain[0].binary &&
      chain[0].alg == algorithm::binary_add && chain[0].out != nullptr && chain[0].src1_slot >= 0) {
    const Slot& residual = plan.slots[chain[0].src1_slot];
    const bool dense = residual.storage != Slot::Storage::kConstant && residual.dims == L.V(conv_out).dims &&
                       residual.md.get_size() == static_cast<size_t>(NumElements(residual.dims)) * sizeof(float);
    if (dense) {
      chain[0].sum = true;
      const memory::desc residual_md = residual.md;
      auto summed = IfFast("conv", [&] { return build(built.first.src_desc(), residual_md); });
      if (summed && summed->second >= 1 && summed->first.dst_desc() == residual_md) {
        built = *summed;
        chain[0].name = "Add(residual sum)";
      } else {
        chain[0].sum = false;
      }
    }
  }
  const auto& [pd, k] = built;
  if (bn != nullptr) L.MarkFused(bn);
  // The slot keeps what it needs: the packed copy, or `weights` itself when
  // the layouts agree; the BN-scaled temporary is not kept beside it.
  int ws = L.PackedConstSlot(*weights, w_plain, pd.weights_desc());
  int bs = -1;
  if (bias.defined()) {
    plan.constants.push_back(bias);
    bs = L.ConstSlot(plan.constants.back(), b_md);
  }
  int src = L.SlotIn(x, pd.src_desc());
  DnnlStep* step = L.AddDnnlStep(dnnl::convolution_forward(pd), "conv", n);
  step->AddArg(DNNL_ARG_SRC, src, pd.src_desc(), false);
  step->AddArg(DNNL_ARG_WEIGHTS, ws, pd.weights_desc(), false);
  if (bs >= 0) step->AddArg(DNNL_ARG_BIAS, bs, b_md, false);
  if (bn != nullptr) step->label += " + [bn folded]";
  L.FinishPostOps(step, conv_out, chain, k, pd.dst_desc(), pd.dst_desc() == PlainMd(L.V(conv_out).dims));
  return true;
}

// ConvTranspose with kernel == stride and no padding (FPN/DB-head upsampling):
// every input pixel writes its own kh x kw output patch, so it is one GEMM
// Y[OC·kh·kw, HW] = Wᵀ·X (X read as it lies, [IC, HW] per image; W packed
// once) and our patch scatter (kernels/patch_scatter.h), which adds the bias
// while it moves each patch into place. oneDNN 2.6's deconvolution is ~100x
// slower on these shapes; its matmul has only the reference kernel for a
// per-row bias, and its reorder took 3-4x our scatter's time (the form before:
// Yᵀ = Xᵀ·W with a per-column bias and that reorder, 1.3x ORT's time on
// [1, 64, 56, 56] 2x2 stride 2).
bool LowerPatchDeconv(Lowerer& L, const Node& n, const Tensor& w, const Tensor* b) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() != 4 || n.GetInt("group", 1) != 1) return false;
  std::vector<int64_t> k = Spatial(w.dims());
  std::vector<int64_t> strides = n.GetInts("strides", {1, 1});
  std::vector<int64_t> pads = n.GetInts("pads", {0, 0, 0, 0});
  std::vector<int64_t> dil = n.GetInts("dilations", {1, 1});
  if (strides != k || dil != std::vector<int64_t>{1, 1} || pads != std::vector<int64_t>{0, 0, 0, 0}) return false;
  int64_t nb = xd[0], ic = xd[1], h = xd[2], wd = xd[3], oc = w.dim(1), kk = k[0] * k[1];
  if (od != std::vector<int64_t>{nb, oc, h * k[0], wd * k[1]} || w.dim(0) != ic) return false;
  int64_t hw = h * wd, rows = oc * kk;
  // W is [ic, oc·kh·kw] in memory: read transposed in place as the GEMM's A.
  const memory::desc w_md(memory::dims{1, rows, ic}, memory::data_type::f32, memory::dims{rows * ic, 1, rows});
  const memory::desc x_md = PlainMd({nb, ic, hw});
  const memory::desc y_md = PlainMd({nb, rows, hw});
  Plan& plan = L.plan();
  // Everything that can decline (oneDNN throws, no slot for the output)
  // comes before the plan gains a step or a slot.
  dnnl::matmul::primitive_desc mm(dnnl::matmul::desc(w_md, x_md, y_md), plan.engine);
  const int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  const int ws = L.ConstSlot(w, w_md);
  const int xs = L.PlainSlot(x);
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(mm), "deconv_gemm", n);
  step->AddArg(DNNL_ARG_SRC, ws, w_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, xs, x_md, false);
  const int ys = L.NewArenaSlot(nullptr, y_md, true);
  step->AddArg(DNNL_ARG_DST, ys, y_md, true);
  const float* bias = nullptr;
  if (b != nullptr) {
    plan.constants.push_back(*b);
    bias = plan.constants.back().data<float>();
  }
  const kernels::PatchScatterShape shape{nb, oc, k[0], k[1], h, wd};
  AddNativeStep(L, n, {ys}, slot, [shape, bias](const void* const* in, void* y) {
    kernels::ScatterPatches(static_cast<const float*>(in[0]), bias, static_cast<float*>(y), shape);
    return absl::OkStatus();
  })->kind = "deconv_scatter";
  return true;
}

bool LowerConvTranspose(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;
  if (!ConstantConvOperands(L, n, &w, &b)) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  int64_t groups = n.GetInt("group", 1);
  int64_t ic = w->dim(0), ocg = w->dim(1), oc = ocg * groups;
  if (groups < 1 || ic % groups != 0 || od[1] != oc) return false;
  Window win;
  if (!ComputeWindow(n, Spatial(w->dims()), Spatial(xd), Spatial(od), true, &win)) return false;
  if (LowerPatchDeconv(L, n, *w, b)) return true;
  // ONNX keeps deconv weights as [IC, OC/G, k...]: describe them as oneDNN's
  // (g,) o, i, k... dims with strides over that storage.
  int64_t kvol = 1;
  for (int64_t d : Spatial(w->dims())) kvol *= d;
  int64_t icg = ic / groups;
  memory::dims wdims = {oc / groups, icg};
  memory::dims wstr = {kvol, ocg * kvol};
  memory::dims ks = PlainStrides(ToDnnlDims(Spatial(w->dims())));
  for (size_t i = 2; i < static_cast<size_t>(w->rank()); ++i) {
    wdims.push_back(w->dim(static_cast<int64_t>(i)));
    wstr.push_back(ks[i - 2]);
  }
  if (groups > 1) {
    wdims.insert(wdims.begin(), groups);
    wstr.insert(wstr.begin(), icg * ocg * kvol);
  }
  memory::desc w_from = StridedMd(wdims, wstr);
  memory::desc w_any = memory::desc(wdims, memory::data_type::f32, memory::format_tag::any);
  memory::desc b_md = b != nullptr ? PlainMd({oc}) : memory::desc();
  // oneDNN's fast deconvolutions want their own src layout, not the producer's.
  memory::desc src_md = L.options().blocked_layouts ? AnyMd(xd) : PlainMd(xd);
  memory::desc dst_md = L.options().blocked_layouts ? AnyMd(od) : PlainMd(od);
  Plan& plan = L.plan();
  std::vector<PostOp> chain = L.CollectPostOps(out);
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::deconvolution_forward::primitive_desc(
        dnnl::deconvolution_forward::desc(prop_kind::forward_inference, algorithm::deconvolution_direct, src_md,
                                          w_any, b_md, dst_md, win.strides, win.dilations, win.pad_l, win.pad_r),
        attr, plan.engine);
  });
  int ws = L.PackedConstSlot(*w, w_from, pd.weights_desc());
  int bs = b != nullptr ? L.ConstSlot(*b, b_md) : -1;
  int src = L.SlotIn(x, pd.src_desc());
  DnnlStep* step = L.AddDnnlStep(dnnl::deconvolution_forward(pd), "deconv", n);
  step->AddArg(DNNL_ARG_SRC, src, pd.src_desc(), false);
  step->AddArg(DNNL_ARG_WEIGHTS, ws, pd.weights_desc(), false);
  if (bs >= 0) step->AddArg(DNNL_ARG_BIAS, bs, b_md, false);
  L.FinishPostOps(step, out, chain, k, pd.dst_desc(), pd.dst_desc() == PlainMd(od));
  return true;
}

namespace {

// A MaxPool/AveragePool over one or two spatial axes with nothing fused
// after it, as our row kernel (kernels/window_pool.h), dilations included:
// where its input is already plain (a graph input, a native step's output),
// or oneDNN cannot pool the window well (`onednn_ok` false: a dilation,
// ceil_mode past the declared pads of an include-pad average, or oneDNN
// chose a scalar fallback; a reorder to plain first). Channel-blocked
// inputs (a conv's output) stay with oneDNN, which pools those fast.
// The window of pool n over x (dims xd) to y (dims od) as our kernels take
// it: the last spatial axis is the row; a 1-D pool has rows of height 1.
kernels::WindowPoolGeometry PoolGeometry(const Node& n, const Window& win, const std::vector<int64_t>& xd,
                                         const std::vector<int64_t>& od, bool is_max) {
  const size_t sp = win.kernel.size();
  std::vector<int64_t> declared = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  bool from_attribute = n.GetString("auto_pad", "NOTSET") == "NOTSET";
  kernels::WindowPoolGeometry g;
  g.is_max = is_max;
  g.count_include_pad = !is_max && n.GetInt("count_include_pad", 0) != 0;
  const size_t w = sp - 1;
  g.in_w = xd[2 + w];
  g.out_w = od[2 + w];
  g.kw = win.kernel[w];
  g.sw = win.strides[w];
  g.dw = win.dilations[w] + 1;
  g.pad_left = win.pad_l[w];
  g.pad_right = from_attribute ? declared[sp + w] : win.pad_r[w];
  if (sp == 2) {
    g.in_h = xd[2];
    g.out_h = od[2];
    g.kh = win.kernel[0];
    g.sh = win.strides[0];
    g.dh = win.dilations[0] + 1;
    g.pad_top = win.pad_l[0];
    g.pad_bottom = from_attribute ? declared[sp] : win.pad_r[0];
  }
  return g;
}

// A pool whose input a conv left channel-blocked (or channels-last), on our
// kernel in that layout (kernels/blocked_pool.h says why); the nodes after
// it run as steps of their own.
bool LowerWindowPoolOnBlockedInput(Lowerer& L, const Node& n, const Window& win, bool is_max) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  const Slot& in = L.plan().slots[L.V(x).slot];
  if ((xd.size() != 3 && xd.size() != 4) || in.plain || in.storage != Slot::Storage::kArena) return false;
  const int64_t block = ChannelBlockOf(in.md, xd);
  if (block == 0) return false;
  kernels::WindowPoolGeometry g = PoolGeometry(n, win, xd, od, is_max);
  const bool channels_last = block == xd[1];
  g.planes = channels_last ? xd[0] : xd[0] * ((xd[1] + block - 1) / block);
  if (g.planes == 0 || g.out_h == 0 || g.out_w == 0 || !kernels::EveryWindowTouchesInput(g)) return false;
  using tag = memory::format_tag;
  const memory::desc out_md = channels_last ? memory::desc(ToDnnlDims(od), memory::data_type::f32,
                                                           od.size() == 3 ? tag::nwc : tag::nhwc)
                                            : ChannelBlockedMd(od, block);
  const int slot = L.NewArenaSlot(out, out_md, false);
  AddNativeStep(L, n, {L.V(x).slot}, slot, [g, block](const void* const* i, void* y) {
    kernels::BlockedPoolF32(static_cast<const float*>(i[0]), static_cast<float*>(y), g, block);
    return absl::OkStatus();
  })->kind = "blocked_pool";
  return true;
}

bool LowerWindowPoolOnPlainInput(Lowerer& L, const Node& n, const Window& win, bool is_max, bool onednn_ok) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  const bool plain = L.plan().slots[L.V(x).slot].plain;
  // Where oneDNN can pool, it may also take the nodes after the pool as
  // post-ops: it goes first then. Where it cannot (or only on its scalar
  // plain-layout loop), the pool runs here and those nodes as steps of their own.
  if (xd.size() > 4 || (!plain && onednn_ok) || !NativeReady(L, x) || (onednn_ok && !L.CollectPostOps(out).empty())) {
    return false;
  }
  kernels::WindowPoolGeometry g = PoolGeometry(n, win, xd, od, is_max);
  g.planes = xd[0] * xd[1];
  // Every pool on a plain input is ours: oneDNN's plain-layout average took
  // 1.0x ([1, 64, 112, 112] 2x2 stride 2) to 3.6x ([1, 512, 7, 7] 3x3 stride 1)
  // our time, its MaxPools of long rows 1.0-2.7x (3x3 stride 1 of
  // [1, 64, 56, 56]: 2.7x; `aic-onnx bench`, alternating, AVX-512). Its
  // MaxPools of rows under 16 outputs (vectorized across channels) beat our
  // row loop until the short-row form ran the planes inside each row: now
  // ours takes 0.5-0.7x its time there (2x2 stride 2 of [1, 256, 14, 14]
  // and [1, 512, 8, 8], 3x3 stride 2 of [1, 64, 28, 28], 5x5 stride 1 of
  // [1, 128, 10, 10]). Without AVX-512 its plain-layout pools are scalar
  // fallbacks.
  if (g.planes == 0 || g.out_h == 0 || g.out_w == 0 || !kernels::EveryWindowTouchesInput(g)) return false;
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {L.PlainSlot(x)}, slot, [g](const void* const* in, void* y) {
    kernels::WindowPoolF32(static_cast<const float*>(in[0]), static_cast<float*>(y), g);
    return absl::OkStatus();
  })->kind = "window_pool";
  return true;
}

}  // namespace

bool LowerPool(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0) return false;
  for (size_t i = 1; i < n.num_outputs(); ++i) {
    if (n.output(i) != nullptr) return false;  // MaxPool indices
  }
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() < 3 || xd.size() > 5) return false;
  bool global = n.op_type.rfind("Global", 0) == 0;
  bool is_max = n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool";
  Window win;
  if (global) {
    for (int64_t d : Spatial(xd)) {
      win.kernel.push_back(d);
      win.strides.push_back(1);
      win.pad_l.push_back(0);
      win.pad_r.push_back(0);
    }
  } else {
    if (!ComputeWindow(n, n.GetInts("kernel_shape"), Spatial(xd), Spatial(od), false, &win)) return false;
    if (n.GetInt("storage_order", 0) != 0) return false;
    bool onednn_ok = true;
    for (int64_t d : win.dilations) onednn_ok = onednn_ok && d == 0;
    if (!is_max && n.GetInt("count_include_pad", 0) != 0) {
      // Why: what ceil_mode adds past the declared pads is not counted by
      // ONNX's average, but oneDNN's include-padding average counts it (found
      // by tests/graph_fuzz).
      size_t sp = win.kernel.size();
      std::vector<int64_t> pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
      for (size_t i = 0; i < sp && n.GetString("auto_pad", "NOTSET") == "NOTSET"; ++i) {
        onednn_ok = onednn_ok && win.pad_r[i] <= pads[i + sp];
      }
    }
    if (LowerWindowPoolOnBlockedInput(L, n, win, is_max)) return true;
    if (LowerWindowPoolOnPlainInput(L, n, win, is_max, onednn_ok)) return true;
    if (!onednn_ok) return false;
  }
  algorithm alg = is_max ? algorithm::pooling_max
                  : n.GetInt("count_include_pad", 0) != 0 ? algorithm::pooling_avg_include_padding
                                                          : algorithm::pooling_avg_exclude_padding;
  Plan& plan = L.plan();
  int s = L.V(x).slot;
  memory::desc src_md = plan.slots[s].md;
  memory::desc dst_md = L.options().blocked_layouts ? AnyMd(od) : PlainMd(od);
  std::vector<PostOp> chain = L.CollectPostOps(out);
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::pooling_forward::primitive_desc(
        dnnl::pooling_forward::desc(prop_kind::forward_inference, alg, src_md, dst_md, win.strides, win.kernel,
                                    win.pad_l, win.pad_r),
        attr, plan.engine);
  });
  // oneDNN's plain-layout fallbacks (simple_nchw: a 1-D stride-1 average)
  // are scalar loops: our kernel instead. (Without AVX-512, oneDNN's jit:avx2
  // pooling in the channel-blocked layout between two reorders measured no
  // faster than our kernel's portable path: 1.76-2.06x ONNX Runtime's time
  // against 1.76-2.08 on a Zen 3.)
  if (!global && IsSlowImplementation("pool", pd.impl_info_str()) &&
      LowerWindowPoolOnPlainInput(L, n, win, is_max, /*onednn_ok=*/false)) {
    return true;
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::pooling_forward(pd), "pool", n);
  step->AddArg(DNNL_ARG_SRC, s, src_md, false);
  L.FinishPostOps(step, out, chain, k, pd.dst_desc(), pd.dst_desc() == PlainMd(od));
  return true;
}

namespace {

// Whether node c reads an 8-bit input in whatever layout it is in: QLinearConv
// (oneDNN takes the layout) and the elementwise integer steps
// (ops_native_quantize.cc: in place when unpadded, else after one reorder).
bool ReadsAnyEightBitLayout(const Node& c) {
  if (c.domain.empty()) return c.op_type == "QLinearConv" || c.op_type == "DequantizeLinear";
  return c.domain == kAicDomain &&
         (c.op_type == "QLinearLookup" || c.op_type == "QLinearAdd" || c.op_type == "QLinearMul");
}

}  // namespace

namespace {

// QLinearConv's operands after x, all constants, with one f32 scale for x and
// y, scalar zero points and f32 weight scales (what both int8 lowerings
// take); absent optional inputs are null.
struct QLinearConvConstants {
  const Tensor *xs, *xz, *w, *ws, *wz, *ys, *yz, *b;
};

std::optional<QLinearConvConstants> ConstantOperands(Lowerer& L, const Node& n) {
  QLinearConvConstants k{L.Const(n.input(1)),
                         L.Const(n.input(2)),
                         L.Const(n.input(3)),
                         L.Const(n.input(4)),
                         n.has_input(5) ? L.Const(n.input(5)) : nullptr,
                         L.Const(n.input(6)),
                         n.has_input(7) ? L.Const(n.input(7)) : nullptr,
                         n.has_input(8) ? L.Const(n.input(8)) : nullptr};
  if (k.xs == nullptr || k.xz == nullptr || k.w == nullptr || k.ws == nullptr || k.ys == nullptr) return std::nullopt;
  if ((n.has_input(5) && k.wz == nullptr) || (n.has_input(7) && k.yz == nullptr) ||
      (n.has_input(8) && k.b == nullptr)) {
    return std::nullopt;
  }
  if (k.xs->dtype() != DType::kFloat || k.ws->dtype() != DType::kFloat || k.ys->dtype() != DType::kFloat ||
      k.xs->num_elements() != 1 || k.ys->num_elements() != 1 || k.xz->num_elements() != 1 ||
      (k.yz != nullptr && k.yz->num_elements() != 1)) {
    return std::nullopt;
  }
  return k;
}

// The convolution geometry of node n (a conv of x [N, C, spatial...] to
// `od` with weights w) for the pair kernels; false where it is not one
// (rank, channels, groups, padding).
bool PairShapeOf(const Node& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& od, const Tensor& w,
                 kernels::PairConvShape* shape) {
  if (xd.size() < 3 || xd.size() > 5 || w.rank() != static_cast<int64_t>(xd.size()) || od.size() != xd.size()) {
    return false;
  }
  const size_t sp = xd.size() - 2;
  const int64_t oc = w.dim(0), groups = n.GetInt("group", 1);
  if (groups < 1 || oc % groups != 0 || xd[1] % groups != 0 || xd[1] / groups != w.dim(1) || od[1] != oc ||
      od[0] != xd[0] || NumElements(od) == 0) {
    return false;
  }
  Window win;
  if (!ComputeWindow(n, Spatial(w.dims()), Spatial(xd), Spatial(od), false, &win)) return false;
  shape->batch = xd[0];
  shape->in_channels = xd[1];
  shape->out_channels = oc;
  shape->groups = groups;
  for (size_t i = 0; i < sp; ++i) {
    const size_t d = 3 - sp + i;
    shape->in[d] = xd[2 + i];
    shape->out[d] = od[2 + i];
    shape->kernel[d] = win.kernel[i];
    shape->stride[d] = win.strides[i];
    shape->dilation[d] = win.dilations[i] + 1;
    shape->pad[d] = win.pad_l[i];
  }
  return true;
}

// QLinearConv on CPUs without VNNI, where oneDNN's u8·s8 products
// saturate: our pair kernels (kernels/pair_conv.h), exact integer sums
// requantized as the reference kernel does. Covered: constant scales, zero
// points, weights (int8 or uint8, any zero points) and bias, any groups,
// 1-D to 3-D spatial, sums that cannot pass 2^31. Anything else runs the
// reference kernel.
bool LowerPairQLinearConv(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!kernels::PairGemmAvailable() || out == nullptr || !NativeReady(L, x)) return false;
  const ValueState& xs_state = L.V(x);
  const ValueState& os = L.V(out);
  if (!IsEightBitInteger(xs_state.dtype) || !IsEightBitInteger(os.dtype) || !os.is_static) return false;
  std::optional<QLinearConvConstants> k = ConstantOperands(L, n);
  if (!k || !IsEightBitInteger(k->w->dtype())) return false;
  const Tensor *xs = k->xs, *xz = k->xz, *w = k->w, *ws = k->ws, *wz = k->wz, *ys = k->ys, *yz = k->yz, *b = k->b;
  kernels::PairConvShape shape;
  if (!PairShapeOf(n, xs_state.dims, os.dims, *w, &shape)) return false;
  const int64_t oc = shape.out_channels;
  const int64_t nscale = ws->num_elements();
  if (nscale != 1 && nscale != oc) return false;
  if (wz != nullptr && wz->num_elements() != 1 && wz->num_elements() != oc) return false;
  if (b != nullptr && (b->dtype() != DType::kInt32 || b->num_elements() != oc)) return false;
  kernels::PairConvQuant q;
  q.x_zero = static_cast<int32_t>(xz->ElementAsDouble(0));
  q.x_signed = xs_state.dtype == DType::kInt8;
  q.y_zero = yz != nullptr ? static_cast<int32_t>(yz->ElementAsDouble(0)) : 0;
  q.y_signed = os.dtype == DType::kInt8;
  if (wz != nullptr) {
    for (int64_t c = 0; c < wz->num_elements(); ++c) q.w_zero.push_back(static_cast<int32_t>(wz->ElementAsDouble(c)));
  }
  // Every sum exact in int32: |x - x_zero|, |w - w_zero| <= 255.
  int64_t bias_max = 0;
  if (b != nullptr) {
    for (int64_t c = 0; c < oc; ++c) {
      q.bias.push_back(b->data<int32_t>()[c]);
      bias_max = std::max<int64_t>(bias_max, std::abs(static_cast<int64_t>(q.bias.back())));
    }
  }
  const int64_t depth = w->num_elements() / oc;
  if (depth * 255 * 255 + bias_max >= (int64_t{1} << 31)) return false;
  // The reference's scale: the f32 product xs·ws[c]/ys, applied in double.
  double scale_max = 0;
  for (int64_t c = 0; c < nscale; ++c) {
    const float scale = xs->data<float>()[0] * ws->data<float>()[c] / ys->data<float>()[0];
    if (!std::isfinite(scale)) return false;
    q.scales.push_back(scale);
    scale_max = std::max(scale_max, std::abs(static_cast<double>(scale)));
  }
  q.sums_fit = static_cast<double>(depth * 255 * 255 + bias_max) * scale_max < 2147483647.0;
  // Output slot first: nothing is emitted before the last way to decline.
  const int y_slot = NativeOutSlot(L, out);
  if (y_slot < 0) return false;
  const int x_slot = L.PlainSlot(x);
  const bool w_signed = w->dtype() == DType::kInt8;
  if (kernels::PairDepthwiseConv::Covers(shape)) {
    auto conv = std::make_shared<kernels::PairDepthwiseConv>(shape, w->raw_data(), w_signed, std::move(q));
    NativeStep* step = AddNativeStep(L, n, {x_slot}, y_slot, [conv](const void* const* i, void* y) {
      conv->Run(i[0], y);
      return absl::OkStatus();
    });
    step->kind = "qconv";
    step->label += " [int8 pairs, depthwise]";
    return true;
  }
  auto conv = std::make_shared<kernels::PairConv>(shape, w->raw_data(), w_signed, std::move(q));
  const int scratch = L.NewArenaSlot(nullptr, PlainMd({(conv->ScratchBytes() + 3) / 4 + 1}), true);
  NativeStep* step = AddNativeStep(L, n, {x_slot}, {y_slot, scratch}, [conv](const void* const* i, void* const* o) {
    conv->Run(i[0], o[0], o[1]);
    return absl::OkStatus();
  });
  step->kind = "qconv";
  step->label += " [int8 pairs]";
  return true;
}

}  // namespace

// ConvInteger (what onnxruntime.quantization.quantize_dynamic makes of every
// Conv: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul by x_scale·w_scale)
// on the pair kernels, on every AVX2 CPU (oneDNN has no int8 convolution with
// an int32 output and a runtime zero point): exact int32 sums, or with the
// Cast -> Mul(scalar) reader the Mul's f32 output, each op's rounding. x's
// zero point is read each run. Covered: constant weights (int8 or uint8,
// zero points per tensor or channel), any groups, 1-D to 3-D, sums that
// cannot pass 2^31. Anything else runs the reference kernel.
bool LowerConvInteger(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const Tensor* w = n.num_inputs() > 1 ? L.Const(n.input(1)) : nullptr;
  const Value* xzp = n.num_inputs() > 2 && n.has_input(2) ? n.input(2) : nullptr;
  const bool has_wz = n.num_inputs() > 3 && n.has_input(3);
  const Tensor* wz = has_wz ? L.Const(n.input(3)) : nullptr;
  if (!kernels::PairGemmAvailable() || out == nullptr || w == nullptr || !NativeReady(L, x) || (has_wz && wz == nullptr)) {
    return false;
  }
  const ValueState& xs_state = L.V(x);
  const ValueState& os = L.V(out);
  if (!IsEightBitInteger(xs_state.dtype) || !IsEightBitInteger(w->dtype()) || os.dtype != DType::kInt32 ||
      !os.is_static) {
    return false;
  }
  if (xzp != nullptr &&
      (!NativeReady(L, xzp) || L.V(xzp).dtype != xs_state.dtype || NumElements(L.V(xzp).dims) != 1)) {
    return false;
  }
  kernels::PairConvShape shape;
  if (!PairShapeOf(n, xs_state.dims, os.dims, *w, &shape)) return false;
  if (wz != nullptr && wz->num_elements() != 1 && wz->num_elements() != shape.out_channels) return false;
  if (w->num_elements() / shape.out_channels * 255 * 255 >= (int64_t{1} << 31)) return false;
  kernels::PairConvQuant q;
  q.x_signed = xs_state.dtype == DType::kInt8;
  if (wz != nullptr) {
    for (int64_t c = 0; c < wz->num_elements(); ++c) q.w_zero.push_back(static_cast<int32_t>(wz->ElementAsDouble(c)));
  }
  const Value* scale = nullptr;
  const Node* mul = ScaledCastOf(L, out, &scale);
  // Output slot first: nothing is emitted before the last way to decline.
  const int y_slot = NativeOutSlot(L, mul != nullptr ? mul->output(0) : out);
  if (y_slot < 0) return false;
  const int x_slot = L.PlainSlot(x);
  const int zero_slot = xzp != nullptr ? L.PlainSlot(xzp) : -1;
  const int scale_slot = mul != nullptr ? L.PlainSlot(scale) : -1;
  const bool x_signed = xs_state.dtype == DType::kInt8, w_signed = w->dtype() == DType::kInt8;
  auto zero_of = [x_signed](const void* z) -> int32_t {
    if (z == nullptr) return 0;
    return x_signed ? *static_cast<const int8_t*>(z) : *static_cast<const uint8_t*>(z);
  };
  NativeStep* step = nullptr;
  if (kernels::PairDepthwiseConv::Covers(shape)) {
    auto conv = std::make_shared<kernels::PairDepthwiseConv>(shape, w->raw_data(), w_signed, std::move(q));
    step = AddNativeStep(L, n, {x_slot, zero_slot, scale_slot}, y_slot, [conv, zero_of](const void* const* i, void* y) {
      conv->RunSums(i[0], zero_of(i[1]), y, static_cast<const float*>(i[2]));
      return absl::OkStatus();
    });
    step->label += " [int8 pairs, depthwise]";
  } else {
    auto conv = std::make_shared<kernels::PairConv>(shape, w->raw_data(), w_signed, std::move(q));
    const int scratch = L.NewArenaSlot(nullptr, PlainMd({(conv->ScratchBytes() + 3) / 4 + 1}), true);
    step = AddNativeStep(L, n, {x_slot, zero_slot, scale_slot}, {y_slot, scratch},
                         [conv, zero_of](const void* const* i, void* const* o) {
                           conv->RunSums(i[0], zero_of(i[1]), o[0], o[1], static_cast<const float*>(i[2]));
                           return absl::OkStatus();
                         });
    step->label += " [int8 pairs]";
  }
  step->kind = "qconv";
  if (mul != nullptr) FuseScaledCast(L, out, mul, nullptr, step);
  return true;
}

// QLinearConv (what the session's rewriter makes of a QDQ Conv,
// rewrite/rules/quantized_rules.cc) as oneDNN's int8 convolution: u8/s8
// activations, s8 weights packed once, the s32 bias added to the accumulator,
// one output scale xs*ws[c]/ys per channel (or per tensor), and the x and y
// zero points as runtime zero points. oneDNN 2.6 treats the padded border as
// holding the src zero point (it compensates for it), which is QLinearConv's
// padding with x_zero_point. Results equal the reference kernel's but for
// the last bit of a rounding: oneDNN scales in f32 and adds y_zero_point
// before rounding half to even, the reference scales in double and adds it
// after, so a product at a tie (or within f32 rounding of one) can come out
// one step apart. Covered: constant scales, zero points, weights and bias; a
// zero weight zero point; 1-D to 3-D spatial; CPUs with VNNI (without, the
// u8·s8 pairs saturate in int16). Anything else runs the reference kernel.
bool LowerQLinearConv(Lowerer& L, const Node& n) {
  using dt = memory::data_type;
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!ExactInt8Products()) return LowerPairQLinearConv(L, n);
  if (out == nullptr || !NativeReady(L, x) || L.V(x).slot < 0) return false;
  const ValueState& xs_state = L.V(x);
  const ValueState& os = L.V(out);
  auto eight_bit = [](DType t) { return t == DType::kUint8 || t == DType::kInt8; };
  if (!eight_bit(xs_state.dtype) || !eight_bit(os.dtype) || !os.is_static) return false;
  std::optional<QLinearConvConstants> k = ConstantOperands(L, n);
  if (!k || k->w->dtype() != DType::kInt8) return false;
  const Tensor *xs = k->xs, *xz = k->xz, *w = k->w, *ws = k->ws, *wz = k->wz, *ys = k->ys, *yz = k->yz, *b = k->b;
  const std::vector<int64_t>& xd = xs_state.dims;
  const std::vector<int64_t>& od = os.dims;
  if (xd.size() < 3 || xd.size() > 5 || w->rank() != static_cast<int64_t>(xd.size())) return false;
  int64_t oc = w->dim(0);
  int64_t groups = n.GetInt("group", 1);
  if (groups < 1 || oc % groups != 0 || od.size() != xd.size() || od[1] != oc) return false;
  int64_t nscale = ws->num_elements();
  if (nscale != 1 && nscale != oc) return false;
  // oneDNN's weights have no zero point: s8 weights quantized symmetrically.
  if (wz != nullptr) {
    for (int64_t i = 0; i < wz->num_elements(); ++i) {
      if (wz->ElementAsDouble(i) != 0) return false;
    }
  }
  if (b != nullptr && (b->dtype() != DType::kInt32 || b->num_elements() != oc)) return false;
  Window win;
  if (!ComputeWindow(n, Spatial(w->dims()), Spatial(xd), Spatial(od), false, &win)) return false;

  // The scale each channel's accumulator is multiplied by, rounded as the
  // reference kernel rounds it (f32 products).
  std::vector<float> scales(static_cast<size_t>(nscale));
  for (int64_t c = 0; c < nscale; ++c) {
    scales[c] = xs->data<float>()[0] * ws->data<float>()[c] / ys->data<float>()[0];
  }
  int32_t x_zero = static_cast<int32_t>(xz->ElementAsDouble(0));
  int32_t y_zero = yz != nullptr ? static_cast<int32_t>(yz->ElementAsDouble(0)) : 0;
  dt xdt = xs_state.dtype == DType::kUint8 ? dt::u8 : dt::s8;
  dt ydt = os.dtype == DType::kUint8 ? dt::u8 : dt::s8;
  memory::dims xdims = ToDnnlDims(xd), odims = ToDnnlDims(od);
  memory::desc x_plain(xdims, xdt, PlainStrides(xdims));
  memory::desc y_plain(odims, ydt, PlainStrides(odims));
  memory::dims wdims = ConvWeightDims(*w, groups);
  memory::desc w_plain(wdims, dt::s8, PlainStrides(wdims));
  memory::desc w_any(wdims, dt::s8, memory::format_tag::any);
  memory::desc b_md = b != nullptr ? memory::desc({oc}, dt::s32, memory::format_tag::a) : memory::desc();
  dnnl::primitive_attr attr;
  attr.set_output_scales(nscale == 1 ? 0 : 1 << 1, scales);
  if (x_zero != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (y_zero != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  Plan& plan = L.plan();
  auto build = [&](const memory::desc& src_md, const memory::desc& dst_md) {
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, src_md, w_any,
                                        b_md, dst_md, win.strides, win.dilations, win.pad_l, win.pad_r),
        attr, plan.engine);
  };
  // The producer's layout first (a QLinearConv's blocked output), then the
  // plain layouts; oneDNN's int8 kernels want channels-last or blocked
  // activations, so usually a layout of its choice.
  memory::desc x_md = plan.slots[L.V(x).slot].md;
  bool x_blocked = !plan.slots[L.V(x).slot].plain;
  memory::desc y_any(odims, ydt, memory::format_tag::any);
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  try {
    pd = x_blocked ? build(x_md, y_any) : build(x_plain, y_plain);
  } catch (const dnnl::error&) {
  }
  if (!pd || IsSlowImplementation("conv", pd->impl_info_str())) {
    try {
      auto alt = build(memory::desc(xdims, xdt, memory::format_tag::any), memory::desc(odims, ydt, memory::format_tag::any));
      if (!pd || !IsSlowImplementation("conv", alt.impl_info_str())) pd = alt;
    } catch (const dnnl::error&) {
    }
  }
  if (!pd) return false;
  // The output stays in the conv's layout when its readers take any layout
  // (a QLinearConv reads it as it is; the elementwise integer steps run in
  // it when it has no padding, else through one shared reorder to plain,
  // PlainSlot); otherwise it is reordered to plain here.
  bool keep_blocked = pd->dst_desc() != y_plain && !os.graph_output && !os.consumers.empty();
  for (const Node* c : os.consumers) {
    keep_blocked = keep_blocked && ReadsAnyEightBitLayout(*c);
  }
  // Output slot first: nothing is emitted before the last way to decline.
  int y_slot = keep_blocked ? -1 : NativeOutSlot(L, out);
  if (!keep_blocked && y_slot < 0) return false;
  int x_slot = L.V(x).slot;

  // One reorder per (value, layout), shared by the convs reading it.
  int src = !x_blocked && pd->src_desc() == x_plain ? x_slot : L.SlotIn(x, pd->src_desc());
  // The slot keeps the packed copy, or the weights themselves when layouts agree.
  int w_slot = L.PackedConstSlot(*w, w_plain, pd->weights_desc());
  int b_slot = -1;
  if (b != nullptr) {
    plan.constants.push_back(*b);
    b_slot = L.ConstSlot(plan.constants.back(), b_md);
  }
  bool dst_direct = pd->dst_desc() == y_plain || keep_blocked;
  int dst = keep_blocked ? L.NewArenaSlot(out, pd->dst_desc(), false)
                         : dst_direct ? y_slot : L.NewArenaSlot(nullptr, pd->dst_desc(), false);
  if (keep_blocked) plan.slots[dst].dtype = os.dtype;
  DnnlStep* step = L.AddDnnlStep(dnnl::convolution_forward(*pd), "conv", n);
  step->AddArg(DNNL_ARG_SRC, src, pd->src_desc(), false);
  step->AddArg(DNNL_ARG_WEIGHTS, w_slot, pd->weights_desc(), false);
  if (b_slot >= 0) step->AddArg(DNNL_ARG_BIAS, b_slot, b_md, false);
  if (x_zero != 0) {
    step->AddArg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, L.ScalarS32Slot(x_zero), Lowerer::ScalarS32Md(), false);
  }
  if (y_zero != 0) {
    step->AddArg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, L.ScalarS32Slot(y_zero), Lowerer::ScalarS32Md(), false);
  }
  step->AddArg(DNNL_ARG_DST, dst, pd->dst_desc(), true);
  step->label += " [int8]";
  if (!dst_direct) AddReorderStep(plan, dst, pd->dst_desc(), y_slot, y_plain, out->name());
  return true;
}

}  // namespace aic::cpu

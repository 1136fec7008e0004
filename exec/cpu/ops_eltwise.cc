// Lowerings of the memory-bound ops: zero-copy views, unary activations and
// scalar affine maps (eltwise), broadcasting binaries, BatchNormalization
// outside a conv, concat, softmax, reductions and the MatMul-read transpose view. Eltwise
// and binary steps keep whatever layout their input has (blocked included)
// and may run in place.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/fallback_step.h"
#include "exec/cpu/kernels/channel_affine.h"
#include "exec/cpu/kernels/half_rows.h"
#include "exec/cpu/kernels/large_unary.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/native_step.h"
#include "ops/math/reduce_axes.h"
#include "ops/tensor/resize_params.h"

namespace aic::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

bool IsCommutative(const std::string& op) { return op == "Add" || op == "Mul" || op == "Max" || op == "Min"; }

// The large unary pass computing `e` (ReLU, LeakyRelu, Abs, Neg, Clip with
// bounds that are numbers), or nothing for another eltwise.
std::optional<kernels::LargeUnary> LargeUnaryOf(const Elt& e) {
  kernels::LargeUnary op;
  op.a = e.alpha;
  op.b = e.beta;
  switch (e.alg) {
    case algorithm::eltwise_relu:
      op.kind = e.alpha == 0 ? kernels::LargeUnaryKind::kRelu : kernels::LargeUnaryKind::kLeakyRelu;
      return op;
    case algorithm::eltwise_abs:
      op.kind = kernels::LargeUnaryKind::kAbs;
      return op;
    case algorithm::eltwise_linear:
      if (e.alpha != -1.0f || e.beta != 0.0f) return std::nullopt;
      op.kind = kernels::LargeUnaryKind::kNeg;
      return op;
    case algorithm::eltwise_clip_v2:
      if (std::isnan(e.alpha) || std::isnan(e.beta)) return std::nullopt;
      op.kind = kernels::LargeUnaryKind::kClip;
      return op;
    default:
      return std::nullopt;
  }
}

// A ReLU, LeakyRelu, Abs, Neg or Clip nothing fuses after, over a plain f32
// input of 4 MiB or more: kernels::LargeUnaryF32 (streaming stores where the
// data outgrows the cache), where oneDNN's eltwise took 1.1-1.26x ONNX
// Runtime's time.
bool LowerLargeUnary(Lowerer& L, const Node& n, const Elt& e) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!kernels::HaveLargeUnary() || out == nullptr || !L.IsF32(x) || !L.IsF32(out) || L.Const(x) != nullptr ||
      L.V(x).slot < 0 || !L.plan().slots[L.V(x).slot].plain || L.V(x).dims != L.V(out).dims || !NativeReady(L, x)) {
    return false;
  }
  const int64_t count = NumElements(L.V(out).dims);
  if (count * static_cast<int64_t>(sizeof(float)) < kernels::kLargeUnaryMinBytes) return false;
  std::optional<kernels::LargeUnary> op = LargeUnaryOf(e);
  if (!op) return false;
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.V(x).slot}, slot, [op = *op, count](const void* const* in, void* y) {
    kernels::LargeUnaryF32(op, static_cast<const float*>(in[0]), static_cast<float*>(y), count);
    return absl::OkStatus();
  });
  step->kind = "large_unary";
  step->inplace_ok = true;
  return true;
}

// x -> elts[0] -> ... -> elts[n-1] (+ the successors' post-ops on the last).
// With `or_native`, a unary op nothing fuses after runs on our own kernel
// where there is one (LowerBareUnaryNative): oneDNN 2.6's JIT exp, tanh and
// logistic take 1.4-1.9x ONNX Runtime's time on large tensors, and its
// HardSigmoid is two passes (bench/OPS.md).
bool EmitEltwise(Lowerer& L, const Node& n, const Value* x, const std::vector<Elt>& elts, bool or_native = false) {
  Plan& plan = L.plan();
  int src = L.V(x).slot;
  if (src < 0 || elts.empty()) return false;
  const Value* out = n.output(0);
  if (or_native && elts.size() == 1 && TranscendentalRunsNatively(elts[0], L.V(x).dims) && LowerBareUnaryNative(L, n)) {
    return true;
  }
  // An empty chain has touched nothing (constants go in only with a post-op).
  std::vector<PostOp> chain = L.CollectPostOps(out);
  if (chain.empty() && or_native && elts.size() == 1 && LowerLargeUnary(L, n, elts[0])) return true;
  if (chain.empty() && or_native && LowerBareUnaryNative(L, n)) return true;
  memory::desc md = plan.slots[src].md;
  bool plain = plan.slots[src].plain;
  auto desc = [&](const Elt& e) {
    return dnnl::eltwise_forward::desc(prop_kind::forward_inference, e.alg, md, e.alpha, e.beta);
  };
  std::vector<dnnl::eltwise_forward::primitive_desc> pre;
  for (size_t i = 0; i + 1 < elts.size(); ++i) {
    pre.emplace_back(desc(elts[i]), plan.engine);
  }
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::eltwise_forward::primitive_desc(desc(elts.back()), attr, plan.engine);
  });
  for (auto& p : pre) {
    DnnlStep* step = L.AddDnnlStep(dnnl::eltwise_forward(p), "eltwise", n);
    step->AddArg(DNNL_ARG_SRC, src, md, false);
    src = L.NewArenaSlot(nullptr, md, plain);
    step->AddArg(DNNL_ARG_DST, src, md, true);
    step->inplace_ok = true;
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::eltwise_forward(pd), "eltwise", n);
  step->AddArg(DNNL_ARG_SRC, src, md, false);
  L.FinishPostOps(step, out, chain, k, md, plain);
  step->inplace_ok = true;
  return true;
}

}  // namespace

bool LowerView(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (x == nullptr || out == nullptr) return false;
  for (size_t i = 1; i < n.num_outputs(); ++i) {
    if (n.output(i) != nullptr) return false;  // Dropout's mask
  }
  if (n.op_type == "Dropout" && n.num_inputs() > 2 && n.input(2) != nullptr) {
    const Tensor* training = L.Const(n.input(2));
    if (training == nullptr || training->ElementAsDouble(0) != 0) return false;
  }
  ValueState& xs = L.V(x);
  ValueState& os = L.V(out);
  if (xs.slot < 0 || !os.is_static || !xs.is_static || os.dtype != xs.dtype ||
      NumElements(os.dims) != NumElements(xs.dims)) {
    return false;
  }
  Plan& plan = L.plan();
  int src = L.PlainSlot(x);
  Slot s;
  s.name = out->name();
  s.dtype = os.dtype;
  s.dims = os.dims;
  if (os.dtype == DType::kFloat) s.md = PlainMd(os.dims);
  if (plan.slots[src].storage == Slot::Storage::kArena) {
    s.storage = Slot::Storage::kArena;
    s.buffer = plan.slots[src].buffer;
    s.alias_of = src;
    plan.slots.push_back(std::move(s));
    os.slot = static_cast<int>(plan.slots.size()) - 1;
    return true;
  }
  s.storage = Slot::Storage::kDynamic;
  plan.slots.push_back(std::move(s));
  os.slot = static_cast<int>(plan.slots.size()) - 1;
  auto step = std::make_unique<ViewStep>(src, os.slot);
  step->label = n.Describe();
  plan.steps.push_back(std::move(step));
  return true;
}

bool LowerUnary(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  return EmitEltwise(L, n, x, L.UnaryAsEltwise(n, x), /*or_native=*/true);
}

// Cast(x16: f16 -> f32) -> a unary activation -> Cast(-> f16), what
// widen_half makes of a half model's standalone activation: one step over
// the half bytes (kernels::ForEachHalfRun) instead of three passes. The
// exact ones (ReLU, LeakyRelu, Abs, Neg, Clip) by the large unary pass's
// run, equal bit for bit; the transcendental ones by the kernel the f32 op
// would run natively (LowerBareUnaryNative's), rounded to half the same way.
bool LowerHalfUnary(Lowerer& L, const Node& cast_in) {
  std::optional<HalfEdges> edges = HalfEdgesAround(L, cast_in);
  if (!edges) return false;
  const Node& op = *edges->op;
  const Value* x = cast_in.output(0);
  if (!op.domain.empty()) return false;
  std::optional<kernels::LargeUnary> exact;
  kernels::UnaryRowFn fn = nullptr;
  std::vector<Elt> elts = L.UnaryAsEltwise(op, x);
  if (elts.size() == 1 && kernels::HaveLargeUnary()) exact = LargeUnaryOf(elts[0]);
  if (!exact) {
    std::string name = op.op_type;
    if (name == "Gelu") name = op.GetString("approximate", "none") == "tanh" ? "GeluTanh" : "GeluErf";
    // Ops with attributes (but Gelu's form) or more inputs than x have no
    // kernel of this form (HardSigmoid, Elu, a Swish with any alpha given...).
    if (op.num_inputs() != 1 || (!op.attributes.empty() && op.op_type != "Gelu")) return false;
    fn = kernels::FastUnaryKernel(name);
    if (fn == nullptr) return false;
  }
  int out = NativeOutSlot(L, edges->y16);
  if (out < 0) return false;
  const int64_t count = NumElements(L.V(edges->x16).dims);
  NativeStep* step =
      AddNativeStep(L, op, {L.PlainSlot(edges->x16)}, out, [exact, fn, count](const void* const* in, void* y) {
        kernels::ForEachHalfRun(static_cast<const uint16_t*>(in[0]), static_cast<uint16_t*>(y), count,
                                [&](float* run, int64_t n) {
                                  if (exact) {
                                    kernels::UnaryRunF32(*exact, run, run, n);
                                  } else {
                                    fn(run, run, n);
                                  }
                                });
        return absl::OkStatus();
      });
  step->kind = "unary";
  step->inplace_ok = true;
  L.MarkFused(&op);
  L.MarkFused(edges->back);
  return true;
}

bool LowerBinary(Lowerer& L, const Node& n) {
  if (n.num_inputs() != 2 || n.output(0) == nullptr) return false;
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* out = n.output(0);
  // By a scalar constant: an affine eltwise.
  for (const Value* x : {a, b}) {
    if (L.Const(x) == nullptr && L.V(x).slot >= 0) {
      std::vector<Elt> elts = L.UnaryAsEltwise(n, x);
      if (!elts.empty()) return EmitEltwise(L, n, x, elts);
    }
  }
  std::optional<algorithm> alg = BinaryAlg(n.op_type);
  if (!alg || !L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out)) return false;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (L.V(a).dims != od || L.Const(a) != nullptr) {
    if (!IsCommutative(n.op_type) || L.V(b).dims != od || L.Const(b) != nullptr) return false;
    std::swap(a, b);
  }
  auto bdims = BroadcastDims(L.V(b).dims, od);
  if (!bdims) return false;
  Plan& plan = L.plan();
  int s0 = L.V(a).slot;
  memory::desc md0 = plan.slots[s0].md;
  bool plain0 = plan.slots[s0].plain;
  const Tensor* bc = L.Const(b);
  // Same dims, not only the same after padding with 1s: a [4, 3] operand of a
  // [1, 4, 3] output is a broadcast (its slot has the lower rank; found by
  // tests/graph_fuzz).
  bool same = L.V(b).dims == od && bc == nullptr;
  // src1: same dims -> src0's layout; broadcast activation -> its own layout
  // when blocked (per-channel scales from an SE block), else plain.
  memory::desc md1 = same ? md0 : PlainMd(*bdims);
  bool b_blocked = !same && bc == nullptr && L.V(b).slot >= 0 && !plan.slots[L.V(b).slot].plain &&
                   L.V(b).dims.size() == od.size();
  std::vector<PostOp> chain = L.CollectPostOps(out);
  auto make = [&](const memory::desc& m1) {
    return L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
      return dnnl::binary::primitive_desc(dnnl::binary::desc(*alg, md0, m1, md0), attr, plan.engine);
    });
  };
  std::pair<dnnl::binary::primitive_desc, size_t> built;
  bool used_blocked = false;
  if (b_blocked) {
    try {
      built = make(plan.slots[L.V(b).slot].md);
      md1 = plan.slots[L.V(b).slot].md;
      used_blocked = true;
    } catch (const dnnl::error&) {
    }
  }
  if (!used_blocked) built = make(md1);
  // A broadcast oneDNN 2.6 covers only with its reference loop (a blocked
  // first operand against a plain [1, 1, H, W] mask, say): the native
  // broadcast kernel over plain operands is far faster.
  if (IsSlowImplementation("binary", built.first.impl_info_str())) return false;
  int s1 = bc != nullptr ? L.ConstSlot(*bc, md1)
           : same        ? L.SlotIn(b, md0)
           : used_blocked ? L.V(b).slot
                          : L.PlainSlot(b);
  DnnlStep* step = L.AddDnnlStep(dnnl::binary(built.first), "binary", n);
  step->AddArg(DNNL_ARG_SRC_0, s0, md0, false);
  step->AddArg(DNNL_ARG_SRC_1, s1, md1, false);
  L.FinishPostOps(step, out, chain, built.second, md0, plain0);
  step->inplace_ok = true;
  return true;
}

namespace {

// x's layout as the channel-affine kernel sees it: plain, channels-last or
// channel-blocked by 16 or 8 (the last block padded when C is not a
// multiple); false for anything else and for values outside the arena.
bool ChannelLayoutOf(Lowerer& L, const Value* x, kernels::ChannelLayout* l) {
  int s = L.V(x).slot;
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (s < 0 || dims.size() < 2 || L.plan().slots[s].storage != Slot::Storage::kArena) return false;
  int64_t spatial = 1;
  for (size_t a = 2; a < dims.size(); ++a) spatial *= dims[a];
  if (L.plan().slots[s].plain) {
    *l = {dims[0], dims[1], spatial, 1};
    return true;
  }
  const int64_t block = ChannelBlockOf(L.plan().slots[s].md, dims);
  if (block == 0) return false;
  *l = {dims[0], (dims[1] + block - 1) / block, spatial, block};  // channels-last: one block of all C
  return true;
}

// The per-channel constant of a post-op that multiplies or adds one (a
// [C, 1, ...] or [1, C, 1, ...] tensor against an output of `dims`), padded
// with zeros to `padded` channels; false for any other post-op.
bool PerChannelConstant(Lowerer& L, const PostOp& p, const std::vector<int64_t>& dims, int64_t padded,
                        std::vector<float>* values) {
  if (!p.binary || (p.alg != algorithm::binary_mul && p.alg != algorithm::binary_add) || p.nodes.size() != 1 ||
      p.out == nullptr) {
    return false;
  }
  const Node& node = *p.nodes[0];
  for (size_t k = 0; k < 2 && k < node.num_inputs(); ++k) {
    const Tensor* c = L.Const(node.input(k));
    if (c == nullptr || c->dtype() != DType::kFloat || c->num_elements() != dims[1]) continue;
    // Right-aligned against dims: C lands on axis 1, every other axis is 1.
    const int64_t rank = c->rank(), offset = static_cast<int64_t>(dims.size()) - rank;
    bool per_channel = offset >= 0 && rank >= static_cast<int64_t>(dims.size()) - 1;
    for (int64_t a = 0; per_channel && a < rank; ++a) per_channel = c->dim(a) == (a + offset == 1 ? dims[1] : 1);
    if (!per_channel) continue;
    values->assign(static_cast<size_t>(padded), 0.0f);
    std::copy_n(c->data<float>(), dims[1], values->begin());
    return true;
  }
  return false;
}

}  // namespace

// x · s with s [N or 1, C, 1, ...] (a squeeze-and-excitation block's channel
// weights computed at run time, or a constant) and x an arena value in a
// layout ChannelLayoutOf reads: one pass in x's layout. A per-channel
// constant multiply, then add, right after it joins the pass as
// x · (s · g) + b, and what follows them runs as steps of their own
// (ConvNeXt-V2's GRN, gamma · (x · Nx) + beta: with the constants as post-ops
// of oneDNN's binary, x went to plain and back).
// oneDNN 2.6's binary with a per-channel operand is no faster on two
// threads than on one (EfficientNet's 16 SE multiplies: 0.6 ms of 7.4 at 2
// threads, ORT 0.3), and on AVX2 CPUs it has only its reference kernel for a
// channel-blocked input (nChw8c), which sent the Mul to a plain copy.
bool LowerChannelScale(Lowerer& L, const Node& n) {
  if (n.op_type != "Mul" || n.num_inputs() != 2 || n.output(0) == nullptr) return false;
  const Value* out = n.output(0);
  for (int side = 0; side < 2; ++side) {
    const Value* x = n.input(side);
    const Value* s = n.input(1 - side);
    if (x == nullptr || s == nullptr || !L.IsF32(x) || !L.IsF32(s) || !L.IsF32(out)) continue;
    const std::vector<int64_t>& xd = L.V(x).dims;
    const std::vector<int64_t>& sd = L.V(s).dims;
    if (L.V(out).dims != xd || sd.size() != xd.size() || xd.size() < 3 || xd == sd) continue;
    bool per_channel = (sd[0] == 1 || sd[0] == xd[0]) && sd[1] == xd[1];
    for (size_t a = 2; a < sd.size(); ++a) per_channel = per_channel && sd[a] == 1;
    kernels::ChannelLayout layout;
    if (!per_channel || (L.Const(s) == nullptr && !NativeReady(L, s)) || !ChannelLayoutOf(L, x, &layout)) continue;
    const int64_t images = xd[0], channels = xd[1], padded = layout.blocks * layout.block;
    // What follows: nothing, or a per-channel constant multiply and/or add.
    std::vector<PostOp> after = L.CollectPostOps(out);
    std::vector<float> gain, shift;
    size_t taken = 0;
    if (taken < after.size() && after[taken].alg == algorithm::binary_mul &&
        PerChannelConstant(L, after[taken], xd, padded, &gain)) {
      ++taken;
    }
    if (taken < after.size() && after[taken].alg == algorithm::binary_add &&
        PerChannelConstant(L, after[taken], xd, padded, &shift)) {
      ++taken;
    }
    // A chain it cannot start (oneDNN's binary takes it with its post-ops);
    // the ops after the constants it takes run as steps of their own.
    if (taken == 0 && !after.empty()) return false;
    const Value* y_value = taken > 0 ? after[taken - 1].out : out;
    const int in = L.V(x).slot;
    Slot copy = L.plan().slots[in];  // the desc and plainness, before the slot vector grows
    const int scale_in = L.PlainSlot(s);
    const int slot = L.NewArenaSlot(y_value, copy.md, copy.plain);
    const bool per_image = sd[0] != 1;
    Plan& plan = L.plan();
    const float* gain_data = nullptr;
    const float* shift_data = nullptr;
    if (!gain.empty()) {
      plan.constants.push_back(Tensor::FromVector<float>(gain, {padded}));
      gain_data = plan.constants.back().data<float>();
    }
    if (!shift.empty()) {
      plan.constants.push_back(Tensor::FromVector<float>(shift, {padded}));
      shift_data = plan.constants.back().data<float>();
    }
    NativeStep* step = AddNativeStep(L, n, {in, scale_in}, slot, [=](const void* const* i, void* y) {
      // The scales laid out per image with zeros in a padded block's lanes.
      thread_local std::vector<float> scales;
      scales.assign(static_cast<size_t>(images * padded), 0.0f);
      const auto* sv = static_cast<const float*>(i[1]);
      for (int64_t o = 0; o < images; ++o) {
        float* row = scales.data() + o * padded;
        std::copy_n(sv + (per_image ? o * channels : 0), channels, row);
        if (gain_data != nullptr) {
          for (int64_t c = 0; c < channels; ++c) row[c] *= gain_data[c];
        }
      }
      kernels::ChannelAffineF32(static_cast<const float*>(i[0]), static_cast<float*>(y), layout, scales.data(),
                                shift_data, false, /*scale_per_image=*/true);
      return absl::OkStatus();
    });
    step->kind = "channel_scale";
    step->inplace_ok = true;
    std::vector<std::string> names;
    for (size_t k = 0; k < taken; ++k) {
      L.MarkFused(after[k].nodes[0]);
      names.push_back(after[k].name);
    }
    if (!names.empty()) absl::StrAppend(&step->label, " + [", absl::StrJoin(names, ","), "]");
    return true;
  }
  return false;
}

bool LowerBatchNorm(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0 || L.V(x).dims.size() < 2) return false;
  Tensor scale, shift;
  if (!L.FoldBatchNorm(n, &scale, &shift)) return false;
  Plan& plan = L.plan();
  plan.constants.push_back(scale);
  const Tensor& sc = plan.constants.back();
  plan.constants.push_back(shift);
  const Tensor& sh = plan.constants.back();
  // Alone or followed by a ReLU (DenseNet's BN-ReLU after a Concat), on the
  // native kernel in x's layout: oneDNN 2.6's binary with a per-channel
  // operand took 1.3-2.3x ONNX Runtime's time.
  std::vector<PostOp> after = L.CollectPostOps(out);
  const bool relu_follows = after.size() == 1 && !after[0].binary && after[0].alg == algorithm::eltwise_relu &&
                            after[0].alpha == 0.0f && after[0].nodes.size() == 1;
  // The native kernel; with relu_after, the ReLU after it too.
  auto lower_native = [&](bool relu_after) {
    const Value* y = relu_after ? after[0].out : out;
    const std::vector<int64_t>& dims = L.V(x).dims;
    kernels::ChannelLayout layout;
    int in = -1, slot = -1;
    if (ChannelLayoutOf(L, x, &layout)) {  // an arena value: kept in its layout
      in = L.V(x).slot;
      Slot copy = plan.slots[in];  // the desc and plainness, before the slot vector grows
      slot = L.NewArenaSlot(y, copy.md, copy.plain);
    } else if (plan.slots[L.V(x).slot].storage != Slot::Storage::kArena && NativeReady(L, x)) {
      // a graph input or constant: read plain
      int64_t spatial = 1;
      for (size_t a = 2; a < dims.size(); ++a) spatial *= dims[a];
      layout = {dims[0], dims[1], spatial, 1};
      in = L.PlainSlot(x);
      slot = NativeOutSlot(L, y);
    }
    if (in >= 0 && slot >= 0) {
      // Zero scale and shift for a padded last block keep its padding zero.
      const int64_t channels = layout.blocks * layout.block;
      Tensor padded_scale(DType::kFloat, {channels}), padded_shift(DType::kFloat, {channels});
      auto ps = padded_scale.mutable_span<float>(), pt = padded_shift.mutable_span<float>();
      std::fill(ps.begin(), ps.end(), 0.0f);
      std::fill(pt.begin(), pt.end(), 0.0f);
      std::copy_n(sc.data<float>(), dims[1], ps.begin());
      std::copy_n(sh.data<float>(), dims[1], pt.begin());
      plan.constants.push_back(padded_scale);
      const auto* scale_data = plan.constants.back().data<float>();
      plan.constants.push_back(padded_shift);
      const auto* shift_data = plan.constants.back().data<float>();
      NativeStep* step = AddNativeStep(L, n, {in}, slot,
                                       [layout, scale_data, shift_data, relu_after](const void* const* i, void* o) {
                                         kernels::ChannelAffineF32(static_cast<const float*>(i[0]),
                                                                   static_cast<float*>(o), layout, scale_data,
                                                                   shift_data, relu_after);
                                         return absl::OkStatus();
                                       });
      step->kind = relu_after ? "batchnorm+relu" : "batchnorm";
      step->inplace_ok = true;
      if (relu_after) L.MarkFused(after[0].nodes[0]);
      return true;
    }
    return false;
  };
  if ((after.empty() || relu_follows) && lower_native(relu_follows)) return true;
  std::vector<int64_t> cd(L.V(x).dims.size(), 1);
  cd[1] = L.V(x).dims[1];
  memory::desc cmd = PlainMd(cd);
  int s0 = L.V(x).slot;
  memory::desc md0 = plan.slots[s0].md;
  PostOp add;
  add.binary = true;
  add.alg = algorithm::binary_add;
  add.src1_md = cmd;
  add.nodes = {&n};
  add.out = out;
  add.name = "bn_shift";
  std::vector<PostOp> chain = {add};
  for (PostOp& p : after) chain.push_back(p);
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_mul, md0, cmd, md0), attr,
                                        plan.engine);
  });
  // A post-op operand oneDNN 2.6's binary kernels do not read in this
  // layout (MixNet's residual add after a blocked Concat) puts it on its
  // reference path, 3.8 ms for a [1, 80, 14, 14] step: the native kernel
  // then, the nodes after it steps of their own.
  if (IsSlowImplementation("", pd.impl_info_str()) && lower_native(false)) return true;
  if (k == 0) return false;
  chain[0].src1_slot = L.ConstSlot(sh, cmd);  // the shift, once the step is this one
  DnnlStep* step = L.AddDnnlStep(dnnl::binary(pd), "batchnorm", n);
  step->AddArg(DNNL_ARG_SRC_0, s0, md0, false);
  step->AddArg(DNNL_ARG_SRC_1, L.ConstSlot(sc, cmd), cmd, false);
  L.FinishPostOps(step, out, chain, k, md0, plan.slots[s0].plain);
  --plan.stats.fused_nodes;  // the BatchNormalization itself is this step, not a fused node
  step->inplace_ok = true;
  return true;
}

bool LowerConcat(Lowerer& L, const Node& n) {
  const Value* out = n.output(0);
  if (!L.IsF32(out) || n.num_inputs() == 0) return false;
  int rank = static_cast<int>(L.V(out).dims.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || rank == 0) return false;
  Plan& plan = L.plan();
  std::vector<memory::desc> mds;
  for (const Value* v : n.inputs()) {
    if (!L.IsF32(v) || NumElements(L.V(v).dims) == 0) return false;
    int s = L.V(v).slot;
    mds.push_back(L.Const(v) != nullptr || s < 0 ? PlainMd(L.V(v).dims) : plan.slots[s].md);
  }
  dnnl::concat::primitive_desc pd(static_cast<int>(axis), mds, plan.engine);
  if (IsSlowImplementation("concat", pd.impl_info_str())) return false;  // the native copy takes it
  std::vector<int> slots;
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const Value* v = n.input(i);
    slots.push_back(L.Const(v) != nullptr ? L.ConstSlot(*L.Const(v), mds[i]) : L.V(v).slot);
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::concat(pd), "concat", n);
  for (size_t i = 0; i < slots.size(); ++i) {
    step->AddArg(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), slots[i], mds[i], false);
  }
  memory::desc dst = pd.dst_desc();
  L.FinishPostOps(step, out, {}, 0, dst, dst == PlainMd(L.V(out).dims));
  return true;
}

bool LowerSoftmax(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  int rank = static_cast<int>(dims.size());
  if (rank == 0) return false;
  bool legacy = L.OpsetOf(n) < 13;
  int64_t axis = n.GetInt("axis", legacy ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  memory::desc md = PlainMd(dims);
  if (legacy) {  // softmax over the flattened trailing dims
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; ++i) (i < axis ? outer : inner) *= dims[i];
    md = PlainMd({outer, inner});
    axis = 1;
  }
  // Over one element the answer is exactly 1 (Softmax) or 0 (LogSoftmax);
  // oneDNN's jit logsoftmax gives about 1.4e-6 there (its exp and log are
  // approximations), which a following Mul by 1000 makes visible (graph
  // fuzzer, seed 13): decline, and the native kernel, exact there, takes it.
  if (md.dims()[static_cast<size_t>(axis)] == 1) return false;
  Plan& plan = L.plan();
  dnnl::primitive prim;
  // A non-last axis of a plain tensor gets oneDNN's reference implementation:
  // decline, and the native kernel (LowerSoftmaxOrNative) takes it.
  if (n.op_type == "LogSoftmax") {
    dnnl::logsoftmax_forward::primitive_desc pd(
        dnnl::logsoftmax_forward::desc(prop_kind::forward_inference, md, static_cast<int>(axis)), plan.engine);
    if (IsSlowImplementation("softmax", pd.impl_info_str())) return false;
    prim = dnnl::logsoftmax_forward(pd);
  } else {
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(prop_kind::forward_inference, md, static_cast<int>(axis)), plan.engine);
    if (IsSlowImplementation("softmax", pd.impl_info_str())) return false;
    prim = dnnl::softmax_forward(pd);
  }
  int src = L.PlainSlot(x);
  DnnlStep* step = L.AddDnnlStep(prim, "softmax", n);
  step->AddArg(DNNL_ARG_SRC, src, md, false);
  L.FinishPostOps(step, out, {}, 0, PlainMd(L.V(out).dims), true, &md);
  return true;
}

bool LowerReduce(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  int rank = static_cast<int>(dims.size());
  auto axes = ResolveReduceAxes(n, L.OpsetOf(n), n.has_input(1), n.has_input(1) ? L.Const(n.input(1)) : nullptr, rank);
  if (!axes.ok() || !axes->has_value() || (*axes)->noop) return false;
  std::vector<int64_t> kept = dims;
  for (int a = 0; a < rank; ++a) {
    if ((*axes)->reduced[a]) kept[a] = 1;
  }
  algorithm alg = n.op_type == "ReduceMean"  ? algorithm::reduction_mean
                  : n.op_type == "ReduceSum" ? algorithm::reduction_sum
                  : n.op_type == "ReduceMax" ? algorithm::reduction_max
                                             : algorithm::reduction_min;
  Plan& plan = L.plan();
  memory::desc src_md = PlainMd(dims), dst_md = PlainMd(kept);
  bool keepdims = L.V(out).dims == kept;
  std::vector<PostOp> chain = keepdims ? L.CollectPostOps(out) : std::vector<PostOp>{};
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, src_md, dst_md, 0.f, 0.f), attr,
                                           plan.engine);
  });
  // oneDNN 2.6 reduces only trailing blocks with its JIT kernel (a channel
  // mean over NCHW gets the reference one): the native kernel takes those.
  if (IsSlowImplementation("reduce", pd.impl_info_str())) return false;
  int src = L.PlainSlot(x);
  DnnlStep* step = L.AddDnnlStep(dnnl::reduction(pd), "reduce", n);
  step->AddArg(DNNL_ARG_SRC, src, src_md, false);
  L.FinishPostOps(step, out, chain, k, PlainMd(L.V(out).dims), true, &dst_md);
  return true;
}

bool LowerTransposeAsView(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0) return false;
  // Read only by MatMuls (attention heads), from a plain arena slot: a
  // strided view of x's bytes, no copy; oneDNN's matmul takes any strides
  // (LowerMatMul reorders it to plain if its primitive declines). Anything
  // else is a copy: the native strided copy (LowerTransposeOrNative)
  // transposes in register tiles, 1.3-2x faster than oneDNN 2.6's reorder on
  // NCHW <-> NHWC and on swapping the last two axes.
  Plan& plan = L.plan();
  const ValueState& xs = L.V(x);
  const ValueState& os = L.V(out);
  bool matmuls_only = !os.consumers.empty() && !os.graph_output;
  for (const Node* c : os.consumers) matmuls_only = matmuls_only && c->op_type == "MatMul" && c->domain.empty();
  if (!matmuls_only || !plan.slots[xs.slot].plain || plan.slots[xs.slot].storage != Slot::Storage::kArena) {
    return false;
  }
  const std::vector<int64_t>& dims = xs.dims;
  int rank = static_cast<int>(dims.size());
  if (rank == 0) return false;
  std::vector<int64_t> perm = n.GetInts("perm");
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != rank) return false;
  std::vector<int64_t> strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  memory::dims vd(rank), vs(rank);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) return false;
    vd[i] = dims[perm[i]];
    vs[i] = strides[perm[i]];
  }
  memory::desc view(vd, memory::data_type::f32, vs);
  Slot s;
  s.name = out->name();
  s.dtype = DType::kFloat;
  s.dims = os.dims;
  s.md = view;
  // An identity permutation (any 1-D Transpose) is a plain view: what falls
  // back to a reference kernel reads it as a tensor (found by tests/graph_fuzz).
  s.plain = view == PlainMd(os.dims);
  s.storage = Slot::Storage::kArena;
  s.buffer = plan.slots[xs.slot].buffer;
  s.alias_of = xs.slot;
  plan.slots.push_back(std::move(s));
  L.V(out).slot = static_cast<int>(plan.slots.size()) - 1;
  return true;
}

}  // namespace aic::cpu

namespace aic::cpu {

// Nearest-neighbour upsampling by integer factors (FPN-style x2): every
// ONNX coordinate mode maps output i to input floor(i / f) then, which is
// oneDNN's nearest resampling. Other modes fall back.
bool LowerResize(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || L.V(x).slot < 0) return false;
  ResizeAttrs a = ResizeAttrsOf(n, L.OpsetOf(n));
  if (a.mode != "nearest" || !a.axes.empty() || a.aspect_policy != "stretch") return false;
  const std::string& ctm = a.coord;
  const std::string& nm = a.nearest_mode;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() < 3 || xd.size() > 5 || od.size() != xd.size() || xd[0] != od[0] || xd[1] != od[1]) return false;
  // Output i of factor f reads input q = floor(i / f) exactly when:
  // half_pixel + round_*: (i + 0.5)/f - 0.5 = q + (r + 0.5)/f - 0.5 never ties;
  // asymmetric + floor: i/f floors to q; asymmetric + round_prefer_floor: only f = 2.
  bool half = ctm == "half_pixel" || ctm == "pytorch_half_pixel";
  bool rounds = nm == "round_prefer_floor" || nm == "round_prefer_ceil";
  for (size_t i = 2; i < xd.size(); ++i) {
    if (xd[i] == 0 || od[i] % xd[i] != 0) return false;
    int64_t f = od[i] / xd[i];
    if (f == 1) continue;
    bool exact = (half && rounds) || (ctm == "asymmetric" && nm == "floor") ||
                 (ctm == "asymmetric" && nm == "round_prefer_floor" && f == 2);
    if (!exact) return false;
  }
  Plan& plan = L.plan();
  int s = L.V(x).slot;
  memory::desc src_md = plan.slots[s].md;
  memory::desc dst_md = L.options().blocked_layouts ? AnyMd(od) : PlainMd(od);
  // No post-ops: oneDNN 2.6's generic resampling gets a residual-add post-op wrong.
  std::vector<PostOp> chain;
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::resampling_forward::primitive_desc(
        dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::resampling_nearest, src_md,
                                       dst_md),
        attr, plan.engine);
  });
  DnnlStep* step = L.AddDnnlStep(dnnl::resampling_forward(pd), "resize", n);
  step->AddArg(DNNL_ARG_SRC, s, src_md, false);
  L.FinishPostOps(step, out, chain, k, pd.dst_desc(), pd.dst_desc() == PlainMd(od));
  return true;
}

}  // namespace aic::cpu

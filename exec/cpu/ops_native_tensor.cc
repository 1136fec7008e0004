// Lowerings of data-movement ops onto our own kernels: Gather (any dtype),
// Pad (f32: constant, reflect, edge), Resize/Upsample in linear mode on NCHW
// (after oneDNN's nearest lowering declines), cubic and antialiased by taps, Cast, Expand (a one-operand
// broadcast), Concat/Split of plain tensors as block copies (any dtype;
// oneDNN's concat keeps the inputs that arrive blocked), and as strided
// copies Slice (any steps), Transpose and Tile of any dtype. Attributes and
// constant inputs are read here once; anything not covered returns false and
// the reference kernel runs.
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/axis_copy.h"
#include "exec/cpu/kernels/broadcast.h"
#include "exec/cpu/kernels/cast.h"
#include "ops/tensor/pad_params.h"
#include "ops/tensor/resize_params.h"
#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/grid_sample.h"
#include "exec/cpu/kernels/pad.h"
#include "exec/cpu/kernels/resize_linear.h"
#include "exec/cpu/kernels/resize_taps.h"
#include "exec/cpu/kernels/strided_copy.h"
#include "ops/tensor/slice_params.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

// The values of a constant input as int64 / double; false when not constant.
bool ConstInts(Lowerer& L, const Value* v, std::vector<int64_t>* out) {
  const Tensor* t = L.Const(v);
  if (t == nullptr) return false;
  for (int64_t i = 0; i < t->num_elements(); ++i) out->push_back(static_cast<int64_t>(t->ElementAsDouble(i)));
  return true;
}

bool ConstDoubles(Lowerer& L, const Value* v, std::vector<double>* out) {
  const Tensor* t = L.Const(v);
  if (t == nullptr) return false;
  for (int64_t i = 0; i < t->num_elements(); ++i) out->push_back(t->ElementAsDouble(i));
  return true;
}

const Value* OptionalInput(const Node& n, size_t i) { return n.num_inputs() > i ? n.input(i) : nullptr; }

// The scales Resize of a 4-D x applies per axis, as the reference reads them
// (sizes / in when sizes are given, else the scales as f32); false when not
// constant or not 1 over batch and channels.
bool ResizeScales(Lowerer& L, const Node& n, const std::vector<int64_t>& xd, const std::vector<int64_t>& od,
                  std::vector<double>* scales) {
  std::vector<int64_t> sizes;
  ResizeInputs io = ResizeInputsOf(n, L.OpsetOf(n));
  int scales_at = io.scales;
  const Value* sizes_v = io.sizes >= 0 ? OptionalInput(n, static_cast<size_t>(io.sizes)) : nullptr;
  if (sizes_v != nullptr) {
    if (!ConstInts(L, sizes_v, &sizes)) return false;
  }
  if (!sizes.empty()) {
    if (sizes != od) return false;
    for (size_t i = 0; i < 4; ++i) scales->push_back(static_cast<double>(od[i]) / static_cast<double>(xd[i]));
  } else if (scales_at < 0) {
    for (float f : n.GetFloats("scales")) scales->push_back(f);
  } else {
    const Value* s = OptionalInput(n, static_cast<size_t>(scales_at));
    if (s == nullptr || !ConstDoubles(L, s, scales)) return false;
    for (double& d : *scales) d = static_cast<float>(d);  // the reference reads scales as f32
  }
  return scales->size() == 4 && (*scales)[0] == 1 && (*scales)[1] == 1;
}

// 4-D x with only H and W resized, stretch policy, no antialias or axes.
bool PlainResize4D(Lowerer& L, const Node& n, const ResizeAttrs& a) {
  const std::vector<int64_t>& xd = L.V(n.input(0)).dims;
  const std::vector<int64_t>& od = L.V(n.output(0)).dims;
  return !a.antialias && a.axes.empty() && a.aspect_policy == "stretch" && xd.size() == 4 && od.size() == 4 &&
         xd[0] == od[0] && xd[1] == od[1];
}

bool LowerResizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return false;
  ResizeAttrs a = ResizeAttrsOf(n, L.OpsetOf(n));
  if (a.mode != "linear" || !PlainResize4D(L, n, a)) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  std::vector<double> scales;
  if (!ResizeScales(L, n, xd, od, &scales)) return false;
  auto ys = kernels::MakeLinearAxis(xd[2], od[2], scales[2], a.coord);
  auto xs = kernels::MakeLinearAxis(xd[3], od[3], scales[3], a.coord);
  if (!ys || !xs) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  int64_t planes = xd[0] * xd[1], h = xd[2], w = xd[3];
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [planes, h, w, ys = *ys, xs = *xs](const void* const* i, void* y) {
    kernels::ResizeBilinearF32(static_cast<const float*>(i[0]), static_cast<float*>(y), planes, h, w, ys, xs);
    return absl::OkStatus();
  });
  step->kind = "resize";
  return true;
}

// The taps of every output index of an axis as the kernel's table (weights
// as f32); nullopt where tf_crop_and_resize would extrapolate.
std::optional<kernels::AxisTapTable> TapTable(const ResizeAttrs& a, int64_t in, int64_t out, double scale) {
  kernels::AxisTapTable t;
  t.offset.push_back(0);
  for (int64_t o = 0; o < out; ++o) {
    ResizeAxisTaps taps = ResizeTapsFor(o, in, out, scale, a);
    if (taps.outside) return std::nullopt;
    for (const ResizeTap& tap : taps.taps) {
      t.index.push_back(tap.index);
      t.weight.push_back(static_cast<float>(tap.weight));
    }
    t.offset.push_back(static_cast<int64_t>(t.index.size()));
  }
  return t;
}

// Cubic, and antialiased linear or cubic, over H and W of a plain 4-D f32
// input: separable by the reference's own taps (kernels/resize_taps.h).
bool LowerResizeByTaps(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return false;
  ResizeAttrs a = ResizeAttrsOf(n, L.OpsetOf(n));
  if ((a.mode != "cubic" && !(a.antialias && a.mode == "linear")) || a.coord == "tf_crop_and_resize" ||
      !a.axes.empty() || a.aspect_policy != "stretch") {
    return false;
  }
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() != 4 || od.size() != 4 || xd[0] != od[0] || xd[1] != od[1] || NumElements(xd) == 0 ||
      NumElements(od) == 0) {
    return false;
  }
  std::vector<double> scales;
  if (!ResizeScales(L, n, xd, od, &scales)) return false;
  // Batch and channels at scale 1 must map to themselves: every tap on the
  // same index, weights summing to 1 (pytorch_half_pixel puts an extent of
  // 1 at -0.5: four taps, all clamped to index 0).
  for (int k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < xd[k]; ++i) {
      ResizeAxisTaps t = ResizeTapsFor(i, xd[k], xd[k], 1.0, a);
      double sum = 0;
      for (const ResizeTap& tap : t.taps) {
        if (tap.index != i) return false;
        sum += tap.weight;
      }
      if (t.outside || std::fabs(sum - 1.0) > 1e-12) return false;
    }
  }
  auto ys = TapTable(a, xd[2], od[2], scales[2]);
  auto xs = TapTable(a, xd[3], od[3], scales[3]);
  if (!ys || !xs) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  const int64_t planes = xd[0] * xd[1], h = xd[2], w = xd[3];
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [planes, h, w, ys = *ys, xs = *xs](const void* const* i, void* y) {
    kernels::ResizeByTapsF32(static_cast<const float*>(i[0]), static_cast<float*>(y), planes, h, w, ys, xs);
    return absl::OkStatus();
  });
  step->kind = "resize";
  return true;
}

// Nearest mode on a plain input (oneDNN's resampling runs 3-5x slower than a
// copy there; a blocked input stays with oneDNN where it can, i.e. at integer
// factors, and is reordered to plain here where it cannot: GhostNetV2's
// gates resize 4x4 to 7x7): source rows and columns tabulated once by the
// reference's own rule (ResizeNearestIndex), any element size.
bool LowerResizeNearest(Lowerer& L, const Node& n, bool plain_input_only) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || !L.V(out).is_static || L.V(out).dtype != L.V(x).dtype) return false;
  int xs_slot = L.V(x).slot;
  if (plain_input_only && xs_slot >= 0 && !L.plan().slots[xs_slot].plain) return false;
  ResizeAttrs a = ResizeAttrsOf(n, L.OpsetOf(n));
  size_t elem = ElementSize(L.V(x).dtype);
  if (a.mode != "nearest" || a.coord == "tf_crop_and_resize" || !PlainResize4D(L, n, a) ||
      (elem != 1 && elem != 2 && elem != 4 && elem != 8)) {
    return false;
  }
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  std::vector<double> scales;
  if (!ResizeScales(L, n, xd, od, &scales) || NumElements(od) == 0 || NumElements(xd) == 0) return false;
  // The transformation applies to every axis: at scale 1 some (tf_half_pixel_for_nn
  // rounding up) do not map batch and channel to themselves.
  for (int k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < xd[k]; ++i) {
      if (ResizeNearestIndex(a, i, xd[k], xd[k], 1.0) != i) return false;
    }
  }
  std::vector<int64_t> ys(static_cast<size_t>(od[2])), xs(static_cast<size_t>(od[3]));
  for (int64_t r = 0; r < od[2]; ++r) ys[r] = ResizeNearestIndex(a, r, od[2], xd[2], scales[2]);
  for (int64_t c = 0; c < od[3]; ++c) xs[c] = ResizeNearestIndex(a, c, od[3], xd[3], scales[3]);
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  int64_t planes = xd[0] * xd[1], h = xd[2], w = xd[3];
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* i, void* y) {
    kernels::ResizeNearest(i[0], y, planes, h, w, ys, xs, elem);
    return absl::OkStatus();
  });
  step->kind = "resize";
  return true;
}

}  // namespace

bool LowerResizeOrNative(Lowerer& L, const Node& n) {
  if (LowerResizeNearest(L, n, /*plain_input_only=*/true)) return true;
  try {
    if (LowerResize(L, n)) return true;
  } catch (const dnnl::error&) {
  }
  return LowerResizeNearest(L, n, /*plain_input_only=*/false) || LowerResizeLinear(L, n) || LowerResizeByTaps(L, n);
}

// GridSample of a 4-D float32 X, bilinear or nearest, any padding and
// align_corners (kernels/grid_sample.h); bicubic stays with the reference.
bool LowerGridSample(Lowerer& L, const Node& n) {
  if (n.num_inputs() != 2 || n.num_outputs() != 1) return false;
  const Value* x = n.input(0);
  const Value* grid = n.input(1);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(grid) || !L.IsF32(out) || !NativeReady(L, x) || !NativeReady(L, grid)) return false;
  absl::StatusOr<GridSampler> sampler = ParseGridSampler(n, L.OpsetOf(n));
  if (!sampler.ok() || sampler->mode == GridMode::kBicubic) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& gd = L.V(grid).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() != 4 || gd.size() != 4 || gd[0] != xd[0] || gd[3] != 2 ||
      od != std::vector<int64_t>{xd[0], xd[1], gd[1], gd[2]} || NumElements(od) == 0 || xd[2] == 0 || xd[3] == 0 ||
      xd[2] * xd[3] > INT32_MAX) {  // plane offsets are int32
    return false;
  }
  kernels::GridSampleShape shape{xd[0], xd[1], xd[2], xd[3], gd[1], gd[2]};
  int in = L.PlainSlot(x);
  int g = L.PlainSlot(grid);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  const GridSampler s = *sampler;
  AddNativeStep(L, n, {in, g}, slot, [shape, s](const void* const* i, void* y) {
    kernels::GridSample2dF32(static_cast<const float*>(i[0]), static_cast<const float*>(i[1]), static_cast<float*>(y),
                             shape, s);
    return absl::OkStatus();
  })->kind = "grid_sample";
  return true;
}

bool LowerGather(Lowerer& L, const Node& n) {
  const Value* data = n.input(0);
  const Value* idx = n.num_inputs() > 1 ? n.input(1) : nullptr;
  const Value* out = n.output(0);
  if (!NativeReady(L, data) || !NativeReady(L, idx) || out == nullptr) return false;
  DType it = L.V(idx).dtype;
  if (it != DType::kInt32 && it != DType::kInt64) return false;
  const std::vector<int64_t>& dd = L.V(data).dims;
  const std::vector<int64_t>& id = L.V(idx).dims;
  auto rank = static_cast<int64_t>(dd.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  std::vector<int64_t> want(dd.begin(), dd.begin() + axis);
  want.insert(want.end(), id.begin(), id.end());
  want.insert(want.end(), dd.begin() + axis + 1, dd.end());
  if (L.V(out).dims != want || L.V(out).dtype != L.V(data).dtype) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= dd[i];
    if (i > axis) inner *= dd[i];
  }
  int64_t axis_dim = dd[axis], count = NumElements(id);
  size_t slice = static_cast<size_t>(inner) * ElementSize(L.V(data).dtype);
  size_t index_bytes = ElementSize(it);
  std::vector<int> ins = {L.PlainSlot(data), L.PlainSlot(idx)};
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  std::string where = n.Describe();
  AddNativeStep(L, n, ins, slot, [=](const void* const* in, void* y) {
    int64_t bad = kernels::Gather(in[0], in[1], index_bytes, count, y, outer, axis_dim, slice);
    if (bad >= 0) {
      // The kernel says where the bad index is; the message says what it is.
      int64_t value = index_bytes == 4 ? static_cast<int64_t>(static_cast<const int32_t*>(in[1])[bad])
                                       : static_cast<const int64_t*>(in[1])[bad];
      return absl::InvalidArgumentError(absl::StrCat(where, ": index ", value, " (element ", bad,
                                                     " of the indices) is out of range for axis of ", axis_dim));
    }
    return absl::OkStatus();
  })->kind = "gather";
  return true;
}

bool LowerPad(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  auto rank = static_cast<int64_t>(xd.size());
  std::string mode = n.GetString("mode", "constant");
  auto per_axis = PadsOf(n, L.OpsetOf(n), rank, [&](size_t i) { return L.IntsConst(n.input(i)); });
  std::optional<double> fill = PadConstantOf(n, L.OpsetOf(n), [&](size_t i) { return L.Const(n.input(i)); });
  if (!per_axis.ok() || !per_axis->has_value() || !fill) return false;
  if (n.has_input(2) && L.Const(n.input(2))->num_elements() > 1) return false;
  std::vector<int64_t> pads(2 * rank, 0);  // begins for every axis, then ends
  for (int64_t a = 0; a < rank; ++a) {
    pads[a] = (**per_axis)[a].first;
    pads[a + rank] = (**per_axis)[a].second;
  }
  float value = static_cast<float>(*fill);
  auto plan = kernels::MakePadPlan(xd, pads, mode, value);
  if (!plan || plan->out_dims != L.V(out).dims) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [p = *plan](const void* const* i, void* y) {
    kernels::PadF32(p, static_cast<const float*>(i[0]), static_cast<float*>(y));
    return absl::OkStatus();
  })->kind = "pad";
  return true;
}

namespace {

// x's arena slot when it holds f32 bytes in any layout (blocked included),
// else -1; with `or_feed`, a graph input's slot too (read, never aliased).
int F32ArenaSlot(Lowerer& L, const Value* x, bool or_feed = false) {
  int s = L.V(x).slot;
  if (s < 0 || L.V(x).dtype != DType::kFloat) return -1;
  const Slot& slot = L.plan().slots[s];
  bool storage = slot.storage == Slot::Storage::kArena || (or_feed && slot.storage == Slot::Storage::kFeed);
  return storage && slot.static_shape && slot.md.get_size() > 0 ? s : -1;
}

// Cast(Cast(x: f32, to=float16), to=float): x rounded to half, which is
// elementwise, so one step does it in whatever layout x arrives in (the two
// Casts would take it to plain and back). widen_half writes this pair for a
// Cast to half inside a widened graph. bfloat16 is left to the Casts: Cast
// truncates to it, the rounding kernel rounds to nearest.
bool LowerRoundingCastPair(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* half = n.output(0);
  const Node* back = half != nullptr ? L.SoleConsumer(half) : nullptr;
  if (back == nullptr || back->op_type != "Cast" || !back->domain.empty() || L.V(half).dtype != DType::kFloat16) {
    return false;
  }
  const Value* out = back->output(0);
  int src = F32ArenaSlot(L, x, /*or_feed=*/true);
  if (out == nullptr || src < 0 || L.V(out).dtype != DType::kFloat || L.V(out).dims != L.V(x).dims) return false;
  Slot in = L.plan().slots[src];
  int slot = L.NewArenaSlot(out, in.md, in.plain);
  auto count = static_cast<int64_t>(in.md.get_size() / sizeof(float));  // a blocked layout's padding too: zeros stay 0
  NativeStep* step = AddNativeStep(L, n, {src}, slot, [count](const void* const* i, void* y) {
    kernels::RoundToHalfCopy(static_cast<const float*>(i[0]), static_cast<float*>(y), count, DType::kFloat16);
    return absl::OkStatus();
  });
  step->kind = "round";
  step->inplace_ok = true;
  L.MarkFused(back);
  return true;
}

}  // namespace

bool LowerCast(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dims != L.V(x).dims) return false;
  if (L.V(out).dtype == L.V(x).dtype) {
    // A no-op cast (a widened graph's Cast of a half value to float): the
    // same bytes, in the layout they are in.
    if (int src = F32ArenaSlot(L, x); src >= 0) {
      // A graph output read from nothing else's bytes: x's own slot, so the
      // step writing x writes the caller's tensor (an alias slot is copied
      // out of the arena each run: 0.6 ms for a 12 MB Cast pair's result).
      const ValueState& xs = L.V(x);
      if (L.V(out).graph_output && !xs.graph_output && xs.consumers.size() == 1 && L.plan().slots[src].plain &&
          L.plan().slots[src].alias_of < 0) {
        L.V(out).slot = src;
        return true;
      }
      Slot s = L.plan().slots[src];
      s.name = out->name();
      s.alias_of = src;
      L.plan().slots.push_back(std::move(s));
      L.V(out).slot = static_cast<int>(L.plan().slots.size()) - 1;
      return true;
    }
    return LowerView(L, n);
  }
  if (L.V(x).dtype == DType::kFloat && LowerRoundingCastPair(L, n)) return true;
  if (L.V(x).dtype == DType::kFloat16 && (LowerHalfRowNorm(L, n) || LowerHalfBinary(L, n) || LowerHalfUnary(L, n) ||
                                          LowerHalfAttention(L, n) || LowerHalfRotary(L, n)))
    return true;
  kernels::CastFn fn = kernels::CastKernel(L.V(x).dtype, L.V(out).dtype);
  if (fn == nullptr) return false;
  int64_t count = NumElements(L.V(x).dims);
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [fn, count](const void* const* i, void* y) {
    fn(i[0], y, count);
    return absl::OkStatus();
  })->kind = "cast";
  return true;
}

bool LowerExpand(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || !L.V(out).is_static || L.V(out).dtype != L.V(x).dtype) return false;
  auto size = static_cast<int64_t>(ElementSize(L.V(x).dtype));
  kernels::RowFn copy = kernels::CopyRowKernel(size);
  auto loop = kernels::MakeBroadcastLoop(L.V(out).dims, {L.V(x).dims}, {size}, size);
  if (copy == nullptr || !loop) return false;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [copy, l = *loop](const void* const* i, void* y) {
    kernels::RunBroadcast(l, i, y, copy);
    return absl::OkStatus();
  })->kind = "expand";
  return true;
}

namespace {

// The parts of `whole` (dims) along `axis` with the given extents, or
// nullopt when the other dims differ or the extents do not add up.
std::optional<kernels::AxisParts> PartsAlong(const std::vector<int64_t>& whole, int64_t axis,
                                             const std::vector<const std::vector<int64_t>*>& pieces,
                                             size_t elem_size) {
  kernels::AxisParts parts;
  int64_t inner = static_cast<int64_t>(elem_size), total = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (static_cast<int64_t>(i) < axis) parts.outer *= whole[i];
    if (static_cast<int64_t>(i) > axis) inner *= whole[i];
  }
  for (const std::vector<int64_t>* d : pieces) {
    if (d->size() != whole.size()) return std::nullopt;
    for (size_t i = 0; i < whole.size(); ++i) {
      if (static_cast<int64_t>(i) != axis && (*d)[i] != whole[i]) return std::nullopt;
    }
    total += (*d)[axis];
    parts.Add((*d)[axis] * inner);
  }
  if (total != whole[axis]) return std::nullopt;
  return parts;
}

// Concat along channels (`axis` 1) of inputs that are all in one
// channel-blocked layout (a conv's output) with whole blocks of channels:
// per image, each input's bytes are one run of the output's, so the copy is
// a run per input and image (ConcatParts over [N, C/B, spatial·B]). oneDNN
// 2.6's concat (simple:any) took 20.6 of DenseNet-121's 82 ms at 1 thread on
// a Zen 3, 5x the time of its copies' bytes; ONNX Runtime's 3.8. Inputs all
// channels-last (what oneDNN's AVX-512 convs write) are the same copy with a
// run per input and position (ConcatParts over [N·spatial, C]).
bool LowerChannelBlockedConcat(Lowerer& L, const Node& n, int64_t axis) {
  const Value* out = n.output(0);
  const std::vector<int64_t>& od = L.V(out).dims;
  if (axis != 1 || od.size() < 3 || od.size() > 5 || L.V(out).dtype != DType::kFloat) return false;
  const Plan& plan = L.plan();
  int64_t spatial = 1;
  for (size_t i = 2; i < od.size(); ++i) spatial *= od[i];
  std::vector<int> ins;
  bool channels_last = true;
  for (const Value* v : n.inputs()) {
    const ValueState& st = L.V(v);
    if (st.slot < 0 || L.Const(v) != nullptr || st.dtype != DType::kFloat || st.dims.size() != od.size() ||
        plan.slots[st.slot].plain) {
      return false;
    }
    channels_last = channels_last && plan.slots[st.slot].md == ChannelsLastMd(st.dims);
    ins.push_back(st.slot);
  }
  kernels::AxisParts parts;
  int64_t block = 0;
  if (channels_last) {
    parts.outer = od[0] * spatial;
    for (const Value* v : n.inputs()) parts.Add(L.V(v).dims[1] * static_cast<int64_t>(sizeof(float)));
  } else {
    parts.outer = od[0];
    for (const Value* v : n.inputs()) {
      const ValueState& st = L.V(v);
      // The dense blocked layout with whole blocks (no padding, no strides);
      // channels-last with C = 8 or 16 is the same bytes as one block.
      const int64_t b = ChannelBlockOf(plan.slots[st.slot].md, st.dims);
      if ((b != 8 && b != 16) || (block != 0 && b != block) || st.dims[1] % b != 0) return false;
      block = b;
      parts.Add(st.dims[1] * spatial * static_cast<int64_t>(sizeof(float)));
    }
    if (block == 0 || od[1] % block != 0) return false;
  }
  const int64_t row_elements = channels_last ? od[1] : od[1] * spatial;
  if (parts.row_bytes != row_elements * static_cast<int64_t>(sizeof(float))) return false;
  int slot = L.NewArenaSlot(out, channels_last ? ChannelsLastMd(od) : ChannelBlockedMd(od, block), false);
  AddNativeStep(L, n, ins, slot, [parts](const void* const* in, void* y) {
    kernels::ConcatParts(parts, in, y);
    return absl::OkStatus();
  })->kind = "concat";
  return true;
}

}  // namespace

bool LowerConcatOrNative(Lowerer& L, const Node& n) {
  const Value* out = n.output(0);
  if (out == nullptr || n.num_inputs() == 0 || !L.V(out).is_static) return false;
  // Inputs in blocked layouts stay with oneDNN's concat (no reorders back to plain).
  bool any_blocked = false;
  for (const Value* v : n.inputs()) {
    if (!NativeReady(L, v)) return false;
    int s = L.V(v).slot;
    any_blocked = any_blocked || (s >= 0 && !L.plan().slots[s].plain);
  }
  const std::vector<int64_t>& od = L.V(out).dims;
  auto rank = static_cast<int64_t>(od.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (any_blocked) {
    if (LowerChannelBlockedConcat(L, n, axis)) return true;
    try {
      if (LowerConcat(L, n)) return true;
    } catch (const dnnl::error&) {
    }
  }
  if (axis < 0 || axis >= rank) return false;
  std::vector<const std::vector<int64_t>*> dims;
  std::vector<int> ins;
  for (const Value* v : n.inputs()) {
    if (L.V(v).dtype != L.V(out).dtype) return false;
    dims.push_back(&L.V(v).dims);
  }
  auto parts = PartsAlong(od, axis, dims, ElementSize(L.V(out).dtype));
  if (!parts || NumElements(od) == 0) return false;
  for (const Value* v : n.inputs()) ins.push_back(L.PlainSlot(v));
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, ins, slot, [p = *parts](const void* const* in, void* y) {
    kernels::ConcatParts(p, in, y);
    return absl::OkStatus();
  })->kind = "concat";
  return true;
}

bool LowerSplit(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  if (!NativeReady(L, x) || n.num_outputs() == 0) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  auto rank = static_cast<int64_t>(xd.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || NumElements(xd) == 0) return false;
  std::vector<const std::vector<int64_t>*> dims;
  for (const Value* o : n.outputs()) {
    if (o == nullptr || !L.V(o).is_static || L.V(o).dtype != L.V(x).dtype) return false;
    dims.push_back(&L.V(o).dims);
  }
  auto parts = PartsAlong(xd, axis, dims, ElementSize(L.V(x).dtype));
  if (!parts) return false;
  // An empty piece has no arena slot to write: the reference kernel makes those.
  for (const Value* o : n.outputs()) {
    if (NumElements(L.V(o).dims) == 0) return false;
  }
  std::vector<int> outs;
  for (const Value* o : n.outputs()) {
    outs.push_back(NativeOutSlot(L, o));
    if (outs.back() < 0) return false;
  }
  AddNativeStep(L, n, {L.PlainSlot(x)}, outs, [p = *parts](const void* const* in, void* const* out) {
    kernels::SplitParts(p, in[0], out);
    return absl::OkStatus();
  })->kind = "split";
  return true;
}

namespace {

// One strided-copy step from x to out.
bool EmitStridedCopy(Lowerer& L, const Node& n, const Value* x, const Value* out,
                     const kernels::StridedCopyPlan& plan, const char* kind) {
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [plan](const void* const* i, void* y) {
    kernels::RunStridedCopy(plan, i[0], y);
    return absl::OkStatus();
  })->kind = kind;
  return true;
}

}  // namespace

bool LowerSliceOrNative(Lowerer& L, const Node& n) {
  // Any dtype, any steps, step 1 included: our strided copy ran a [8,512,2304]
  // -> [8,512,768] slice in 1.03-1.11 ms where oneDNN's reorder of the
  // sub-block took 1.26-1.60 (0.76-0.80 against 0.98-1.18 on 2 threads).
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || !L.V(out).is_static || L.V(out).dtype != L.V(x).dtype) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  auto rank = static_cast<int64_t>(dims.size());
  auto params = SliceParamsOf(n, L.OpsetOf(n), rank, [&](size_t i) { return L.IntsConst(n.input(i)); });
  if (!params.ok() || !params->has_value()) return false;
  const SliceParams& p = **params;
  std::vector<int64_t> starts(rank, 0), steps(rank, 1), sub = dims;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    AxisRange r = ClampSlice(p.starts[i], p.ends[i], p.steps[i], dims[p.axes[i]]);
    starts[p.axes[i]] = r.start;
    steps[p.axes[i]] = r.step;
    sub[p.axes[i]] = r.count;
  }
  if (sub != L.V(out).dims || NumElements(sub) == 0) return false;
  auto size = static_cast<int64_t>(ElementSize(L.V(x).dtype));
  return EmitStridedCopy(L, n, x, out, kernels::MakeStridedCopy(dims, starts, steps, sub, size), "slice");
}

bool LowerTransposeOrNative(Lowerer& L, const Node& n) {
  try {
    if (LowerTransposeAsView(L, n)) return true;  // f32 read only by MatMuls: a strided view
  } catch (const dnnl::error&) {
  }
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dtype != L.V(x).dtype || !L.V(out).is_static) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> perm = n.GetInts("perm");
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank || NumElements(dims) == 0) return false;
  std::vector<int64_t> want(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) return false;
    want[i] = dims[perm[i]];
  }
  if (want != L.V(out).dims) return false;
  return EmitStridedCopy(L, n, x, out, kernels::MakeTransposeCopy(dims, perm, ElementSize(L.V(x).dtype)),
                         "transpose");
}

// DepthToSpace and SpaceToDepth (pixel shuffle, YOLO's focus): a transpose of
// a 6-D view of the input, as the ONNX spec defines them. DepthToSpace DCR:
// [N, b, b, C', H, W] -> (0, 3, 4, 1, 5, 2); CRD: [N, C', b, b, H, W] ->
// (0, 1, 4, 2, 5, 3); SpaceToDepth: [N, C, H', b, W', b] -> (0, 3, 5, 1, 2, 4),
// CRD (opset 28) -> (0, 1, 3, 5, 2, 4).
bool LowerDepthSpace(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dtype != L.V(x).dtype || !L.V(out).is_static) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  const int64_t b = n.GetInt("blocksize", 0);
  if (d.size() != 4 || b <= 0 || NumElements(d) == 0) return false;
  std::vector<int64_t> view, perm, want;
  if (n.op_type == "DepthToSpace") {
    if (d[1] % (b * b) != 0) return false;
    const int64_t c = d[1] / (b * b);
    if (n.GetString("mode", "DCR") == "CRD") {
      view = {d[0], c, b, b, d[2], d[3]};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      view = {d[0], b, b, c, d[2], d[3]};
      perm = {0, 3, 4, 1, 5, 2};
    }
    want = {d[0], c, d[2] * b, d[3] * b};
  } else {
    if (d[2] % b != 0 || d[3] % b != 0) return false;
    view = {d[0], d[1], d[2] / b, b, d[3] / b, b};
    // Opset 28's mode: CRD puts each channel's block together.
    perm = n.GetString("mode", "DCR") == "CRD" ? std::vector<int64_t>{0, 1, 3, 5, 2, 4}
                                               : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
    want = {d[0], d[1] * b * b, d[2] / b, d[3] / b};
  }
  if (want != L.V(out).dims) return false;
  return EmitStridedCopy(L, n, x, out, kernels::MakeTransposeCopy(view, perm, ElementSize(L.V(x).dtype)),
                         n.op_type == "DepthToSpace" ? "depth_to_space" : "space_to_depth");
}

bool LowerTile(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dtype != L.V(x).dtype || !L.V(out).is_static) return false;
  std::optional<std::vector<int64_t>> repeats = n.num_inputs() > 1 ? L.IntsConst(n.input(1)) : std::nullopt;
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (!repeats || repeats->size() != dims.size() || NumElements(L.V(out).dims) == 0) return false;
  std::vector<int64_t> want(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) want[i] = dims[i] * (*repeats)[i];
  if (want != L.V(out).dims) return false;
  return EmitStridedCopy(L, n, x, out, kernels::MakeTileCopy(dims, *repeats, ElementSize(L.V(x).dtype)), "tile");
}

}  // namespace aic::cpu

// Lowerings of data-movement ops onto our own kernels: Gather (any dtype),
// Pad (f32: constant, reflect, edge), Resize/Upsample in linear mode on NCHW
// (after oneDNN's nearest lowering declines), and Cast. Attributes and
// constant inputs are read here once; anything not covered returns false and
// the reference kernel runs.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/cast.h"
#include "ops/tensor/pad_params.h"
#include "ops/tensor/resize_params.h"
#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/pad.h"
#include "exec/cpu/kernels/resize_linear.h"
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

bool LowerResizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return false;
  ResizeAttrs a = ResizeAttrsOf(n, L.OpsetOf(n));
  if (a.mode != "linear" || a.antialias || !a.axes.empty() || a.aspect_policy != "stretch") return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (xd.size() != 4 || od.size() != 4 || xd[0] != od[0] || xd[1] != od[1]) return false;
  // The scales the reference uses: sizes / in when sizes are given, else the scales.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  ResizeInputs io = ResizeInputsOf(n, L.OpsetOf(n));
  int scales_at = io.scales;
  const Value* sizes_v = io.sizes >= 0 ? OptionalInput(n, static_cast<size_t>(io.sizes)) : nullptr;
  if (sizes_v != nullptr) {
    if (!ConstInts(L, sizes_v, &sizes)) return false;
  }
  if (!sizes.empty()) {
    if (sizes != od) return false;
    for (size_t i = 0; i < 4; ++i) scales.push_back(static_cast<double>(od[i]) / static_cast<double>(xd[i]));
  } else if (scales_at < 0) {
    for (float f : n.GetFloats("scales")) scales.push_back(f);
  } else {
    const Value* s = OptionalInput(n, static_cast<size_t>(scales_at));
    if (s == nullptr || !ConstDoubles(L, s, &scales)) return false;
    for (double& d : scales) d = static_cast<float>(d);  // the reference reads scales as f32
  }
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1) return false;
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

}  // namespace

bool LowerResizeOrNative(Lowerer& L, const Node& n) {
  try {
    if (LowerResize(L, n)) return true;
  } catch (const dnnl::error&) {
  }
  return LowerResizeLinear(L, n);
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
      return absl::InvalidArgumentError(absl::StrCat(where, ": index ", bad, " is out of range for axis of ", axis_dim));
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

bool LowerCast(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dims != L.V(x).dims) return false;
  if (L.V(out).dtype == L.V(x).dtype) return LowerView(L, n);  // a no-op cast: the same bytes
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

}  // namespace aic::cpu

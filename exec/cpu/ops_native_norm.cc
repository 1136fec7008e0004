// Lowerings of the normalizations onto our own kernels: LayerNormalization
// and RMSNormalization (rows, exec/cpu/kernels/layer_norm.h) and InstanceNormalization /
// GroupNormalization (channel groups, kernels/group_norm.h). Each returns
// false (nothing emitted) to let the reference kernel run instead.
#include <optional>
#include <vector>

#include "exec/cpu/kernels/group_norm.h"
#include "exec/cpu/kernels/layer_norm.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

// A per-channel f32 parameter of `channels` entries: the value itself, or
// (GroupNormalization-18's per-group form, `groups` entries) a constant
// repeated over each group's channels. -1 when neither.
int PerChannelSlot(Lowerer& L, const Value* p, int64_t channels, int64_t groups) {
  if (!L.IsF32(p) || !NativeReady(L, p)) return -1;
  int64_t count = NumElements(L.V(p).dims);
  if (count == channels) return L.PlainSlot(p);
  const Tensor* c = L.Const(p);
  if (count != groups || c == nullptr) return -1;
  Tensor expanded(DType::kFloat, {channels});
  int64_t per_group = channels / groups;
  for (int64_t ch = 0; ch < channels; ++ch) {
    expanded.mutable_data<float>()[ch] = c->data<float>()[ch / per_group];
  }
  L.plan().constants.push_back(expanded);
  return L.ConstSlot(L.plan().constants.back(), PlainMd({channels}));
}

// A row normalization's view of x: rows before `axis`, cols from it on, and
// whether a parameter is exactly the normalized dims (leading 1s allowed).
struct RowView {
  int64_t rows = 1, cols = 1;
  std::vector<int64_t> normalized;
};

std::optional<RowView> RowsOf(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) return std::nullopt;
  const std::vector<int64_t>& dims = L.V(x).dims;
  auto rank = static_cast<int64_t>(dims.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || L.V(out).dims != dims) return std::nullopt;
  RowView v;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? v.rows : v.cols) *= dims[i];
  if (v.rows * v.cols == 0) return std::nullopt;
  v.normalized.assign(dims.begin() + axis, dims.end());
  return v;
}

bool FitsNormalizedDims(Lowerer& L, const Value* p, const RowView& v) {
  if (!L.IsF32(p) || !NativeReady(L, p)) return false;
  std::vector<int64_t> d = L.V(p).dims;
  while (d.size() > v.normalized.size() && d.front() == 1) d.erase(d.begin());
  return d == v.normalized;
}

}  // namespace

bool LowerLayerNorm(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (n.num_inputs() < 2) return false;
  std::optional<RowView> view = RowsOf(L, n);
  if (!view) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  const int64_t rows = view->rows, cols = view->cols;
  const int64_t axis = static_cast<int64_t>(dims.size() - view->normalized.size());
  auto fits = [&](const Value* p) { return FitsNormalizedDims(L, p, *view); };
  const Value* scale = n.input(1);
  const Value* bias = n.num_inputs() > 2 ? n.input(2) : nullptr;
  if (!fits(scale) || (bias != nullptr && !fits(bias))) return false;
  // Mean and InvStdDev (optional outputs): f32, the input's dims with 1s from the axis on.
  std::vector<int64_t> stat_dims(dims.begin(), dims.begin() + axis);
  stat_dims.resize(dims.size(), 1);
  for (size_t i = 1; i < n.num_outputs() && i < 3; ++i) {
    const Value* s = n.output(i);
    if (s != nullptr && (!L.IsF32(s) || L.V(s).dims != stat_dims)) return false;
  }
  if (n.num_outputs() > 3) return false;
  float eps = n.GetFloat("epsilon", 1e-5f);
  std::vector<int> ins = {L.PlainSlot(x), L.PlainSlot(scale), bias != nullptr ? L.PlainSlot(bias) : -1};
  std::vector<int> outs = {NativeOutSlot(L, out)};
  for (size_t i = 1; i < 3; ++i) {
    const Value* s = i < n.num_outputs() ? n.output(i) : nullptr;
    outs.push_back(s != nullptr ? NativeOutSlot(L, s) : -1);
  }
  if (outs[0] < 0) return false;
  NativeStep* step = AddNativeStep(L, n, ins, outs, [rows, cols, eps](const void* const* in, void* const* out) {
    kernels::LayerNormF32(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                          static_cast<const float*>(in[2]), static_cast<float*>(out[0]), rows, cols, eps,
                          static_cast<float*>(out[1]), static_cast<float*>(out[2]));
    return absl::OkStatus();
  });
  step->kind = "layernorm";
  step->inplace_ok = true;
  return true;
}

// RMSNormalization (opset 23, or its ai.aic alias): one row per outer index,
// the scale exactly the normalized dims (leading 1s allowed), f32 in and out.
bool LowerRmsNorm(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* scale = n.input(1);
  const Value* out = n.output(0);
  if (n.num_inputs() != 2 || n.num_outputs() != 1) return false;
  std::optional<RowView> view = RowsOf(L, n);
  if (!view || !FitsNormalizedDims(L, scale, *view)) return false;
  const int64_t rows = view->rows, cols = view->cols;
  float eps = n.GetFloat("epsilon", 1e-5f);
  int out_slot = NativeOutSlot(L, out);
  if (out_slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.PlainSlot(x), L.PlainSlot(scale)}, {out_slot},
                                   [rows, cols, eps](const void* const* in, void* const* o) {
                                     kernels::RmsNormF32(static_cast<const float*>(in[0]),
                                                         static_cast<const float*>(in[1]),
                                                         static_cast<float*>(o[0]), rows, cols, eps);
                                     return absl::OkStatus();
                                   });
  step->kind = "rmsnorm";
  step->inplace_ok = true;
  return true;
}

// Cast(x: f16 -> f32) -> LayerNormalization / RMSNormalization -> Cast(->
// f16): what widen_half makes of a normalization whose input and output are
// half tensors (a half model's edges, a Cast island). One step over the half
// bytes (kernels::LayerNormHalf), where the three steps moved the tensor
// five times through f32: LayerNormalization [8,512,768] f16 took 1.43x
// ONNX Runtime's time so. Called by LowerCast with the first Cast; only the
// first output of the normalization, each value read by the next node only.
bool LowerHalfRowNorm(Lowerer& L, const Node& cast_in) {
  std::optional<HalfEdges> edges = HalfEdgesAround(L, cast_in);
  if (!edges) return false;
  const Node* norm = edges->op;
  if (norm->num_inputs() < 2) return false;
  const bool layer = norm->op_type == "LayerNormalization" && norm->domain.empty();
  const bool rms = norm->op_type == "RMSNormalization" && (norm->domain.empty() || norm->domain == kAicDomain);
  if (!layer && !rms) return false;
  const std::vector<int64_t>& dims = L.V(edges->x16).dims;
  auto rank = static_cast<int64_t>(dims.size());
  int64_t axis = norm->GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  RowView view;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? view.rows : view.cols) *= dims[i];
  if (view.rows * view.cols == 0) return false;
  view.normalized.assign(dims.begin() + axis, dims.end());
  const Value* scale = norm->input(1);
  const Value* bias = layer && norm->num_inputs() > 2 ? norm->input(2) : nullptr;
  if ((rms && norm->num_inputs() != 2) || !FitsNormalizedDims(L, scale, view) ||
      (bias != nullptr && !FitsNormalizedDims(L, bias, view))) {
    return false;
  }
  int out = NativeOutSlot(L, edges->y16);
  if (out < 0) return false;
  const int64_t rows = view.rows, cols = view.cols;
  const float eps = norm->GetFloat("epsilon", 1e-5f);
  std::vector<int> ins = {L.PlainSlot(edges->x16), L.PlainSlot(scale), bias != nullptr ? L.PlainSlot(bias) : -1};
  NativeStep* step = AddNativeStep(L, *norm, ins, {out}, [=](const void* const* in, void* const* o) {
    const auto* xs = static_cast<const uint16_t*>(in[0]);
    auto* ys = static_cast<uint16_t*>(o[0]);
    if (layer) {
      kernels::LayerNormHalf(xs, static_cast<const float*>(in[1]), static_cast<const float*>(in[2]), ys, rows, cols, eps);
    } else {
      kernels::RmsNormHalf(xs, static_cast<const float*>(in[1]), ys, rows, cols, eps);
    }
    return absl::OkStatus();
  });
  step->kind = layer ? "layernorm" : "rmsnorm";
  L.MarkFused(norm);
  L.MarkFused(edges->back);
  return true;
}

bool LowerGroupNorm(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  bool instance = n.op_type == "InstanceNormalization";
  if (n.num_inputs() != 3 || n.num_outputs() != 1 || !L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x)) {
    return false;
  }
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (dims.size() < (instance ? 3u : 2u) || L.V(out).dims != dims) return false;
  kernels::GroupNormShape shape;
  shape.batch = dims[0];
  shape.channels = dims[1];
  shape.groups = instance ? dims[1] : n.GetInt("num_groups", 0);
  for (size_t i = 2; i < dims.size(); ++i) shape.inner *= dims[i];
  if (shape.groups <= 0 || shape.channels % shape.groups != 0 || NumElements(dims) == 0) return false;
  int scale = PerChannelSlot(L, n.input(1), shape.channels, shape.groups);
  int bias = PerChannelSlot(L, n.input(2), shape.channels, shape.groups);
  if (scale < 0 || bias < 0) return false;
  float eps = n.GetFloat("epsilon", 1e-5f);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.PlainSlot(x), scale, bias}, slot, [shape, eps](const void* const* in, void* y) {
    kernels::GroupNormF32(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                          static_cast<const float*>(in[2]), static_cast<float*>(y), shape, eps);
    return absl::OkStatus();
  });
  step->kind = "groupnorm";
  step->inplace_ok = true;
  return true;
}

}  // namespace aic::cpu

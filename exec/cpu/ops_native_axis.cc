// Lowerings of the along-an-axis ops onto our own kernels: TopK and
// ArgMax/ArgMin (exec/cpu/kernels/select.h), and Softmax/LogSoftmax and the
// Reduce* ops where oneDNN has only its reference implementation or lacks
// the op (kernels/softmax.h, kernels/reduce.h), all over f32, and CumSum
// (f32, int32, int64; kernels/cumsum.h). Each returns false (nothing emitted) to let the reference
// kernel run instead.
#include <optional>
#include <vector>

#include "exec/cpu/kernels/cumsum.h"
#include "exec/cpu/kernels/reduce.h"
#include "exec/cpu/kernels/select.h"
#include "exec/cpu/kernels/softmax.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
#include "exec/cpu/native_step.h"
#include "ops/math/reduce_axes.h"

namespace aic::cpu {

bool LowerTopK(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  if (n.num_outputs() != 2 || !L.IsF32(x) || !NativeReady(L, x)) return false;
  const Value* values = n.output(0);
  const Value* indices = n.output(1);
  if (values == nullptr || !L.IsF32(values) || indices == nullptr || L.V(indices).dtype != DType::kInt64 ||
      !L.V(indices).is_static) {
    return false;
  }
  const std::vector<int64_t>& dims = L.V(x).dims;
  kernels::AxisLanes lanes;
  int64_t axis = 0;
  if (!kernels::LanesAlong(dims, n.GetInt("axis", -1), &lanes, &axis)) return false;
  // k as the outputs' extent along the axis (inference checked it against K).
  int64_t k = L.V(values).dims.size() == dims.size() ? L.V(values).dims[axis] : -1;
  std::vector<int64_t> want = dims;
  want[axis] = k;
  if (k < 0 || k > lanes.dim || L.V(values).dims != want || L.V(indices).dims != want) return false;
  if (NumElements(dims) == 0 || k == 0) return false;
  bool largest = n.GetInt("largest", 1) != 0;
  std::vector<int> outs = {NativeOutSlot(L, values), NativeOutSlot(L, indices)};
  if (outs[0] < 0 || outs[1] < 0) return false;
  AddNativeStep(L, n, {L.PlainSlot(x)}, outs, [lanes, k, largest](const void* const* in, void* const* out) {
    kernels::TopKF32(static_cast<const float*>(in[0]), lanes, k, largest, static_cast<float*>(out[0]),
                     static_cast<int64_t*>(out[1]));
    return absl::OkStatus();
  })->kind = "topk";
  return true;
}

bool LowerArgExtreme(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !NativeReady(L, x) || out == nullptr || L.V(out).dtype != DType::kInt64) return false;
  const std::vector<int64_t>& dims = L.V(x).dims;
  kernels::AxisLanes lanes;
  int64_t axis = 0;
  if (!kernels::LanesAlong(dims, n.GetInt("axis", 0), &lanes, &axis) || lanes.dim == 0 || lanes.dim > INT32_MAX) return false;
  std::vector<int64_t> want = dims;
  if (n.GetInt("keepdims", 1) != 0) {
    want[axis] = 1;
  } else {
    want.erase(want.begin() + axis);
  }
  if (L.V(out).dims != want || NumElements(dims) == 0) return false;
  bool is_max = n.op_type == "ArgMax";
  bool last = L.OpsetOf(n) >= 12 && n.GetInt("select_last_index", 0) != 0;
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {L.PlainSlot(x)}, slot, [lanes, is_max, last](const void* const* in, void* y) {
    kernels::ArgExtremeF32(static_cast<const float*>(in[0]), lanes, is_max, last, static_cast<int64_t*>(y));
    return absl::OkStatus();
  })->kind = "argmax";
  return true;
}

bool LowerSoftmaxOrNative(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const std::vector<int64_t>& dims = L.V(x).dims;
  bool legacy = L.OpsetOf(n) < 13;  // over the flattened trailing dims
  kernels::AxisLanes lanes;
  int64_t axis = 0;
  bool along = !dims.empty() && kernels::LanesAlong(dims, n.GetInt("axis", legacy ? 1 : -1), &lanes, &axis);
  if (along && legacy) lanes = {lanes.outer, lanes.dim * lanes.inner, 1};
  // Our last-axis kernel keeps up with memory where oneDNN 2.6's JIT softmax
  // takes 1.3-2.3x ONNX Runtime's time (bench/OPS.md) with AVX-512F, and
  // 1.2-1.5x with AVX2 (a Zen 3); along other axes, without AVX-512F,
  // oneDNN's.
  const bool ours = kernels::avx512::HaveAvx512() || (kernels::avx2::HaveAvx2Fma() && along && lanes.inner == 1);
  if (!ours) {
    try {
      if (LowerSoftmax(L, n)) return true;
    } catch (const dnnl::error&) {
    }
  }
  if (!along || !L.IsF32(x) || !L.IsF32(out) || !NativeReady(L, x) || L.V(out).dims != L.V(x).dims) return false;
  if (NumElements(dims) == 0) return false;
  bool log = n.op_type == "LogSoftmax";
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {L.PlainSlot(x)}, slot, [lanes, log](const void* const* in, void* y) {
    kernels::SoftmaxF32(static_cast<const float*>(in[0]), static_cast<float*>(y), lanes, log);
    return absl::OkStatus();
  });
  step->kind = "softmax";
  step->inplace_ok = true;
  return true;
}

namespace {

// Whether x is held channel-blocked (oneDNN's nC..16c / nC..8c, or
// channels-last, as a conv leaves it) and the reduction is over exactly its spatial axes (an SE
// block's or a global pool's mean): then the reduction reads the blocked
// bytes directly as outer = N·C/B lanes of B channels side by side, which
// come out in the plain [N, C, 1, ..] order. Sets *lanes.
bool ReducesSpatialOfChannelBlocks(Lowerer& L, const Value* x, const std::vector<bool>& reduced,
                                   kernels::AxisLanes* lanes) {
  int s = L.V(x).slot;
  const std::vector<int64_t>& dims = L.V(x).dims;
  if (s < 0 || L.plan().slots[s].plain || dims.size() < 3 || dims.size() > 5 || reduced[0] || reduced[1]) return false;
  int64_t spatial = 1;
  for (size_t a = 2; a < dims.size(); ++a) {
    if (!reduced[a]) return false;
    spatial *= dims[a];
  }
  const int64_t block = ChannelBlockOf(L.plan().slots[s].md, dims);
  if (block == 0 || dims[1] % block != 0) return false;  // a padded block: its lanes would hold no channel
  *lanes = {dims[0] * dims[1] / block, spatial, block};  // channels-last: one block of all C channels
  return true;
}

// The native reduction over one contiguous block of axes; false when the
// axes are not one block (oneDNN's reduction takes those).
bool LowerReduceOver(Lowerer& L, const Node& n, kernels::ReduceKind kind, const std::vector<bool>& reduced) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const std::vector<int64_t>& dims = L.V(x).dims;
  auto rank = static_cast<int64_t>(dims.size());
  // The reduced axes (ignoring size-1 ones) must be one contiguous block.
  int64_t first = -1, last = -1;
  for (int64_t a = 0; a < rank; ++a) {
    if (reduced[a] && dims[a] != 1) {
      if (first < 0) first = a;
      last = a;
    }
  }
  kernels::AxisLanes lanes;
  if (first < 0) {
    first = last = rank;  // only size-1 axes reduced: each output is its one input
  }
  for (int64_t a = 0; a < rank; ++a) {
    if (a < first) {
      lanes.outer *= dims[a];
    } else if (a > last) {
      lanes.inner *= dims[a];
    } else if (!reduced[a] && dims[a] != 1) {
      return false;  // a kept axis inside the block
    } else {
      lanes.dim *= dims[a];
    }
  }
  if (NumElements(dims) == 0 || NumElements(L.V(out).dims) != lanes.outer * lanes.inner) return false;
  int in = -1;
  if (ReducesSpatialOfChannelBlocks(L, x, reduced, &lanes)) {
    in = L.V(x).slot;  // read in place: no reorder to plain first
  }
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  if (in < 0) in = L.PlainSlot(x);
  AddNativeStep(L, n, {in}, slot, [lanes, kind](const void* const* in, void* y) {
    kernels::ReduceF32(static_cast<const float*>(in[0]), static_cast<float*>(y), lanes, kind);
    return absl::OkStatus();
  })->kind = "reduce";
  return true;
}

bool LowerNativeReduce(Lowerer& L, const Node& n) {
  kernels::ReduceKind kind;
  const Value* x = n.input(0);
  if (!kernels::ReduceKindOf(n.op_type, &kind) || !L.IsF32(x) || !L.IsF32(n.output(0)) || !NativeReady(L, x)) {
    return false;
  }
  auto rank = static_cast<int64_t>(L.V(x).dims.size());
  auto axes = ResolveReduceAxes(n, L.OpsetOf(n), n.has_input(1), n.has_input(1) ? L.Const(n.input(1)) : nullptr, rank);
  if (!axes.ok() || !axes->has_value() || (*axes)->noop) return false;
  return LowerReduceOver(L, n, kind, (*axes)->reduced);
}

}  // namespace

// Native first: oneDNN 2.6's JIT reduction is slower than one pass over
// rows (an SE block's spatial mean of [1, 1280, 7, 7]: 0.43 ms against
// 0.01 ms) and runs its reference kernel for inner blocks.
bool LowerReduceOrNative(Lowerer& L, const Node& n) {
  if (LowerNativeReduce(L, n)) return true;
  try {
    if (n.op_type == "ReduceMean" || n.op_type == "ReduceSum" || n.op_type == "ReduceMax" || n.op_type == "ReduceMin") {
      return LowerReduce(L, n);
    }
  } catch (const dnnl::error&) {
  }
  return false;
}

// GlobalAveragePool / GlobalMaxPool as the mean / max over the spatial axes,
// with nothing fused after them: the same one pass over rows, reading a
// conv's blocked output in place (oneDNN 2.6's pooling took 1.2-1.3x ORT's
// time on plain inputs: bench/OPS.md).
bool LowerGlobalPoolOrNative(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (L.IsF32(x) && out != nullptr && L.IsF32(out) && NativeReady(L, x) && L.V(x).dims.size() >= 3 &&
      L.CollectPostOps(out).empty()) {
    std::vector<bool> reduced(L.V(x).dims.size(), true);
    reduced[0] = reduced[1] = false;
    const kernels::ReduceKind kind =
        n.op_type == "GlobalMaxPool" ? kernels::ReduceKind::kMax : kernels::ReduceKind::kMean;
    if (LowerReduceOver(L, n, kind, reduced)) return true;
  }
  return LowerPool(L, n);
}

bool LowerCumSum(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || out == nullptr || L.V(out).dims != L.V(x).dims || L.V(out).dtype != L.V(x).dtype) {
    return false;
  }
  DType t = L.V(x).dtype;
  if (t != DType::kFloat && t != DType::kInt32 && t != DType::kInt64) return false;
  std::optional<std::vector<int64_t>> axis = n.num_inputs() > 1 ? L.IntsConst(n.input(1)) : std::nullopt;
  if (!axis || axis->size() != 1 || NumElements(L.V(x).dims) == 0) return false;
  kernels::AxisLanes lanes;
  int64_t normalized = 0;
  if (!kernels::LanesAlong(L.V(x).dims, (*axis)[0], &lanes, &normalized)) return false;
  bool exclusive = n.GetInt("exclusive", 0) != 0, reverse = n.GetInt("reverse", 0) != 0;
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {L.PlainSlot(x)}, slot, [=](const void* const* in, void* y) {
    kernels::CumSum(t, in[0], y, lanes, exclusive, reverse);
    return absl::OkStatus();
  })->kind = "cumsum";
  return true;
}

}  // namespace aic::cpu

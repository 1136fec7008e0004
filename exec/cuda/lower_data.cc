// Views (Reshape and friends share their input's bytes: no step), the row
// kernels (Softmax, LayerNormalization, reductions, global pooling) and data
// movement (Transpose, Slice, Concat, Expand as strided copies; Gather).
#include <algorithm>

#include "exec/cuda/index_math.h"
#include "exec/cuda/lowering.h"
#include "ops/math/reduce_axes.h"
#include "ops/tensor/slice_params.h"

namespace aic::cuda {

namespace {

int64_t NormAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

int64_t Prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

}  // namespace

bool LowerView(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsStorable(x) || !L.IsStorable(y) || L.V(x).dtype != L.V(y).dtype) return false;
  if (NumElements(L.V(x).dims) != NumElements(L.V(y).dims)) return false;
  if (n.op_type == "Dropout") {
    if (n.output(1) != nullptr) return false;
    if (n.has_input(2)) {
      const Tensor* t = L.Const(n.input(2));
      if (t == nullptr || t->ElementAsDouble(0) != 0) return false;  // training mode
    }
  }
  if (L.Const(x) == nullptr && L.V(x).slot < 0) return false;
  int src = L.SlotOf(x);
  Slot view = L.plan().slots[src];
  view.name = y->name();
  view.dims = L.V(y).dims;
  L.plan().slots.push_back(std::move(view));
  L.V(y).slot = static_cast<int>(L.plan().slots.size()) - 1;
  ++L.plan().stats.view_steps;
  return true;
}

bool LowerSoftmax(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y)) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  int64_t opset = L.OpsetOf(n);
  int64_t axis = NormAxis(n.GetInt("axis", opset >= 13 ? -1 : 1), d.size());
  if (d.empty() || axis < 0 || axis >= static_cast<int64_t>(d.size())) return false;
  SoftmaxDesc s;
  s.log = n.op_type == "LogSoftmax";
  s.outer = Prod(d, 0, static_cast<size_t>(axis));
  if (opset >= 13) {
    s.n = d[static_cast<size_t>(axis)];
    s.inner = Prod(d, static_cast<size_t>(axis) + 1, d.size());
  } else {
    s.n = Prod(d, static_cast<size_t>(axis), d.size());  // the old 2-D coercion
    s.inner = 1;
  }
  int xs = L.SlotOf(x);
  L.AddStep(std::make_unique<SoftmaxStep>(s, xs, L.OutputSlot(y)), n.Describe());
  return true;
}

bool LowerLayerNorm(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *scale = n.input(1), *bias = n.input(2), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y) || !L.IsF32(scale) || (bias != nullptr && !L.IsF32(bias))) return false;
  if (n.output(1) != nullptr || n.output(2) != nullptr) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  int64_t axis = NormAxis(n.GetInt("axis", -1), d.size());
  if (axis < 0 || axis >= static_cast<int64_t>(d.size())) return false;
  LayerNormDesc ln;
  ln.rows = Prod(d, 0, static_cast<size_t>(axis));
  ln.cols = Prod(d, static_cast<size_t>(axis), d.size());
  ln.epsilon = n.GetFloat("epsilon", 1e-5f);
  ln.has_bias = bias != nullptr;
  // Scale and bias broadcasting over part of the normalized dims: the reference does it.
  if (NumElements(L.V(scale).dims) != ln.cols || (bias != nullptr && NumElements(L.V(bias).dims) != ln.cols)) {
    return false;
  }
  for (const Value* v : {scale, bias}) {
    if (v != nullptr && L.Const(v) == nullptr && L.V(v).slot < 0) return false;
  }
  int xs = L.SlotOf(x), ss = L.SlotOf(scale), bs = bias != nullptr ? L.SlotOf(bias) : -1;
  L.AddStep(std::make_unique<LayerNormStep>(ln, xs, ss, bs, L.OutputSlot(y)), n.Describe());
  return true;
}

bool LowerReduce(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y)) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  std::vector<int64_t> axes;
  ReduceOp op = ReduceOp::kSum;
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    for (size_t i = 2; i < d.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    op = n.op_type == "GlobalMaxPool" ? ReduceOp::kMax : ReduceOp::kMean;
  } else {
    op = n.op_type == "ReduceMean"  ? ReduceOp::kMean
         : n.op_type == "ReduceMax" ? ReduceOp::kMax
         : n.op_type == "ReduceMin" ? ReduceOp::kMin
                                    : ReduceOp::kSum;
    auto resolved = ResolveReduceAxes(n, L.OpsetOf(n), n.has_input(1), n.has_input(1) ? L.Const(n.input(1)) : nullptr,
                                      static_cast<int64_t>(d.size()));
    if (!resolved.ok() || !resolved->has_value() || (*resolved)->noop) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      if ((*resolved)->reduced[i]) axes.push_back(static_cast<int64_t>(i));
    }
  }
  for (int64_t& a : axes) {
    a = NormAxis(a, d.size());
    if (a < 0 || a >= static_cast<int64_t>(d.size()) || d[static_cast<size_t>(a)] == 0) return false;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto r = MakeReduce(d, axes, op);
  if (!r || r->out_count != NumElements(L.V(y).dims)) return false;
  int xs = L.SlotOf(x);
  L.AddStep(std::make_unique<ReduceStep>(*r, xs, L.OutputSlot(y)), n.Describe());
  return true;
}

namespace {

bool EmitCopy(Lowerer& L, const Node& n, const std::optional<StridedCopy>& c, const Value* x) {
  if (!c) return false;
  int xs = L.SlotOf(x);
  L.AddStep(std::make_unique<CopyStep>(std::vector<CopyStep::Part>{{*c, xs}}, L.OutputSlot(n.output(0))), n.Describe());
  return true;
}

}  // namespace

bool LowerTranspose(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsStorable(x) || !L.IsStorable(y)) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  std::vector<int64_t> perm;
  for (size_t i = d.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  perm = n.GetInts("perm", perm);
  return EmitCopy(L, n, TransposeCopy(d, perm, static_cast<int>(ElementSize(L.V(x).dtype))), x);
}

bool LowerSlice(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsStorable(x) || !L.IsStorable(y)) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  auto params = SliceParamsOf(n, L.OpsetOf(n), static_cast<int64_t>(d.size()),
                              [&](size_t i) { return L.IntsConst(n.input(i)); });
  if (!params.ok() || !params->has_value()) return false;
  const SliceParams& p = **params;
  std::vector<int64_t> begin(d.size(), 0), step(d.size(), 1);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    size_t a = static_cast<size_t>(p.axes[i]);
    if (d[a] == 0) return false;
    begin[a] = ClampSlice(p.starts[i], p.ends[i], p.steps[i], d[a]).start;
    step[a] = p.steps[i];
  }
  return EmitCopy(L, n, SliceCopy(d, begin, step, L.V(y).dims, static_cast<int>(ElementSize(L.V(x).dtype))), x);
}

bool LowerConcat(Lowerer& L, const Node& n) {
  const Value* y = n.output(0);
  if (!L.IsStorable(y)) return false;
  const std::vector<int64_t>& yd = L.V(y).dims;
  int64_t axis = NormAxis(n.GetInt("axis", 0), yd.size());
  if (axis < 0 || axis >= static_cast<int64_t>(yd.size())) return false;
  std::vector<CopyStep::Part> parts;
  int64_t offset = 0;
  for (const Value* x : n.inputs()) {
    if (!L.IsStorable(x) || L.V(x).dtype != L.V(y).dtype) return false;
    if (L.Const(x) == nullptr && L.V(x).slot < 0) return false;
    const std::vector<int64_t>& xd = L.V(x).dims;
    if (NumElements(xd) > 0) {
      auto c = ConcatPartCopy(xd, yd, axis, offset, static_cast<int>(ElementSize(L.V(y).dtype)));
      if (!c) return false;
      parts.push_back({*c, -1});
    }
    offset += xd.size() == yd.size() ? xd[static_cast<size_t>(axis)] : 0;
  }
  size_t p = 0;
  for (const Value* x : n.inputs()) {
    if (NumElements(L.V(x).dims) > 0) parts[p++].in = L.SlotOf(x);
  }
  L.AddStep(std::make_unique<CopyStep>(std::move(parts), L.OutputSlot(y)), n.Describe());
  return true;
}

bool LowerGather(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *idx = n.input(1), *y = n.output(0);
  if (!L.IsStorable(x) || !L.IsStorable(idx) || !L.IsStorable(y)) return false;
  DType it = L.V(idx).dtype;
  if (it != DType::kInt64 && it != DType::kInt32) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  int64_t axis = NormAxis(n.GetInt("axis", 0), d.size());
  if (axis < 0 || axis >= static_cast<int64_t>(d.size())) return false;
  GatherDesc g;
  g.outer = Prod(d, 0, static_cast<size_t>(axis));
  g.axis_dim = d[static_cast<size_t>(axis)];
  g.inner = Prod(d, static_cast<size_t>(axis) + 1, d.size());
  g.n_indices = NumElements(L.V(idx).dims);
  g.indices_int64 = it == DType::kInt64;
  g.elem_size = static_cast<int>(ElementSize(L.V(x).dtype));
  if (g.outer * g.n_indices * g.inner != NumElements(L.V(y).dims)) return false;
  if (L.Const(idx) == nullptr && L.V(idx).slot < 0) return false;
  int xs = L.SlotOf(x), is = L.SlotOf(idx);
  L.AddStep(std::make_unique<GatherStep>(g, xs, is, L.OutputSlot(y)), n.Describe());
  return true;
}

bool LowerExpand(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsStorable(x) || !L.IsStorable(y)) return false;
  return EmitCopy(L, n, ExpandCopy(L.V(x).dims, L.V(y).dims, static_cast<int>(ElementSize(L.V(x).dtype))), x);
}

}  // namespace aic::cuda

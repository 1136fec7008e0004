// Lowerings of the ops that gather or scatter by an index tensor onto our
// own kernels: GatherElements and ScatterElements (and Scatter, its opset-9
// name) along any axis (kernels/gather_elements.h, kernels/scatter.h),
// GatherND with batch_dims and ScatterND (kernels/gather.h), over elements of
// any size (half values move as 2-byte elements), with int32 or int64
// indices. The index maps are made here once per shape. Scatter reductions
// run for f32, f64, int32 and int64; on half types (which the reference
// accumulates in float and rounds once) and anything else not covered the
// lowering returns false and the reference kernel runs. An out-of-range
// index is a runtime error naming the node, the index and its position.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/gather_elements.h"
#include "exec/cpu/kernels/scatter.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

// The index input's element size: 4 (int32) or 8 (int64); 0 for other types.
size_t IndexBytes(Lowerer& L, const Value* idx) {
  DType t = L.V(idx).dtype;
  return t == DType::kInt32 ? 4 : (t == DType::kInt64 ? 8 : 0);
}

// Whether v is an input the kernels read: known, static, not empty.
bool Readable(Lowerer& L, const Value* v) { return NativeReady(L, v) && NumElements(L.V(v).dims) > 0; }

// Whether `out` can take a slot of `dims` and `dtype` (checked before any
// input gets a reorder, so a decline emits nothing).
bool Writable(Lowerer& L, const Value* out, const std::vector<int64_t>& dims, DType dtype) {
  if (out == nullptr) return false;
  const ValueState& st = L.V(out);
  return st.is_static && st.dims == dims && st.dtype == dtype && NumElements(dims) > 0;
}

// Elements the kernels move whole: not packed below a byte, 1 to 16 bytes.
bool MovableElements(DType t) { return !IsSubByte(t) && kernels::AxisIndexElementSize(ElementSize(t)); }

int64_t NormalizedAxis(const Node& n, int64_t rank) {
  int64_t axis = n.GetInt("axis", 0);
  return axis < 0 ? axis + rank : axis;
}

std::optional<kernels::ScatterReduction> ReductionOf(const Node& n) {
  return kernels::ScatterReductionOf(n.GetString("reduction", "none"));
}

// "[1, 0, 3]": where flat element `pos` sits in a tensor of `dims`.
std::string PositionOf(int64_t pos, const std::vector<int64_t>& dims) {
  std::vector<int64_t> at(dims.size(), 0);
  for (size_t d = dims.size(); d-- > 0;) {
    at[d] = dims[d] > 0 ? pos % dims[d] : 0;
    pos = dims[d] > 0 ? pos / dims[d] : 0;
  }
  return absl::StrCat("[", absl::StrJoin(at, ", "), "]");
}

// The error for the out-of-range index at flat position `pos` of the
// indices, which index the data's `axis` of extent `dim`.
absl::Status BadIndex(const std::string& where, const void* indices, size_t index_bytes, int64_t pos,
                      const std::vector<int64_t>& index_dims, int64_t axis, int64_t dim) {
  int64_t value = index_bytes == 4 ? static_cast<int64_t>(static_cast<const int32_t*>(indices)[pos])
                                   : static_cast<const int64_t*>(indices)[pos];
  return absl::InvalidArgumentError(absl::StrCat(where, ": index ", value, " at indices", PositionOf(pos, index_dims),
                                                 " is out of range [", -dim, ", ", dim, ") for axis ", axis,
                                                 " of the data"));
}

}  // namespace

// GatherElements(data, indices, axis): y[p] = data[p with axis <- indices[p]].
bool LowerGatherElements(Lowerer& L, const Node& n) {
  const Value* data = n.input(0);
  const Value* idx = n.num_inputs() > 1 ? n.input(1) : nullptr;
  if (!Readable(L, data) || !Readable(L, idx)) return false;
  DType dt = L.V(data).dtype;
  size_t index_bytes = IndexBytes(L, idx);
  const std::vector<int64_t>& dd = L.V(data).dims;
  const std::vector<int64_t>& id = L.V(idx).dims;
  int64_t axis = NormalizedAxis(n, static_cast<int64_t>(dd.size()));
  auto map = kernels::MakeAxisIndexMap(dd, id, axis);
  if (index_bytes == 0 || !MovableElements(dt) || !map || !Writable(L, n.output(0), id, dt)) return false;
  std::vector<int> ins = {L.PlainSlot(data), L.PlainSlot(idx)};
  int slot = NativeOutSlot(L, n.output(0));
  size_t elem_bytes = ElementSize(dt);
  std::string where = n.Describe();
  AddNativeStep(L, n, ins, slot, [=, m = std::move(*map)](const void* const* in, void* y) {
    int64_t bad = kernels::GatherElements(m, in[0], in[1], index_bytes, y, elem_bytes);
    if (bad >= 0) return BadIndex(where, in[1], index_bytes, bad, id, axis, m.axis_dim);
    return absl::OkStatus();
  })->kind = "gather_elements";
  return true;
}

// GatherND(data, indices, batch_dims): y[b, t, :] = data[b, indices[b, t], :].
bool LowerGatherND(Lowerer& L, const Node& n) {
  const Value* data = n.input(0);
  const Value* idx = n.num_inputs() > 1 ? n.input(1) : nullptr;
  if (!Readable(L, data) || !Readable(L, idx)) return false;
  DType dt = L.V(data).dtype;
  size_t index_bytes = IndexBytes(L, idx);
  const std::vector<int64_t>& dd = L.V(data).dims;
  const std::vector<int64_t>& id = L.V(idx).dims;
  int64_t batch_dims = n.GetInt("batch_dims", 0);
  auto map = kernels::MakeTupleIndexMap(dd, id, batch_dims);
  if (index_bytes == 0 || !MovableElements(dt) || !map) return false;
  std::vector<int64_t> want(id.begin(), id.end() - 1);
  want.insert(want.end(), dd.begin() + batch_dims + map->k, dd.end());
  if (!Writable(L, n.output(0), want, dt)) return false;
  std::vector<int> ins = {L.PlainSlot(data), L.PlainSlot(idx)};
  int slot = NativeOutSlot(L, n.output(0));
  size_t elem_bytes = ElementSize(dt);
  std::string where = n.Describe();
  AddNativeStep(L, n, ins, slot, [=, m = std::move(*map)](const void* const* in, void* y) {
    int64_t bad = kernels::GatherND(m, in[0], in[1], index_bytes, y, elem_bytes);
    if (bad < 0) return absl::OkStatus();
    int64_t j = bad % m.k;
    return BadIndex(where, in[1], index_bytes, bad, id, batch_dims + j, m.dims[j]);
  })->kind = "gather_nd";
  return true;
}

// The operands both scatters read: data, indices, updates, the element type,
// the index width and the reduction; nullopt when a lowering cannot take them.
struct ScatterOperands {
  const Value *data, *idx, *upd;
  DType dt;
  size_t index_bytes;
  kernels::ScatterReduction reduction;
};

std::optional<ScatterOperands> ReadScatterOperands(Lowerer& L, const Node& n) {
  if (n.num_inputs() < 3) return std::nullopt;
  ScatterOperands o{n.input(0), n.input(1), n.input(2), DType::kUndefined, 0, {}};
  if (!Readable(L, o.data) || !Readable(L, o.idx) || !Readable(L, o.upd)) return std::nullopt;
  o.dt = L.V(o.data).dtype;
  o.index_bytes = IndexBytes(L, o.idx);
  std::optional<kernels::ScatterReduction> r = ReductionOf(n);
  if (o.index_bytes == 0 || !r || !kernels::ScatterSupports(*r, o.dt) || L.V(o.upd).dtype != o.dt) return std::nullopt;
  o.reduction = *r;
  return o;
}

// The scatter's step over `run` (returns the position of a bad index, or -1).
template <typename Run>
bool EmitScatter(Lowerer& L, const Node& n, const ScatterOperands& o, const char* kind, Run run) {
  std::vector<int> ins = {L.PlainSlot(o.data), L.PlainSlot(o.idx), L.PlainSlot(o.upd)};
  int slot = NativeOutSlot(L, n.output(0));
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, ins, slot, std::move(run));
  step->kind = kind;
  // The output may take the data's bytes when the data dies here (no copy);
  // not when the data is also read as indices or updates.
  step->inplace_ok = o.upd != o.data && o.idx != o.data;
  return true;
}

// ScatterND(data, indices, updates, reduction): y = data; y[indices[t]] (r)= updates[t].
bool LowerScatterND(Lowerer& L, const Node& n) {
  std::optional<ScatterOperands> o = ReadScatterOperands(L, n);
  if (!o) return false;
  const std::vector<int64_t>& dd = L.V(o->data).dims;
  const std::vector<int64_t>& id = L.V(o->idx).dims;
  auto map = kernels::MakeTupleIndexMap(dd, id, 0);
  if (!map) return false;
  std::vector<int64_t> want(id.begin(), id.end() - 1);
  want.insert(want.end(), dd.begin() + map->k, dd.end());
  if (L.V(o->upd).dims != want || !Writable(L, n.output(0), dd, o->dt)) return false;
  int64_t count = NumElements(dd);
  std::string where = n.Describe();
  return EmitScatter(L, n, *o, "scatter_nd", [=, o = *o, m = std::move(*map)](const void* const* in, void* y) {
    int64_t bad = kernels::ScatterND(m, in[0], count, in[1], o.index_bytes, in[2], y, o.dt, o.reduction);
    if (bad < 0) return absl::OkStatus();
    int64_t j = bad % m.k;
    return BadIndex(where, in[1], o.index_bytes, bad, id, j, m.dims[j]);
  });
}

// ScatterElements / Scatter(data, indices, updates, axis, reduction):
// y = data; y[p with axis <- indices[p]] (r)= updates[p].
bool LowerScatterElements(Lowerer& L, const Node& n) {
  std::optional<ScatterOperands> o = ReadScatterOperands(L, n);
  if (!o) return false;
  const std::vector<int64_t>& dd = L.V(o->data).dims;
  const std::vector<int64_t>& id = L.V(o->idx).dims;
  int64_t axis = NormalizedAxis(n, static_cast<int64_t>(dd.size()));
  auto map = kernels::MakeAxisIndexMap(dd, id, axis);
  if (!map || L.V(o->upd).dims != id || !Writable(L, n.output(0), dd, o->dt)) return false;
  int64_t count = NumElements(dd);
  std::string where = n.Describe();
  return EmitScatter(L, n, *o, "scatter_elements", [=, o = *o, m = std::move(*map)](const void* const* in, void* y) {
    int64_t bad = kernels::ScatterElements(m, in[0], count, in[1], o.index_bytes, in[2], y, o.dt, o.reduction);
    if (bad >= 0) return BadIndex(where, in[1], o.index_bytes, bad, id, axis, m.axis_dim);
    return absl::OkStatus();
  });
}

}  // namespace aic::cpu

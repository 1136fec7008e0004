// Lowerings of QuantizeLinear / DequantizeLinear (opsets 10-21, per tensor or
// per axis, 8-bit integers) onto our own kernels (exec/cpu/kernels/quantize.h),
// with constant scales and zero points read once here. Blocked quantization
// (block_size), other integer widths and computed scales return false: the
// reference kernel runs them. Also ai.aic's QLinearLookup and QLinearAdd/Mul,
// the integer forms of a QDQ model's elementwise steps (byte_lookup.h,
// quantized_binary.h). All of them run in the layout their input arrives in
// when the map is elementwise (BlockedTwin).
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "exec/cpu/kernels/axis_lanes.h"
#include "exec/cpu/kernels/byte_lookup.h"
#include "exec/cpu/kernels/quantize.h"
#include "exec/cpu/kernels/quantized_binary.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

// The layout for the quantized tensor of dims `dims` from node n's scale
// (input 1) and zero point (input 2); false when not covered.
bool QuantLayoutOf(Lowerer& L, const Node& n, const std::vector<int64_t>& dims, kernels::QuantLayout* l) {
  const Tensor* scale = L.Const(n.input(1));
  const Tensor* zero = n.has_input(2) ? L.Const(n.input(2)) : nullptr;
  if (scale == nullptr || scale->dtype() != DType::kFloat || (n.has_input(2) && zero == nullptr)) return false;
  if (n.GetInt("block_size", 0) != 0 || NumElements(dims) == 0) return false;
  int64_t count = scale->num_elements();
  if (zero != nullptr && zero->num_elements() != count) return false;
  if (count == 1 && scale->rank() <= 1) {
    l->inner = NumElements(dims);
  } else {
    kernels::AxisLanes lanes;
    int64_t axis = 0;
    if (scale->rank() != 1 || !kernels::LanesAlong(dims, n.GetInt("axis", 1), &lanes, &axis) || lanes.dim != count) {
      return false;
    }
    l->outer = lanes.outer;
    l->channels = count;
    l->inner = lanes.inner;
  }
  for (int64_t c = 0; c < count; ++c) {
    l->scale.push_back(scale->data<float>()[c]);
    l->zero_point.push_back(zero != nullptr ? static_cast<float>(zero->ElementAsDouble(c)) : 0.0f);
  }
  return true;
}

// The layout of x's slot in data type `type`, when x is kept in a blocked
// layout without padding and quantized per tensor: an elementwise map then
// reads and writes the bytes in that order, so the value never visits plain
// form (a QLinearConv's blocked u8 output reaches DequantizeLinear, the float
// ops and QuantizeLinear of a residual add or an SE block, and the next
// QLinearConv, with no reorder). Padded layouts are refused: the padding
// would come out as f(0) instead of the zeros oneDNN expects there.
std::optional<memory::desc> BlockedTwin(Lowerer& L, const Value* x, memory::data_type type) {
  if (L.Const(x) != nullptr) return std::nullopt;
  const ValueState& st = L.V(x);
  if (st.slot < 0) return std::nullopt;
  const Slot& s = L.plan().slots[st.slot];
  if (s.plain || s.md.data.ndims != static_cast<int>(st.dims.size())) return std::nullopt;
  dnnl_memory_desc_t d = s.md.data;
  if (d.format_kind != dnnl_blocked || d.offset0 != 0 || d.extra.flags != 0) return std::nullopt;
  for (int i = 0; i < d.ndims; ++i) {
    if (d.padded_dims[i] != d.dims[i] || d.padded_offsets[i] != 0) return std::nullopt;
  }
  size_t in_elem = memory::data_type_size(s.md.data_type());
  if (s.md.get_size() != static_cast<size_t>(NumElements(st.dims)) * in_elem) return std::nullopt;  // dense
  d.data_type = static_cast<dnnl_data_type_t>(type);
  return memory::desc(d);
}

memory::data_type EightBitType(DType t) { return t == DType::kInt8 ? memory::data_type::s8 : memory::data_type::u8; }

// The slot for an elementwise step's output in x's blocked layout (`twin`),
// or a dense one.
int ElementwiseOutSlot(Lowerer& L, const Value* out, const std::optional<memory::desc>& twin) {
  if (!twin) return NativeOutSlot(L, out);
  int slot = L.NewArenaSlot(out, *twin, false);
  L.plan().slots[slot].dtype = L.V(out).dtype;
  return slot;
}

// Whether `md` is [N, C, H, W...] stored channels-last without blocking
// (C innermost): a per-channel value then repeats every C elements.
bool ChannelsLast(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.ndims < 3 || d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0) return false;
  const dnnl_dims_t& st = d.format_desc.blocking.strides;
  if (st[1] != 1) return false;
  int64_t expect = d.dims[1];
  for (int i = d.ndims - 1; i >= 2; --i) {
    if (st[i] != expect) return false;
    expect *= d.dims[i];
  }
  return st[0] == expect;
}

}  // namespace

bool LowerQLinearLookup(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  const Tensor* table = L.Const(n.input(1));
  if (!NativeReady(L, x) || !IsEightBitInteger(L.V(x).dtype) || out == nullptr || !IsEightBitInteger(L.V(out).dtype) ||
      table == nullptr || table->num_elements() != 256 || !IsEightBitInteger(table->dtype()) ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  std::optional<memory::desc> twin = BlockedTwin(L, x, EightBitType(L.V(out).dtype));
  int in = twin ? L.V(x).slot : L.PlainSlot(x);
  int slot = ElementwiseOutSlot(L, out, twin);
  if (slot < 0) return false;
  std::vector<uint8_t> bytes(256);
  std::memcpy(bytes.data(), table->raw_data(), 256);
  const bool signed_index = L.V(x).dtype == DType::kInt8;
  const int64_t count = NumElements(L.V(x).dims);
  AddNativeStep(L, n, {in}, slot, [bytes, signed_index, count](const void* const* i, void* y) {
    kernels::LookupBytes(static_cast<const uint8_t*>(i[0]), static_cast<uint8_t*>(y), count, bytes.data(),
                         signed_index);
    return absl::OkStatus();
  })->kind = "lookup";
  return true;
}

bool LowerQLinearBinary(Lowerer& L, const Node& n) {
  if (n.num_inputs() < 8) return false;
  kernels::QuantizedBinary p;
  p.add = n.op_type == "QLinearAdd";
  p.relu = n.GetInt("fuse_relu", 0) != 0;
  float* params[] = {&p.a_scale, &p.a_zero, nullptr, &p.b_scale, &p.b_zero, &p.y_scale, &p.y_zero};
  const size_t param_inputs[] = {1, 2, 0, 4, 5, 6, 7};
  for (size_t k = 0; k < 7; ++k) {
    if (params[k] == nullptr) continue;
    const Tensor* t = L.Const(n.input(param_inputs[k]));
    bool is_scale = k == 0 || k == 3 || k == 5;
    if (t == nullptr || t->num_elements() != 1 || (is_scale ? t->dtype() != DType::kFloat : !IsEightBitInteger(t->dtype()))) {
      return false;
    }
    *params[k] = static_cast<float>(t->ElementAsDouble(0));
  }
  const Value* a = n.input(0);
  const Value* b = n.input(3);
  const Value* out = n.output(0);
  if (!NativeReady(L, a) || !NativeReady(L, b) || !IsEightBitInteger(L.V(a).dtype) || !IsEightBitInteger(L.V(b).dtype) ||
      out == nullptr || !IsEightBitInteger(L.V(out).dtype)) {
    return false;
  }
  // The full operand first: Add and Mul commute bitwise in IEEE arithmetic.
  const std::vector<int64_t>& ydims = L.V(out).dims;
  if (L.V(a).dims != ydims) {
    std::swap(a, b);
    std::swap(p.a_scale, p.b_scale);
    std::swap(p.a_zero, p.b_zero);
  }
  const std::vector<int64_t>& adims = L.V(a).dims;
  const std::vector<int64_t>& bdims = L.V(b).dims;
  if (adims != ydims) return false;
  p.a_signed = L.V(a).dtype == DType::kInt8;
  p.b_signed = L.V(b).dtype == DType::kInt8;
  p.y_signed = L.V(out).dtype == DType::kInt8;
  std::optional<memory::desc> twin = BlockedTwin(L, a, EightBitType(L.V(out).dtype));
  int a_slot = -1, b_slot = -1;
  if (bdims == ydims) {
    // Elementwise over bytes: in a's layout when b is in the same one.
    const ValueState& bs = L.V(b);
    if (twin && (bs.slot < 0 || L.plan().slots[bs.slot].md != L.plan().slots[L.V(a).slot].md)) twin.reset();
    a_slot = twin ? L.V(a).slot : L.PlainSlot(a);
    b_slot = twin ? bs.slot : L.PlainSlot(b);
  } else {
    // b varies along one run of consecutive axes [first, last] of y, where
    // it has y's dims (or nowhere: a scalar); 1 elsewhere.
    std::optional<std::vector<int64_t>> padded = BroadcastDims(bdims, ydims);
    if (!padded) return false;
    int first = -1, last = -1;
    for (size_t i = 0; i < padded->size(); ++i) {
      if ((*padded)[i] == 1) continue;
      if (first < 0) first = static_cast<int>(i);
      last = static_cast<int>(i);
    }
    p.b_broadcast = true;
    p.b_count = 1;
    for (int i = first; first >= 0 && i <= last; ++i) {
      if ((*padded)[i] != ydims[i]) return false;  // broadcast between varying axes: not covered
      p.b_count *= ydims[i];
    }
    // A scalar b reads the same in any layout; a per-channel one follows a
    // plain or channels-last a.
    const bool channels_last =
        twin && first == 1 && last == 1 && ChannelsLast(L.plan().slots[L.V(a).slot].md);
    if (twin && first >= 0 && !channels_last) twin.reset();
    p.b_inner = 1;
    if (first < 0) {
      p.b_inner = NumElements(ydims);
    } else if (!channels_last) {
      for (size_t i = static_cast<size_t>(last) + 1; i < ydims.size(); ++i) p.b_inner *= ydims[i];
    }
    a_slot = twin ? L.V(a).slot : L.PlainSlot(a);
    b_slot = L.PlainSlot(b);
  }
  int slot = ElementwiseOutSlot(L, out, twin);
  if (slot < 0) return false;
  const int64_t count = NumElements(ydims);
  AddNativeStep(L, n, {a_slot, b_slot}, slot, [p, count](const void* const* i, void* y) {
    kernels::RunQuantizedBinary(p, i[0], i[1], y, count);
    return absl::OkStatus();
  })->kind = p.add ? "qadd" : "qmul";
  return true;
}

bool LowerQuantizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !NativeReady(L, x) || out == nullptr || !IsEightBitInteger(L.V(out).dtype) ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  kernels::QuantLayout layout;
  if (!QuantLayoutOf(L, n, L.V(x).dims, &layout)) return false;
  bool is_signed = L.V(out).dtype == DType::kInt8;
  std::optional<memory::desc> twin;
  if (layout.channels == 1) twin = BlockedTwin(L, x, EightBitType(L.V(out).dtype));
  int in = twin ? L.V(x).slot : L.PlainSlot(x);
  int slot = ElementwiseOutSlot(L, out, twin);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [layout, is_signed](const void* const* i, void* y) {
    kernels::QuantizeF32(static_cast<const float*>(i[0]), y, is_signed, layout);
    return absl::OkStatus();
  })->kind = "quantize";
  return true;
}

bool LowerDequantizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!NativeReady(L, x) || !IsEightBitInteger(L.V(x).dtype) || out == nullptr || !L.IsF32(out) ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  kernels::QuantLayout layout;
  if (!QuantLayoutOf(L, n, L.V(x).dims, &layout)) return false;
  bool is_signed = L.V(x).dtype == DType::kInt8;
  std::optional<memory::desc> twin;
  if (layout.channels == 1) twin = BlockedTwin(L, x, memory::data_type::f32);
  int in = twin ? L.V(x).slot : L.PlainSlot(x);
  int slot = ElementwiseOutSlot(L, out, twin);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [layout, is_signed](const void* const* i, void* y) {
    kernels::DequantizeToF32(i[0], is_signed, static_cast<float*>(y), layout);
    return absl::OkStatus();
  })->kind = "dequantize";
  return true;
}

}  // namespace aic::cpu

// Lowerings of QuantizeLinear / DequantizeLinear (opsets 10-21, per tensor or
// per axis, 8-bit integers) onto our own kernels (exec/cpu/kernels/quantize.h),
// with constant scales and zero points read once here. Blocked quantization
// (block_size), other integer widths and computed scales return false: the
// reference kernel runs them.
#include <vector>

#include "exec/cpu/kernels/axis_lanes.h"
#include "exec/cpu/kernels/quantize.h"
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

bool IsEightBit(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

}  // namespace

bool LowerQuantizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (!L.IsF32(x) || !NativeReady(L, x) || out == nullptr || !IsEightBit(L.V(out).dtype) ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  kernels::QuantLayout layout;
  if (!QuantLayoutOf(L, n, L.V(x).dims, &layout)) return false;
  bool is_signed = L.V(out).dtype == DType::kInt8;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
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
  if (!NativeReady(L, x) || !IsEightBit(L.V(x).dtype) || out == nullptr || !L.IsF32(out) ||
      L.V(out).dims != L.V(x).dims) {
    return false;
  }
  kernels::QuantLayout layout;
  if (!QuantLayoutOf(L, n, L.V(x).dims, &layout)) return false;
  bool is_signed = L.V(x).dtype == DType::kInt8;
  int in = L.PlainSlot(x);
  int slot = NativeOutSlot(L, out);
  if (slot < 0) return false;
  AddNativeStep(L, n, {in}, slot, [layout, is_signed](const void* const* i, void* y) {
    kernels::DequantizeToF32(i[0], is_signed, static_cast<float*>(y), layout);
    return absl::OkStatus();
  })->kind = "dequantize";
  return true;
}

}  // namespace aic::cpu

#include "exec/cpu/fast_fallback.h"

#include <cstring>

#include "exec/cpu/dynamic_gemm.h"
#include "exec/cpu/kernels/broadcast.h"
#include "exec/cpu/kernels/roi_align.h"
#include "exec/cpu/kernels/scatter.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"

namespace aic::cpu {

namespace {

absl::StatusOr<std::optional<Tensor>> Gemm(const Node& node, int64_t, const std::vector<const RuntimeValue*>& in) {
  return RunDynamicGemm(node, in);
}

const Tensor* TensorOf(const std::vector<const RuntimeValue*>& in, size_t i, DType dtype) {
  if (i >= in.size() || in[i] == nullptr || !in[i]->is_tensor() || in[i]->tensor.dtype() != dtype) return nullptr;
  return &in[i]->tensor;
}

absl::StatusOr<std::optional<Tensor>> RoiAlign(const Node& node, int64_t opset,
                                               const std::vector<const RuntimeValue*>& in) {
  const Tensor* x = TensorOf(in, 0, DType::kFloat);
  const Tensor* rois = TensorOf(in, 1, DType::kFloat);
  const Tensor* batch = TensorOf(in, 2, DType::kInt64);
  if (x == nullptr || rois == nullptr || batch == nullptr || x->rank() != 4 || rois->rank() != 2 ||
      rois->dim(1) != 4 || batch->num_elements() != rois->dim(0)) {
    return std::optional<Tensor>();  // the reference kernel reports what is wrong
  }
  const RoiAlignParams params = RoiAlignParams::Of(node, opset);
  kernels::RoiAlignShape shape{x->dim(0), x->dim(1), x->dim(2), x->dim(3), rois->dim(0)};
  Tensor y(DType::kFloat, {shape.regions, shape.channels, params.out_h, params.out_w});
  // A batch index out of range: the reference kernel reports it, naming the node.
  if (!kernels::RoiAlignF32(x->data<float>(), rois->data<float>(), batch->data<int64_t>(), y.mutable_data<float>(),
                            shape, params)
           .ok()) {
    return std::optional<Tensor>();
  }
  return std::optional<Tensor>(std::move(y));
}

std::optional<std::vector<int64_t>> Int64Values(const RuntimeValue* v) {
  if (v == nullptr || !v->is_tensor() || v->tensor.dtype() != DType::kInt64 || v->tensor.rank() > 1) {
    return std::nullopt;
  }
  const int64_t* p = v->tensor.data<int64_t>();
  return std::vector<int64_t>(p, p + v->tensor.num_elements());
}

bool Movable(const Tensor& t) {
  const int64_t size = static_cast<int64_t>(ElementSize(t.dtype()));
  return t.dtype() != DType::kString && !IsSubByte(t.dtype()) && kernels::CopyRowKernel(size) != nullptr;
}

// Expand(x, shape): x broadcast to broadcast(x.shape, shape), the backend's
// one-operand broadcast loop.
absl::StatusOr<std::optional<Tensor>> Expand(const Node&, int64_t, const std::vector<const RuntimeValue*>& in) {
  std::optional<std::vector<int64_t>> shape = Int64Values(in.size() > 1 ? in[1] : nullptr);
  if (in.empty() || in[0] == nullptr || !in[0]->is_tensor() || !shape) return std::optional<Tensor>();
  const Tensor& x = in[0]->tensor;
  if (!Movable(x)) return std::optional<Tensor>();
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({x.dims(), *shape});
  if (!dims.ok()) return std::optional<Tensor>();  // the reference kernel reports it
  const int64_t size = static_cast<int64_t>(ElementSize(x.dtype()));
  auto loop = kernels::MakeBroadcastLoop(*dims, {x.dims()}, {size}, size);
  if (!loop) return std::optional<Tensor>();
  Tensor y(x.dtype(), *dims);
  const void* src[1] = {x.raw_data()};
  if (y.num_elements() > 0) kernels::RunBroadcast(*loop, src, y.mutable_raw_data(), kernels::CopyRowKernel(size));
  return std::optional<Tensor>(std::move(y));
}

// ConstantOfShape(shape): the value attribute's one element everywhere.
absl::StatusOr<std::optional<Tensor>> ConstantOfShape(const Node& node, int64_t,
                                                      const std::vector<const RuntimeValue*>& in) {
  std::optional<std::vector<int64_t>> dims = Int64Values(in.empty() ? nullptr : in[0]);
  if (!dims) return std::optional<Tensor>();
  for (int64_t d : *dims) {
    if (d < 0) return std::optional<Tensor>();
  }
  // A value attribute of other than one element is the reference's error to report.
  if (const Attribute* a = node.FindAttr("value"); a != nullptr && a->t.num_elements() != 1) {
    return std::optional<Tensor>();
  }
  const Tensor value = ConstantOfShapeFill(node);
  if (value.dtype() == DType::kString || IsSubByte(value.dtype())) {
    return std::optional<Tensor>();
  }
  Tensor y(value.dtype(), *dims);  // zeroed
  const size_t size = ElementSize(value.dtype());
  const auto* v = static_cast<const uint8_t*>(value.raw_data());
  bool zero = true;
  for (size_t i = 0; i < size; ++i) zero = zero && v[i] == 0;
  if (!zero && y.num_elements() > 0) {
    auto* out = static_cast<uint8_t*>(y.mutable_raw_data());
    std::memcpy(out, v, size);
    // Doubling copies: each pass copies what is filled so far.
    for (size_t filled = size, total = y.byte_size(); filled < total; filled *= 2) {
      std::memcpy(out + filled, out, std::min(filled, total - filled));
    }
  }
  return std::optional<Tensor>(std::move(y));
}

// ScatterElements / Scatter: the backend's kernel, index order kept; a bad
// index leaves it to the reference kernel, which reports it.
absl::StatusOr<std::optional<Tensor>> ScatterElements(const Node& node, int64_t,
                                                      const std::vector<const RuntimeValue*>& in) {
  for (size_t i = 0; i < 3; ++i) {
    if (i >= in.size() || in[i] == nullptr || !in[i]->is_tensor()) return std::optional<Tensor>();
  }
  const Tensor& data = in[0]->tensor;
  const Tensor& idx = in[1]->tensor;
  const Tensor& upd = in[2]->tensor;
  const size_t index_bytes = idx.dtype() == DType::kInt64 ? 8 : idx.dtype() == DType::kInt32 ? 4 : 0;
  std::optional<kernels::ScatterReduction> r = kernels::ScatterReductionOf(node.GetString("reduction", "none"));
  if (index_bytes == 0 || !r || upd.dtype() != data.dtype() || upd.dims() != idx.dims() ||
      idx.rank() != data.rank() || data.rank() == 0 || !kernels::ScatterSupports(*r, data.dtype())) {
    return std::optional<Tensor>();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(node.GetInt("axis", 0), data.rank());
  if (!axis.ok()) return std::optional<Tensor>();
  auto map = kernels::MakeAxisIndexMap(data.dims(), idx.dims(), *axis);
  if (!map) return std::optional<Tensor>();
  Tensor y(data.dtype(), data.dims());
  int64_t bad = kernels::ScatterElements(*map, data.raw_data(), data.num_elements(), idx.raw_data(), index_bytes,
                                         upd.raw_data(), y.mutable_raw_data(), data.dtype(), *r);
  if (bad >= 0) return std::optional<Tensor>();
  return std::optional<Tensor>(std::move(y));
}

}  // namespace

const FastFallback* FindFastFallback(const Node& node) {
  static const FastFallback kGemm{"dynamic_gemm", Gemm};
  static const FastFallback kRoiAlign{"roi_align", RoiAlign};
  static const FastFallback kExpand{"expand", Expand};
  static const FastFallback kConstantOfShape{"fill", ConstantOfShape};
  static const FastFallback kScatterElements{"scatter_elements", ScatterElements};
  if (IsDynamicGemmOp(node)) return &kGemm;
  if (!node.domain.empty()) return nullptr;
  if (node.op_type == "RoiAlign") return &kRoiAlign;
  if (node.op_type == "Expand") return &kExpand;
  if (node.op_type == "ConstantOfShape") return &kConstantOfShape;
  if (node.op_type == "ScatterElements" || node.op_type == "Scatter") return &kScatterElements;
  return nullptr;
}

}  // namespace aic::cpu

// Scatter ops: the writes that mirror the gathers (Scatter, ScatterElements,
// ScatterND), with the reductions opsets 16/18 added (add, mul, max, min).
// Each op reduces to a list of (destination, source, length) runs applied in
// order to a copy of the data, so duplicate indices behave as the ONNX
// reference does (later updates win, or accumulate under a reduction).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

struct Run {
  int64_t dst, src, count;
};

// Applies the runs to a copy of `data`: plain writes, or a reduction.
absl::Status ApplyRuns(KernelContext& ctx, const Tensor& data, const Tensor& updates,
                       const std::vector<Run>& runs) {
  std::string reduction = ctx.node().GetString("reduction", "none");
  if (reduction == "none") {
    if (!IsCopyableDType(data.dtype())) return ctx.Unimplemented("dtype ", DTypeName(data.dtype()));
    Tensor out = data.Clone();
    for (const Run& r : runs) CopyElements(updates, r.src, out, r.dst, r.count);
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  if (reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    return ctx.Error("unknown reduction '", reduction, "'");
  }
  Tensor out = WidenToFloat(data).Clone();
  Tensor upd = WidenToFloat(updates);
  absl::Status s = DispatchNumeric(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.mutable_data<T>();
    const T* u = upd.data<T>();
    for (const Run& r : runs) {
      for (int64_t k = 0; k < r.count; ++k) {
        T& d = o[r.dst + k];
        T v = u[r.src + k];
        if (reduction == "add") d = static_cast<T>(d + v);
        else if (reduction == "mul") d = static_cast<T>(d * v);
        else if (reduction == "max") d = std::max(d, v);
        else d = std::min(d, v);
      }
    }
  });
  if (!s.ok()) return ctx.Unimplemented(s.message());
  ctx.set_output(0, NarrowFromFloat(out, data.dtype()));
  return absl::OkStatus();
}

absl::Status InferLikeData(OpContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

// Scatter (opset 9, deprecated at 11) and ScatterElements.
absl::Status ScatterElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  if (indices.dims() != updates.dims() || indices.rank() != data.rank()) {
    return ctx.Error("indices and updates must have the same shape, of data's rank");
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> idx = TensorToInt64s(indices);
  std::vector<int64_t> strides = ContiguousStrides(data.dims());
  std::vector<Run> runs;
  runs.reserve(idx.size());
  std::vector<int64_t> pos(static_cast<size_t>(indices.rank()), 0);
  int64_t d = data.dim(*axis);
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t v = idx[i];
    if (v < -d || v >= d) return ctx.Error("index ", v, " out of range for dim ", d);
    if (v < 0) v += d;
    for (int64_t k = 0; k < indices.rank(); ++k) {
      if (k != *axis && pos[k] >= data.dim(k)) return ctx.Error("indices exceed data's shape");
    }
    runs.push_back({OffsetOf(pos, strides) + (v - pos[*axis]) * strides[*axis], i, 1});
    NextIndex(pos, indices.dims());
  }
  return ApplyRuns(ctx, data, updates, runs);
}

absl::Status ScatterNDKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  if (indices.rank() < 1) return ctx.Error("indices must have rank ≥ 1");
  int64_t k = indices.dim(indices.rank() - 1);
  if (k > data.rank()) return ctx.Error("index tuples longer than data's rank");
  std::vector<int64_t> expect(indices.dims().begin(), indices.dims().end() - 1);
  expect.insert(expect.end(), data.dims().begin() + k, data.dims().end());
  if (updates.dims() != expect) {
    return ctx.Error("updates shape ", DimsToString(updates.dims()), ", expected ", DimsToString(expect));
  }
  std::vector<int64_t> idx = TensorToInt64s(indices);
  std::vector<int64_t> strides = ContiguousStrides(data.dims());
  int64_t slice = 1;
  for (int64_t i = k; i < data.rank(); ++i) slice *= data.dim(i);
  int64_t tuples = k > 0 ? static_cast<int64_t>(idx.size()) / k : NumElements(expect) / std::max<int64_t>(slice, 1);
  std::vector<Run> runs;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = idx[t * k + j], d = data.dim(j);
      if (v < -d || v >= d) return ctx.Error("index ", v, " out of range for dim ", d);
      dst += (v < 0 ? v + d : v) * strides[j];
    }
    runs.push_back({dst, t * slice, slice});
  }
  return ApplyRuns(ctx, data, updates, runs);
}

// Scatter overwrites some elements of x with updates: linear in (x, updates),
// discards the overwritten values.
TraitsFn ScatterTraits(std::string semantic, std::string meaning) {
  return [=](const OpContext& ctx) {
    std::string reduction = ctx.node().GetString("reduction", "none");
    Traits t = SelectTraits(ctx, semantic, meaning, false, "overwritten elements of x are discarded");
    t.effect = RepresentationEffect::kPreserves;
    if (reduction == "max" || reduction == "min" || reduction == "mul") {
      t.linearity = Linearity::kNonlinear;
    }
    if (reduction != "none") t.meaning += absl::StrCat(" (", reduction, ")");
    return t;
  };
}

}  // namespace

void RegisterScatterOps(OpRegistry& r) {
  r.Register(MakeOp("Scatter", 9, InferLikeData,
                    ScatterTraits("Scatter", "y = x; y[i with axis ← indices[i]] = updates[i]"),
                    nullptr, ScatterElementsKernel));
  r.Register(MakeOp("ScatterElements", 11, InferLikeData,
                    ScatterTraits("ScatterElements",
                                  "y = x; y[i with axis ← indices[i]] = updates[i]"),
                    nullptr, ScatterElementsKernel));
  r.Register(MakeOp("ScatterND", 11, InferLikeData,
                    ScatterTraits("ScatterND", "y = x; y[indices[i]] = updates[i]"), nullptr,
                    ScatterNDKernel));
}

}  // namespace aic

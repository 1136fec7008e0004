// Pad and CenterCropPad: grow (or, with negative pads, crop) a tensor along
// its axes. Pads moved from attribute to input at opset 11, and gained `axes`
// at 18. Border modes: constant, reflect (mirror without repeating the edge),
// edge (repeat the edge), wrap (periodic).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/pad_params.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

absl::Status InferPad(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  std::string mode = ctx.node().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return ctx.Error("unknown mode '", mode, "'");
  }
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  auto pads = PadsOf(ctx.node(), ctx.opset(), in.rank(), [&](size_t i) { return ConstantInts(ctx, i); });
  if (!pads.ok()) return ctx.Error(pads.status().message());
  std::vector<Dim> dims = in.dims();
  if (!pads->has_value()) {
    for (Dim& d : dims) d = ctx.FreshDim();
    ctx.set_output(0, dt, Shape(dims));
    return absl::OkStatus();
  }
  const std::vector<std::pair<int64_t, int64_t>>* per_axis = &**pads;
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t grow = (*per_axis)[k].first + (*per_axis)[k].second;
    if (dims[k].is_value()) {
      if (dims[k].value() + grow < 0) return ctx.Error("pads crop axis ", k, " below zero");
      dims[k] = Dim(dims[k].value() + grow);
    } else if ((*per_axis)[k].first != 0 || (*per_axis)[k].second != 0) {
      dims[k] = ctx.FreshDim();
    }
  }
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

// Where output position i of an axis (input extent d, `begin` pads before)
// reads from, or -1 for the constant.
int64_t SourceIndex(int64_t i, int64_t begin, int64_t d, const std::string& mode) {
  int64_t s = i - begin;
  if (s >= 0 && s < d) return s;
  if (mode == "constant" || d == 0) return -1;
  if (mode == "edge") return std::clamp<int64_t>(s, 0, d - 1);
  if (mode == "wrap") return ((s % d) + d) % d;
  if (d == 1) return 0;  // reflect
  int64_t period = 2 * (d - 1);
  s = ((s % period) + period) % period;
  return s < d ? s : period - s;
}

absl::Status PadKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsCopyableDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  std::string mode = ctx.node().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return ctx.Error("unknown mode '", mode, "'");
  }
  auto pads = PadsOf(ctx.node(), ctx.opset(), x.rank(), [&](size_t i) -> std::optional<std::vector<int64_t>> {
    return TensorToInt64s(ctx.input(i));
  });
  if (!pads.ok()) return ctx.Error(pads.status().message());
  if (!pads->has_value()) return ctx.Error("pads not given");
  const std::vector<std::pair<int64_t, int64_t>>* per_axis = &**pads;
  // The fill value, as a one-element tensor of x's dtype.
  Tensor fill;
  if (ctx.opset() < 11) {
    fill = ConvertTensor(Tensor::Scalar<float>(ctx.node().GetFloat("value", 0.f)), x.dtype());
  } else if (ctx.has_input(2) && ctx.input(2).num_elements() > 0) {
    fill = ctx.input(2);
    if (fill.dtype() != x.dtype()) return ctx.Error("constant_value dtype differs from data");
  } else {
    fill = Tensor(x.dtype(), {});
  }
  std::vector<int64_t> dims = x.dims();
  for (size_t k = 0; k < dims.size(); ++k) {
    dims[k] += (*per_axis)[k].first + (*per_axis)[k].second;
    if (dims[k] < 0) return ctx.Error("pads crop axis ", k, " below zero");
    if (mode != "constant" && x.dim(k) == 0 && dims[k] > 0) {
      return ctx.Error("cannot ", mode, "-pad an empty axis");
    }
  }
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  Tensor out(x.dtype(), dims);
  if (out.num_elements() > 0) {
    std::vector<int64_t> idx(dims.size(), 0);
    int64_t o = 0;
    do {
      int64_t src = 0;
      for (size_t k = 0; k < idx.size() && src >= 0; ++k) {
        int64_t s = SourceIndex(idx[k], (*per_axis)[k].first, x.dim(k), mode);
        src = s < 0 ? -1 : src + s * strides[k];
      }
      if (src >= 0) {
        CopyElement(x, src, out, o);
      } else {
        CopyElement(fill, 0, out, o);
      }
      ++o;
    } while (NextIndex(idx, dims));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

Traits PadTraits(const OpContext& ctx) {
  std::string mode = ctx.node().GetString("mode", "constant");
  Traits t;
  t.semantic_name = "Pad";
  t.meaning = absl::StrCat("y = pad(x, pads, mode=", mode, ")");
  // Constant padding with a nonzero value is affine; every mode copies x
  // linearly otherwise. Negative pads crop (discard elements).
  t.linearity = mode == "constant" ? Linearity::kAffine : Linearity::kLinear;
  t.invertibility = Invertibility::kInvertible;
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = ShapeChange(ctx);
  const Shape& in = ctx.input_shape(0);
  auto pads = PadsOf(ctx.node(), ctx.opset(), in.has_rank() ? in.rank() : -1,
                     [&](size_t i) { return ConstantInts(ctx, i); });
  bool crops = false;
  if (pads.ok() && pads->has_value()) {
    for (const auto& [before, after] : **pads) crops = crops || before < 0 || after < 0;
  }
  if (crops) {
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kSelects;
    t.collapse_how = "negative pads crop elements";
    t.effect = RepresentationEffect::kRestricts;
  }
  t.removable_when = "all pads are zero";
  t.fuses_with = {"Conv", "AveragePool", "MaxPool"};
  return t;
}

// ---- CenterCropPad ----

absl::Status InferCenterCropPad(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> shape = ConstantInts(ctx, 1);
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<int64_t> axes = ctx.node().GetInts("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < in.rank(); ++i) axes.push_back(i);
  }
  auto norm = NormalizeAxes(axes, in.rank());
  if (!norm.ok()) return ctx.Error(norm.status().message());
  std::vector<Dim> dims = in.dims();
  if (shape && shape->size() != norm->size()) return ctx.Error("shape and axes differ in length");
  for (size_t i = 0; i < norm->size(); ++i) dims[(*norm)[i]] = shape ? Dim((*shape)[i]) : ctx.FreshDim();
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status CenterCropPadKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsCopyableDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  std::vector<int64_t> shape = TensorToInt64s(ctx.input(1));
  std::vector<int64_t> axes = ctx.node().GetInts("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < x.rank(); ++i) axes.push_back(i);
  }
  auto norm = NormalizeAxes(axes, x.rank());
  if (!norm.ok()) return ctx.Error(norm.status().message());
  if (shape.size() != norm->size()) return ctx.Error("shape and axes differ in length");
  std::vector<int64_t> dims = x.dims();
  std::vector<int64_t> shift(dims.size(), 0);  // input index = output index + shift
  for (size_t i = 0; i < norm->size(); ++i) {
    int64_t a = (*norm)[i], d = x.dim(a), s = shape[i];
    if (s < 0) return ctx.Error("negative target size");
    dims[a] = s;
    shift[a] = d >= s ? (d - s) / 2 : -((s - d) / 2);
  }
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  ctx.set_output(0, Remap(x, dims, [&](const std::vector<int64_t>& idx) -> int64_t {
                   int64_t src = 0;
                   for (size_t k = 0; k < idx.size(); ++k) {
                     int64_t s = idx[k] + shift[k];
                     if (s < 0 || s >= x.dim(k)) return -1;
                     src += s * strides[k];
                   }
                   return src;
                 }));
  return absl::OkStatus();
}

}  // namespace

void RegisterPadOps(OpRegistry& r) {
  r.Register(MakeOp("Pad", 1, InferPad, PadTraits, nullptr, PadKernel));
  r.Register(MakeOp(
      "CenterCropPad", 18, InferCenterCropPad,
      [](const OpContext& ctx) {
        const TypeInfo& in = ctx.input_type(0);
        const TypeInfo& out = ctx.output_type(0);
        auto ni = in.is_tensor() ? in.shape.NumElements() : std::nullopt;
        auto no = out.is_tensor() ? out.shape.NumElements() : std::nullopt;
        bool keeps_all = ni && no && *no >= *ni;
        Traits t = SelectTraits(ctx, "CenterCropPad", "y = center crop or zero-pad x to shape",
                                keeps_all, "the border outside the crop is discarded");
        t.removable_when = "shape equals the input shape";
        return t;
      },
      nullptr, CenterCropPadKernel));
}

}  // namespace aic

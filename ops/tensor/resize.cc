// Resize and Upsample. The reference kernel follows ONNX's own numpy
// reference (onnx/backend/test/case/node/resize.py): interpolation is
// separable, so each axis turns every output index into a few weighted taps
// on the input (1 for nearest, 2 for linear, 4 for cubic, more with
// antialias), computed in double exactly as the reference does (including its
// "ratio = 1 on integer coordinates" convention and edge clamping); an
// output element is the sum over tap combinations of weight products.
// Opset differences: 10 has only scales (asymmetric coordinates, floor
// rounding, like Upsample); 11 adds roi/sizes and the coordinate modes; 13
// makes roi/scales optional; 18 adds axes, antialias, keep_aspect_ratio_policy.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/resize_params.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

// Per-axis scales and output sizes of a full-rank resize, from whichever of
// scales/sizes is given. `in` is the input extent (rank entries).
struct Plan {
  std::vector<double> scales;
  std::vector<int64_t> sizes;
};

absl::StatusOr<Plan> PlanResize(const std::vector<int64_t>& in, const ResizeAttrs& a,
                                const std::vector<float>* scales_in,
                                const std::vector<int64_t>* sizes_in) {
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = a.axes;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  AIC_ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank));
  Plan p;
  p.scales.assign(static_cast<size_t>(rank), 1.0);
  p.sizes = in;
  if (sizes_in != nullptr) {
    if (sizes_in->size() != axes.size()) {
      return absl::InvalidArgumentError(absl::StrCat("sizes has ", sizes_in->size(), " entries for ", axes.size(), " axes"));
    }
    if (a.aspect_policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        p.sizes[axes[i]] = (*sizes_in)[i];
        p.scales[axes[i]] = static_cast<double>((*sizes_in)[i]) / static_cast<double>(in[axes[i]]);
      }
    } else {
      double scale = a.aspect_policy == "not_larger" ? INFINITY : -INFINITY;
      for (size_t i = 0; i < axes.size(); ++i) {
        double s = static_cast<double>((*sizes_in)[i]) / static_cast<double>(in[axes[i]]);
        scale = a.aspect_policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (int64_t ax : axes) {
        p.scales[ax] = scale;
        p.sizes[ax] = static_cast<int64_t>(std::nearbyint(scale * static_cast<double>(in[ax])));
      }
    }
  } else if (scales_in != nullptr) {
    if (scales_in->size() != axes.size()) {
      return absl::InvalidArgumentError(absl::StrCat("scales has ", scales_in->size(), " entries for ", axes.size(), " axes"));
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      double s = (*scales_in)[i];
      if (!(s > 0)) return absl::InvalidArgumentError(absl::StrCat("scale ", s, " must be positive"));
      p.scales[axes[i]] = s;
      p.sizes[axes[i]] = static_cast<int64_t>(s * static_cast<double>(in[axes[i]]));
    }
  } else {
    return absl::InvalidArgumentError("neither scales nor sizes is given");
  }
  for (int64_t s : p.sizes) {
    if (s < 0) return absl::InvalidArgumentError("negative output size");
  }
  return p;
}

std::vector<float> FloatsOf(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(static_cast<float>(t.ElementAsDouble(i)));
  return v;
}

// ---- inference ----

InferFn InferResize(bool is_upsample) {
  return [is_upsample](OpContext& ctx) -> absl::Status {
    const Shape& in = ctx.input_shape(0);
    DType dt = ctx.input_dtype(0);
    ResizeAttrs a = ResizeAttrsOf(ctx.node(), ctx.opset());
    if (absl::Status s = ValidateResizeAttrs(a); !s.ok()) return ctx.Error(s.message());
    if (!in.has_rank()) {
      ctx.set_output(0, dt, Shape::UnknownRank());
      return absl::OkStatus();
    }
    ResizeInputs io = ResizeInputsOf(ctx.node(), ctx.opset());
    std::optional<std::vector<float>> scales;
    std::optional<std::vector<int64_t>> sizes;
    bool unknown = false;
    if (is_upsample && io.scales < 0) {
      scales = ctx.node().GetFloats("scales");
    } else if (io.scales >= 0 && ctx.has_input(io.scales)) {
      const Tensor* t = ctx.input_constant(io.scales);
      if (t == nullptr) {
        unknown = !(ctx.input_shape(io.scales).NumElements() == 0);
      } else if (t->num_elements() > 0) {
        scales = FloatsOf(*t);
      }
    }
    if (io.sizes >= 0 && ctx.has_input(io.sizes)) {
      const Tensor* t = ctx.input_constant(io.sizes);
      if (t == nullptr) {
        unknown = true;
      } else if (t->num_elements() > 0) {
        sizes = TensorToInt64s(*t);
      }
    }
    std::vector<Dim> dims = in.dims();
    bool all_known = std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_value(); });
    if (unknown || (!scales && !sizes)) {
      for (Dim& d : dims) d = ctx.FreshDim();
      ctx.set_output(0, dt, Shape(dims));
      return absl::OkStatus();
    }
    if (all_known) {
      std::vector<int64_t> v = in.Values();
      auto p = PlanResize(v, a, sizes ? nullptr : &*scales, sizes ? &*sizes : nullptr);
      if (!p.ok()) return ctx.Error(p.status().message());
      ctx.set_output(0, dt, Shape::FromValues(p->sizes));
      return absl::OkStatus();
    }
    // Symbolic dims: a scale of exactly 1 keeps the dim; stretch sizes are exact.
    std::vector<int64_t> axes = a.axes;
    if (axes.empty()) {
      for (int64_t i = 0; i < in.rank(); ++i) axes.push_back(i);
    }
    auto norm = NormalizeAxes(axes, in.rank());
    if (!norm.ok()) return ctx.Error(norm.status().message());
    for (size_t i = 0; i < norm->size(); ++i) {
      Dim& d = dims[(*norm)[i]];
      if (sizes) {
        if (sizes->size() != norm->size()) return ctx.Error("sizes does not match axes");
        d = a.aspect_policy == "stretch" ? Dim((*sizes)[i]) : ctx.FreshDim();
      } else {
        if (scales->size() != norm->size()) return ctx.Error("scales does not match axes");
        double s = (*scales)[i];
        if (d.is_value()) {
          d = Dim(static_cast<int64_t>(s * static_cast<double>(d.value())));
        } else if (s != 1.0) {
          d = ctx.FreshDim();
        }
      }
    }
    ctx.set_output(0, dt, Shape(dims));
    return absl::OkStatus();
  };
}

// ---- kernel ----

KernelFn ResizeKernel(bool is_upsample) {
  return [is_upsample](KernelContext& ctx) -> absl::Status {
    const Tensor& x = ctx.input(0);
    ResizeAttrs a = ResizeAttrsOf(ctx.node(), ctx.opset());
    if (absl::Status s = ValidateResizeAttrs(a); !s.ok()) return ctx.Error(s.message());
    ResizeInputs io = ResizeInputsOf(ctx.node(), ctx.opset());
    std::optional<std::vector<float>> scales;
    std::optional<std::vector<int64_t>> sizes;
    if (is_upsample && io.scales < 0) {
      scales = ctx.node().GetFloats("scales");
    } else if (io.scales >= 0 && ctx.has_input(io.scales) && ctx.input(io.scales).num_elements() > 0) {
      scales = FloatsOf(ctx.input(io.scales));
    }
    if (io.sizes >= 0 && ctx.has_input(io.sizes) && ctx.input(io.sizes).num_elements() > 0) {
      if (scales) return ctx.Error("only one of scales and sizes may be given");
      sizes = TensorToInt64s(ctx.input(io.sizes));
    }
    auto plan = PlanResize(x.dims(), a, scales ? &*scales : nullptr, sizes ? &*sizes : nullptr);
    if (!plan.ok()) return ctx.Error(plan.status().message());
    int64_t rank = x.rank();
    // roi: [starts..., ends...] over the resized axes (default 0..1).
    std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
    if (a.coord == "tf_crop_and_resize" && io.roi >= 0 && ctx.has_input(io.roi)) {
      std::vector<float> roi = FloatsOf(ctx.input(io.roi));
      std::vector<int64_t> axes = a.axes;
      if (axes.empty()) {
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
      }
      auto norm = NormalizeAxes(axes, rank);
      if (!norm.ok()) return ctx.Error(norm.status().message());
      if (roi.size() != 2 * norm->size()) return ctx.Error("roi has ", roi.size(), " entries");
      for (size_t i = 0; i < norm->size(); ++i) {
        roi_start[(*norm)[i]] = roi[i];
        roi_end[(*norm)[i]] = roi[i + norm->size()];
      }
    }
    std::vector<std::vector<ResizeAxisTaps>> taps(static_cast<size_t>(rank));
    for (int64_t k = 0; k < rank; ++k) {
      if (x.dim(k) == 0 && plan->sizes[k] > 0) return ctx.Error("cannot resize an empty axis");
      for (int64_t o = 0; o < plan->sizes[k]; ++o) {
        taps[k].push_back(ResizeTapsFor(o, x.dim(k), plan->sizes[k], plan->scales[k], a, roi_start[k], roi_end[k]));
      }
    }
    std::vector<int64_t> strides = ContiguousStrides(x.dims());
    const std::vector<int64_t>& dims = plan->sizes;
    if (a.mode == "nearest") {
      // Nearest copies elements: any dtype.
      if (!IsCopyableDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
      Tensor fill = ConvertTensor(Tensor::Scalar<double>(a.extrapolation), x.dtype() == DType::kString ? DType::kDouble : x.dtype());
      Tensor out(x.dtype(), dims);
      if (out.num_elements() == 0) {
        ctx.set_output(0, std::move(out));
        return absl::OkStatus();
      }
      std::vector<int64_t> idx(dims.size(), 0);
      int64_t o = 0;
      do {
        int64_t src = 0;
        bool outside = false;
        for (int64_t k = 0; k < rank; ++k) {
          const ResizeAxisTaps& t = taps[k][idx[k]];
          if (t.outside || t.taps.empty()) {
            outside = true;
            break;
          }
          src += t.taps[0].index * strides[k];
        }
        if (outside) {
          if (x.dtype() != DType::kString) CopyElement(fill, 0, out, o);
        } else {
          CopyElement(x, src, out, o);
        }
        ++o;
      } while (NextIndex(idx, dims));
      ctx.set_output(0, std::move(out));
      return absl::OkStatus();
    }
    if (!IsFloatingPoint(x.dtype()) && !IsInteger(x.dtype())) {
      return ctx.Unimplemented("dtype ", DTypeName(x.dtype()), " for ", a.mode, " resize");
    }
    Tensor wide = ConvertTensor(x, DType::kDouble);
    const double* in = wide.data<double>();
    Tensor acc(DType::kDouble, dims);
    if (acc.num_elements() > 0) {
      std::vector<int64_t> idx(dims.size(), 0);
      int64_t o = 0;
      do {
        bool outside = false;
        for (int64_t k = 0; k < rank; ++k) outside = outside || taps[k][idx[k]].outside;
        double v = 0;
        if (outside) {
          v = a.extrapolation;
        } else {
          // Sum over the tap combinations (odometer over each axis's taps).
          std::vector<size_t> pick(static_cast<size_t>(rank), 0);
          while (true) {
            double w = 1;
            int64_t src = 0;
            for (int64_t k = 0; k < rank; ++k) {
              const ResizeTap& t = taps[k][idx[k]].taps[pick[k]];
              w *= t.weight;
              src += t.index * strides[k];
            }
            v += w * in[src];
            int64_t k = rank - 1;
            for (; k >= 0; --k) {
              if (++pick[k] < taps[k][idx[k]].taps.size()) break;
              pick[k] = 0;
            }
            if (k < 0) break;
          }
        }
        acc.mutable_data<double>()[o++] = v;
      } while (NextIndex(idx, dims));
    }
    if (IsInteger(x.dtype())) {
      for (int64_t i = 0; i < acc.num_elements(); ++i) {
        double& v = acc.mutable_data<double>()[i];
        v = std::nearbyint(v);
      }
    }
    ctx.set_output(0, ConvertTensor(acc, x.dtype()));
    return absl::OkStatus();
  };
}

TraitsFn ResizeTraits(bool is_upsample) {
  return [is_upsample](const OpContext& ctx) {
    ResizeAttrs a = ResizeAttrsOf(ctx.node(), ctx.opset());
    Traits t;
    t.semantic_name = is_upsample ? "Upsample" : "Resize";
    t.meaning = absl::StrCat("y = ", a.mode, " interpolation of x (", a.coord, ")");
    t.linearity = Linearity::kLinear;  // a fixed weighted sum of inputs
    t.effect_detail = ShapeChange(ctx);
    auto ni = StaticElements(ctx.input_type(0));
    auto no = StaticElements(ctx.output_type(0));
    if (ni >= 0 && no >= 0) {
      if (no < ni) {
        t.invertibility = Invertibility::kIrreversible;
        t.collapse = a.mode == "nearest" ? CollapseKind::kSelects : CollapseKind::kReduces;
        t.collapse_how = "downsampling merges or drops input elements";
        t.effect = RepresentationEffect::kRestricts;
      } else {
        t.effect = no == ni ? RepresentationEffect::kPreserves : RepresentationEffect::kExpands;
      }
    }
    t.removable_when = "output shape equals input shape (scales all 1, no roi crop)";
    return t;
  };
}

Cost ResizeCost(const OpContext& ctx) {
  ResizeAttrs a = ResizeAttrsOf(ctx.node(), ctx.opset());
  int64_t taps_per_axis = a.mode == "nearest" ? 0 : a.mode == "linear" ? 2 : 4;
  int64_t spatial = 0;
  const Shape& in = ctx.input_shape(0);
  const Shape& out = ctx.output_type(0).shape;
  if (in.has_rank() && out.has_rank() && in.rank() == out.rank()) {
    for (int64_t k = 0; k < in.rank(); ++k) spatial += !(in[k] == out[k]);
  }
  int64_t per_element = 1;
  for (int64_t k = 0; k < spatial; ++k) per_element *= taps_per_axis;
  // Each tap is a multiply-add.
  return ElementwiseCost(ctx, taps_per_axis == 0 ? 0 : 2 * per_element);
}

}  // namespace

void RegisterResizeOps(OpRegistry& r) {
  r.Register(MakeOp("Resize", 10, InferResize(false), ResizeTraits(false), ResizeCost,
                    ResizeKernel(false)));
  r.Register(MakeOp("Upsample", 7, InferResize(true), ResizeTraits(true), ResizeCost,
                    ResizeKernel(true)));
}

}  // namespace aic

// Shape op family: the ops that change how a tensor is viewed, not its data
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity), and the ops that read a
// tensor's shape (Shape, Size). Their inference carries symbolic dims through
// (Reshape cancels a named dim against itself to resolve -1), and Shape/Size
// publish their value as a constant whenever it is known, which is what lets
// Shape → Gather → Concat → Reshape chains resolve during inference. Kernels
// are zero-copy views (WithDims shares the buffer).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

std::string TargetText(const std::vector<Dim>& target) {
  std::vector<std::string> parts;
  for (const Dim& d : target) parts.push_back(d.ToString());
  return absl::StrJoin(parts, ", ");
}

// Resolves Reshape's target against the input shape: 0 copies the input dim
// (unless allowzero), one -1 takes what is left. Works on symbolic dims: a
// named dim that appears on both sides cancels.
// The target's entries are dims: known values, or symbols (a dim of some
// tensor, as a Shape → Gather → Concat chain gives them; ShapeValueOf), or
// unknown (a fresh dim in the output, and no -1 resolved against it). A
// symbol stands for its own value, not for the "copy" marker 0: wrong only
// where that dim is 0 at run time, an empty tensor, as in every shape
// inference that follows Shape (onnx's and ONNX Runtime's too).
absl::StatusOr<Shape> ResolveReshape(const Shape& in, const std::vector<Dim>& target,
                                     bool allowzero, const std::function<Dim()>& fresh) {
  std::vector<Dim> out;
  int infer_at = -1;
  bool any_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    if (!target[i].is_value()) {
      out.push_back(target[i].is_unknown() ? Dim() : target[i]);
      continue;
    }
    int64_t v = target[i].value();
    any_zero = any_zero || v == 0;
    if (v == -1) {
      if (infer_at >= 0) return absl::InvalidArgumentError("more than one -1 in the target shape");
      infer_at = static_cast<int>(i);
      out.push_back(Dim());
    } else if (v == 0 && !allowzero) {
      if (!in.has_rank()) {
        out.push_back(fresh());
      } else if (static_cast<int64_t>(i) >= in.rank()) {
        return absl::InvalidArgumentError(absl::StrCat("target dim ", i, " is 0 but the input has rank ", in.rank()));
      } else {
        out.push_back(in[i]);
      }
    } else if (v < 0) {
      return absl::InvalidArgumentError(absl::StrCat("invalid target dim ", v));
    } else {
      out.push_back(Dim(v));
    }
  }
  if (allowzero && infer_at >= 0 && any_zero) {
    return absl::InvalidArgumentError("allowzero=1 with both 0 and -1 in the target shape");
  }
  if (in.has_rank()) {
    // Element-count check / -1 resolution by cancelling equal dims.
    std::vector<Dim> rest_in(in.dims());
    int64_t num = 1, den = 1;
    bool unresolved = false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(i) == infer_at) continue;
      const Dim& d = out[i];
      if (d.is_value()) {
        den *= d.value();
        continue;
      }
      if (d.is_unknown()) {
        unresolved = true;
        continue;
      }
      auto it = std::find_if(rest_in.begin(), rest_in.end(),
                             [&](const Dim& x) { return x.is_symbol() && x.SameAs(d); });
      if (it != rest_in.end()) {
        rest_in.erase(it);
      } else {
        unresolved = true;
      }
    }
    std::vector<Dim> symbols;
    for (const Dim& d : rest_in) {
      if (d.is_value()) {
        num *= d.value();
      } else {
        symbols.push_back(d);
      }
    }
    if (infer_at >= 0) {
      Dim& slot = out[infer_at];
      if (unresolved) {
        slot = fresh();
      } else if (symbols.empty()) {
        if (den == 0 || num % den != 0) {
          return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", in.ToString(), " to [",
                                                         TargetText(target), "]"));
        }
        slot = Dim(num / den);
      } else if (symbols.size() == 1 && num == den && symbols[0].is_symbol()) {
        slot = symbols[0];
      } else {
        slot = fresh();
      }
    } else if (!unresolved && symbols.empty() && num != den) {
      return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", in.ToString(), " to [",
                                                     TargetText(target), "]"));
    }
  } else if (infer_at >= 0) {
    out[infer_at] = fresh();
  }
  for (Dim& d : out) {
    if (d.is_unknown()) d = fresh();
  }
  return Shape(out);
}

absl::StatusOr<Shape> ResolveReshape(const Shape& in, const std::vector<int64_t>& target, bool allowzero,
                                     const std::function<Dim()>& fresh) {
  return ResolveReshape(in, std::vector<Dim>(target.begin(), target.end()), allowzero, fresh);
}

// Reshape's target: the `shape` attribute before opset 5, input 1 after.
std::optional<std::vector<int64_t>> ReshapeTarget(const OpContext& ctx) {
  if (ctx.opset() < 5) return ctx.node().GetInts("shape");
  return ConstantInts(ctx, 1);
}

absl::Status InferReshape(OpContext& ctx) {
  DType dt = ctx.input_dtype(0);
  bool allowzero = ctx.opset() >= 14 && ctx.node().GetInt("allowzero", 0) != 0;
  std::optional<std::vector<int64_t>> target = ReshapeTarget(ctx);
  if (!target && ctx.opset() >= 5) {
    // A target computed from shapes (Reshape(x, Shape(y)), or a
    // Concat of Gathers of Shapes and constants): its symbolic entries.
    if (std::optional<std::vector<Dim>> dims = ShapeValueOf(ctx, 1)) {
      absl::StatusOr<Shape> s = ResolveReshape(ctx.input_shape(0), *dims, allowzero, FreshFn(ctx));
      if (!s.ok()) return ctx.Error(s.status().message());
      ctx.set_output(0, dt, *s);
      return absl::OkStatus();
    }
  }
  if (!target) {
    const Shape& ts = ctx.input_shape(1);
    if (ts.has_rank() && ts.rank() == 1 && ts[0].is_value()) {
      std::vector<Dim> dims;
      for (int64_t i = 0; i < ts[0].value(); ++i) dims.push_back(ctx.FreshDim());
      ctx.set_output(0, dt, Shape(dims));
    } else {
      ctx.set_output(0, dt, Shape::UnknownRank());
    }
    return absl::OkStatus();
  }
  absl::StatusOr<Shape> s = ResolveReshape(ctx.input_shape(0), *target, allowzero, FreshFn(ctx));
  if (!s.ok()) return ctx.Error(s.status().message());
  ctx.set_output(0, dt, *s);
  return absl::OkStatus();
}

absl::Status ReshapeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> target =
      ctx.opset() < 5 ? ctx.node().GetInts("shape") : TensorToInt64s(ctx.input(1));
  bool allowzero = ctx.opset() >= 14 && ctx.node().GetInt("allowzero", 0) != 0;
  absl::StatusOr<Shape> s = ResolveReshape(Shape::FromValues(x.dims()), target, allowzero,
                                           [] { return Dim(); });
  if (!s.ok()) return ctx.Error(s.status().message());
  if (!s->IsStatic()) return ctx.Error("cannot resolve the target shape");
  ctx.set_output(0, x.WithDims(s->Values()));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> FlattenAxis(const Node& node, int64_t rank) {
  int64_t axis = node.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", node.GetInt("axis", 1),
                                                   " out of range for rank ", rank));
  }
  return axis;
}

absl::Status InferFlatten(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (!in.has_rank()) {
    int64_t axis = ctx.node().GetInt("axis", 1);
    ctx.set_output(0, dt, Shape({axis == 0 ? Dim(1) : ctx.FreshDim(), ctx.FreshDim()}));
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = FlattenAxis(ctx.node(), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> outer(in.dims().begin(), in.dims().begin() + *axis);
  std::vector<Dim> inner(in.dims().begin() + *axis, in.dims().end());
  ctx.set_output(0, dt, Shape({DimProduct(outer, FreshFn(ctx)), DimProduct(inner, FreshFn(ctx))}));
  return absl::OkStatus();
}

absl::Status FlattenKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int64_t> axis = FlattenAxis(ctx.node(), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  int64_t outer = 1;
  for (int64_t i = 0; i < *axis; ++i) outer *= x.dim(i);
  int64_t inner = 1;
  for (int64_t i = *axis; i < x.rank(); ++i) inner *= x.dim(i);
  ctx.set_output(0, x.WithDims({outer, inner}));
  return absl::OkStatus();
}

// Squeeze/Unsqueeze axes: attribute before opset 13, optional input 1 from 13.
// nullopt: not known statically; an empty vector for Squeeze means "all 1s".
std::optional<std::vector<int64_t>> AxesOf(const OpContext& ctx) {
  if (ctx.opset() < 13) return ctx.node().GetInts("axes");
  if (!ctx.has_input(1)) return std::vector<int64_t>{};
  return ConstantInts(ctx, 1);
}
std::vector<int64_t> AxesOf(const KernelContext& ctx) {
  if (ctx.opset() < 13) return ctx.node().GetInts("axes");
  if (!ctx.has_input(1)) return {};
  return TensorToInt64s(ctx.input(1));
}

// The squeezed shape; when axes are empty, every dim known to be 1 goes, and
// an unknown dim makes the rank unknowable.
absl::StatusOr<Shape> SqueezeShape(const Shape& in, const std::vector<int64_t>& axes_in) {
  if (!in.has_rank()) return Shape::UnknownRank();
  std::vector<Dim> out;
  if (axes_in.empty()) {
    for (const Dim& d : in.dims()) {
      if (!d.is_value()) return Shape::UnknownRank();
      if (d.value() != 1) out.push_back(d);
    }
    return Shape(out);
  }
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(axes_in, in.rank()));
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (std::find(axes.begin(), axes.end(), i) != axes.end()) {
      if (in[i].is_value() && in[i].value() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("cannot squeeze axis ", i, " of size ", in[i].value()));
      }
      continue;
    }
    out.push_back(in[i]);
  }
  return Shape(out);
}

absl::StatusOr<Shape> UnsqueezeShape(const Shape& in, const std::vector<int64_t>& axes_in) {
  if (!in.has_rank()) return Shape::UnknownRank();
  int64_t rank = in.rank() + static_cast<int64_t>(axes_in.size());
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(axes_in, rank));
  std::vector<Dim> out;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(axes.begin(), axes.end(), i) != axes.end()) {
      out.push_back(Dim(1));
    } else {
      out.push_back(in[k++]);
    }
  }
  return Shape(out);
}

using ShapeFn = absl::StatusOr<Shape> (*)(const Shape&, const std::vector<int64_t>&);

InferFn InferAxesView(ShapeFn fn, bool unknown_axes_keep_rank_delta) {
  return [fn, unknown_axes_keep_rank_delta](OpContext& ctx) -> absl::Status {
    DType dt = ctx.input_dtype(0);
    std::optional<std::vector<int64_t>> axes = AxesOf(ctx);
    if (!axes) {
      // Unsqueeze with a known number of axes still has a known rank.
      const Shape& as = ctx.input_shape(1);
      const Shape& in = ctx.input_shape(0);
      if (unknown_axes_keep_rank_delta && in.has_rank() && as.has_rank() && as.rank() == 1 &&
          as[0].is_value()) {
        std::vector<Dim> dims;
        for (int64_t i = 0; i < in.rank() + as[0].value(); ++i) dims.push_back(ctx.FreshDim());
        ctx.set_output(0, dt, Shape(dims));
      } else {
        ctx.set_output(0, dt, Shape::UnknownRank());
      }
      return absl::OkStatus();
    }
    absl::StatusOr<Shape> s = fn(ctx.input_shape(0), *axes);
    if (!s.ok()) return ctx.Error(s.status().message());
    ctx.set_output(0, dt, *s);
    return absl::OkStatus();
  };
}

KernelFn AxesViewKernel(ShapeFn fn) {
  return [fn](KernelContext& ctx) -> absl::Status {
    const Tensor& x = ctx.input(0);
    absl::StatusOr<Shape> s = fn(Shape::FromValues(x.dims()), AxesOf(ctx));
    if (!s.ok()) return ctx.Error(s.status().message());
    ctx.set_output(0, x.WithDims(s->Values()));
    return absl::OkStatus();
  };
}

// Reshape-like traits: a pure re-indexing, removable when it changes nothing.
TraitsFn ViewTraits(std::string semantic, std::string meaning, std::string removable) {
  return [=](const OpContext& ctx) {
    Traits t = ReindexTraits(ctx, semantic, meaning);
    t.removable_when = removable;
    t.fuses_with = {"Reshape"};
    return t;
  };
}

Cost BytesCost(const OpContext& ctx) { return BytesOnlyCost(ctx); }

absl::Status InferShapeOp(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (!in.has_rank()) {
    ctx.set_output(0, DType::kInt64, Shape({ctx.FreshDim()}));
    return absl::OkStatus();
  }
  auto [start, end] = ShapeRange(ctx.node(), ctx.opset(), in.rank());
  ctx.set_output(0, DType::kInt64, Shape({Dim(end - start)}));
  std::vector<int64_t> values;
  for (int64_t i = start; i < end; ++i) {
    if (!in[i].is_value()) return absl::OkStatus();
    values.push_back(in[i].value());
  }
  ctx.set_output_constant(0, Tensor::FromVector<int64_t>(values, {end - start}));
  return absl::OkStatus();
}

absl::Status ShapeKernel(KernelContext& ctx) {
  const RuntimeValue& v = ctx.input_value(0);
  if (!v.is_tensor()) return ctx.Error("input is not a tensor");
  const std::vector<int64_t>& dims = v.tensor.dims();
  auto [start, end] = ShapeRange(ctx.node(), ctx.opset(), static_cast<int64_t>(dims.size()));
  std::vector<int64_t> values(dims.begin() + start, dims.begin() + end);
  ctx.set_output(0, Tensor::FromVector<int64_t>(values, {end - start}));
  return absl::OkStatus();
}

absl::Status InferSize(OpContext& ctx) {
  ctx.set_output(0, DType::kInt64, Shape::Scalar());
  if (auto n = ctx.input_shape(0).NumElements()) {
    ctx.set_output_constant(0, Tensor::Scalar<int64_t>(*n));
  }
  return absl::OkStatus();
}

absl::Status SizeKernel(KernelContext& ctx) {
  const RuntimeValue& v = ctx.input_value(0);
  if (!v.is_tensor()) return ctx.Error("input is not a tensor");
  ctx.set_output(0, Tensor::Scalar<int64_t>(v.tensor.num_elements()));
  return absl::OkStatus();
}

// Shape and Size read only metadata: the output does not depend on the values.
TraitsFn MetadataTraits(std::string semantic, std::string meaning) {
  return [=](const OpContext& ctx) {
    Traits t;
    t.semantic_name = semantic;
    t.meaning = meaning;
    t.linearity = Linearity::kNonlinear;
    t.invertibility = Invertibility::kIrreversible;
    t.collapse = CollapseKind::kReduces;
    t.collapse_how = "only the shape survives, values are discarded";
    t.effect = RepresentationEffect::kRestricts;
    t.effect_detail = ShapeChange(ctx);
    t.safe_transform_when = "fold to a constant when the input shape is static";
    return t;
  };
}

Cost MetadataCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  c.known = c.known || StaticElements(ctx.output_type(0)) >= 0;
  c.bytes_read = 0;  // only the shape is read
  return c;
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "", .op_type = "Reshape",
                   .since_version = 1,
                   .infer = InferReshape,
                   .traits = ViewTraits("Reshape", "y = reshape(x, shape)",
                                        "output shape equals input shape"),
                   .cost = BytesCost,
                   .kernel = ReshapeKernel});
  r.Register(OpDef{.domain = "", .op_type = "Flatten",
                   .since_version = 1,
                   .infer = InferFlatten,
                   .traits = ViewTraits("Flatten", "y = reshape(x, [prod(d[:axis]), prod(d[axis:])])",
                                        "input is already 2-D with the same split"),
                   .cost = BytesCost,
                   .kernel = FlattenKernel});
  r.Register(OpDef{.domain = "", .op_type = "Squeeze",
                   .since_version = 1,
                   .infer = InferAxesView(SqueezeShape, false),
                   .traits = ViewTraits("Squeeze", "y = x without its size-1 axes",
                                        "no axis is removed"),
                   .cost = BytesCost,
                   .kernel = AxesViewKernel(SqueezeShape)});
  r.Register(OpDef{.domain = "", .op_type = "Unsqueeze",
                   .since_version = 1,
                   .infer = InferAxesView(UnsqueezeShape, true),
                   .traits = ViewTraits("Unsqueeze", "y = x with size-1 axes inserted",
                                        "axes is empty"),
                   .cost = BytesCost,
                   .kernel = AxesViewKernel(UnsqueezeShape)});
  r.Register(OpDef{.domain = "", .op_type = "Identity",
                   .since_version = 1,
                   .infer =
                       [](OpContext& ctx) {
                         ctx.set_output_type(0, ctx.input_type(0));
                         if (const Tensor* c = ctx.input_constant(0)) ctx.set_output_constant(0, *c);
                         return absl::OkStatus();
                       },
                   .traits = ViewTraits("Identity", "y = x", "always (Identity)"),
                   .cost = BytesCost,
                   .kernel =
                       [](KernelContext& ctx) {
                         ctx.set_output_value(0, ctx.input_value(0));
                         return absl::OkStatus();
                       }});
  r.Register(OpDef{.domain = "", .op_type = "Shape",
                   .since_version = 1,
                   .infer = InferShapeOp,
                   .traits = MetadataTraits("Shape", "y = shape(x)[start:end]"),
                   .cost = MetadataCost,
                   .kernel = ShapeKernel});
  r.Register(OpDef{.domain = "", .op_type = "Size",
                   .since_version = 1,
                   .infer = InferSize,
                   .traits = MetadataTraits("Size", "y = prod(shape(x))"),
                   .cost = MetadataCost,
                   .kernel = SizeKernel});
}

}  // namespace aic

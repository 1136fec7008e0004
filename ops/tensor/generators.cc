// Generator ops: tensors made from attributes or a few scalars rather than
// from a data input (Constant, ConstantOfShape, Range, EyeLike, OneHot), plus
// the triangular-structure ops on a data input (Trilu, CumSum, CumProd). Constant
// publishes its value during inference so that everything downstream of it
// can fold.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

Tensor ConstantOfShapeFill(const Node& node) {
  if (const Attribute* a = node.FindAttr("value"); a != nullptr && a->t.num_elements() == 1) {
    return a->t;
  }
  return Tensor::Scalar<float>(0.f);
}

namespace {

// Traits of an op whose output does not depend on any data input's values.
Traits GeneratorTraits(const OpContext& ctx, std::string semantic, std::string meaning) {
  Traits t;
  t.semantic_name = std::move(semantic);
  t.meaning = std::move(meaning);
  t.effect_detail = ShapeChange(ctx);
  t.safe_transform_when = "fold to a constant when its inputs are constant";
  return t;
}

// ---- Constant ----


absl::Status InferConstant(OpContext& ctx) {
  absl::StatusOr<Tensor> v = ConstantNodeValue(ctx.node());
  if (!v.ok()) {
    if (absl::IsUnimplemented(v.status())) return absl::OkStatus();  // opaque sparse value
    return ctx.Error(v.status().message());
  }
  ctx.set_output(0, v->dtype(), Shape::FromValues(v->dims()));
  ctx.set_output_constant(0, *v);
  return absl::OkStatus();
}

absl::Status ConstantKernel(KernelContext& ctx) {
  absl::StatusOr<Tensor> v = ConstantNodeValue(ctx.node());
  if (!v.ok()) {
    if (absl::IsUnimplemented(v.status())) return ctx.Unimplemented(v.status().message());
    return ctx.Error(v.status().message());
  }
  ctx.set_output(0, *v);
  return absl::OkStatus();
}

// ---- ConstantOfShape ----

absl::Status InferConstantOfShape(OpContext& ctx) {
  const Attribute* a = ctx.node().FindAttr("value");
  if (a != nullptr && a->t.num_elements() != 1) return ctx.Error("value must have one element");
  DType dt = ConstantOfShapeFill(ctx.node()).dtype();
  if (auto shape = ConstantInts(ctx, 0)) {
    for (int64_t d : *shape) {
      if (d < 0) return ctx.Error("negative dim ", d);
    }
    ctx.set_output(0, dt, Shape::FromValues(*shape));
  } else if (auto dims = ShapeValueOf(ctx, 0); dims && std::none_of(dims->begin(), dims->end(), [](const Dim& d) {
                                                  return d.is_value() && d.value() < 0;
                                                })) {
    for (Dim& d : *dims) {
      if (d.is_unknown()) d = ctx.FreshDim();
    }
    ctx.set_output(0, dt, Shape(*dims));
  } else {
    const Shape& s = ctx.input_shape(0);
    if (s.has_rank() && s.rank() == 1 && s[0].is_value()) {
      std::vector<Dim> dims;
      for (int64_t i = 0; i < s[0].value(); ++i) dims.push_back(ctx.FreshDim());
      ctx.set_output(0, dt, Shape(dims));
    } else {
      ctx.set_output(0, dt, Shape::UnknownRank());
    }
  }
  return absl::OkStatus();
}

absl::Status ConstantOfShapeKernel(KernelContext& ctx) {
  std::vector<int64_t> dims = TensorToInt64s(ctx.input(0));
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("negative dim ", d);
  }
  Tensor fill = ConstantOfShapeFill(ctx.node());
  if (!IsCopyableDType(fill.dtype())) return ctx.Unimplemented("dtype ", DTypeName(fill.dtype()));
  Tensor out(fill.dtype(), dims);
  for (int64_t i = 0; i < out.num_elements(); ++i) CopyElement(fill, 0, out, i);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Range ----

absl::Status InferRange(OpContext& ctx) {
  DType dt = ctx.input_dtype(0);
  const Tensor* s = ctx.input_constant(0);
  const Tensor* l = ctx.input_constant(1);
  const Tensor* d = ctx.input_constant(2);
  if (s && l && d && s->num_elements() == 1 && l->num_elements() == 1 && d->num_elements() == 1) {
    double delta = d->ElementAsDouble(0);
    if (delta == 0) return ctx.Error("delta is 0");
    double n = std::ceil((l->ElementAsDouble(0) - s->ElementAsDouble(0)) / delta);
    ctx.set_output(0, dt, Shape({Dim(std::max<int64_t>(static_cast<int64_t>(n), 0))}));
    return absl::OkStatus();
  }
  // Range(0, d, 1) over a dim d read off a shape (torch's arange(seq_len)):
  // d elements, so the positions it makes keep the dim's name.
  bool integral = dt == DType::kInt64 || dt == DType::kInt32;
  if (integral && s && d && s->num_elements() == 1 && d->num_elements() == 1 && s->ElementAsDouble(0) == 0 &&
      d->ElementAsDouble(0) == 1) {
    std::optional<std::vector<Dim>> limit = ShapeValueOf(ctx, 1);
    if (limit && limit->size() == 1 && !(*limit)[0].is_unknown()) {
      const Dim& n = (*limit)[0];
      ctx.set_output(0, dt, Shape({n.is_value() ? Dim(std::max<int64_t>(n.value(), 0)) : n}));
      return absl::OkStatus();
    }
  }
  ctx.set_output(0, dt, Shape({ctx.FreshDim()}));
  return absl::OkStatus();
}

absl::Status RangeKernel(KernelContext& ctx) {
  const Tensor& s = ctx.input(0);
  for (size_t i = 0; i < 3; ++i) {
    if (ctx.input(i).num_elements() != 1) return ctx.Error("start, limit and delta must be scalars");
    if (ctx.input(i).dtype() != s.dtype()) return ctx.Error("start, limit and delta differ in dtype");
  }
  // float16 / bfloat16 run in float, each step rounded back to the narrow type.
  const bool narrow = s.dtype() == DType::kFloat16 || s.dtype() == DType::kBFloat16;
  auto round_trip = [&](float v) {
    Tensor one = Tensor::Scalar<float>(v);
    return WidenToFloat(NarrowFromFloat(one, s.dtype())).data<float>()[0];
  };
  Tensor out;
  absl::Status st = DispatchNumeric(narrow ? DType::kFloat : s.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto scalar = [&](size_t i) { return (narrow ? WidenToFloat(ctx.input(i)) : ctx.input(i)).template data<T>()[0]; };
    T start = scalar(0), limit = scalar(1), delta = scalar(2);
    if (delta == T(0)) return;
    double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                         static_cast<double>(delta));
    int64_t count = std::max<int64_t>(static_cast<int64_t>(n), 0);
    out = Tensor(narrow ? DType::kFloat : s.dtype(), {count});
    // Repeated addition, as the spec's reference loop does.
    T v = start;
    for (int64_t i = 0; i < count; ++i) {
      out.mutable_data<T>()[i] = v;
      v = static_cast<T>(v + delta);
      if constexpr (std::is_same_v<T, float>) {
        if (narrow) v = round_trip(v);
      }
    }
  });
  if (!st.ok()) return ctx.Unimplemented(st.message());
  if (!out.defined()) return ctx.Error("delta is 0");
  ctx.set_output(0, narrow ? NarrowFromFloat(out, s.dtype()) : std::move(out));
  return absl::OkStatus();
}

// ---- EyeLike ----

DType EyeDType(const Node& node, DType input) {
  return node.HasAttr("dtype") ? static_cast<DType>(node.GetInt("dtype", 1)) : input;
}

absl::Status InferEyeLike(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (in.has_rank() && in.rank() != 2) return ctx.Error("input must be 2-D");
  ctx.set_output(0, EyeDType(ctx.node(), ctx.input_dtype(0)),
                 in.has_rank() ? in : Shape({ctx.FreshDim(), ctx.FreshDim()}));
  return absl::OkStatus();
}

absl::Status EyeLikeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) return ctx.Error("input must be 2-D");
  DType dt = EyeDType(ctx.node(), x.dtype());
  int64_t k = ctx.node().GetInt("k", 0);
  Tensor ones(DType::kFloat, x.dims());
  for (int64_t i = 0; i < x.dim(0); ++i) {
    int64_t j = i + k;
    if (j >= 0 && j < x.dim(1)) ones.mutable_data<float>()[i * x.dim(1) + j] = 1.f;
  }
  if (dt != DType::kFloat && !IsHalfType(dt) && !IsInteger(dt) && dt != DType::kDouble &&
      dt != DType::kBool) {
    return ctx.Unimplemented("dtype ", DTypeName(dt));
  }
  ctx.set_output(0, ConvertTensor(ones, dt));
  return absl::OkStatus();
}

// ---- OneHot ----

absl::Status InferOneHot(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(2);
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", -1), in.rank() + 1);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  Dim depth = ctx.FreshDim();
  if (const Tensor* d = ctx.input_constant(1); d != nullptr && d->num_elements() == 1) {
    double v = d->ElementAsDouble(0);
    if (v < 1) return ctx.Error("depth must be positive");
    depth = Dim(static_cast<int64_t>(v));
  }
  std::vector<Dim> dims = in.dims();
  dims.insert(dims.begin() + *axis, depth);
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status OneHotKernel(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  if (ctx.input(1).num_elements() != 1) return ctx.Error("depth must be a scalar");
  if (values.num_elements() != 2) return ctx.Error("values must hold [off, on]");
  if (!IsCopyableDType(values.dtype())) return ctx.Unimplemented("dtype ", DTypeName(values.dtype()));
  int64_t depth = static_cast<int64_t>(ctx.input(1).ElementAsDouble(0));
  if (depth < 1) return ctx.Error("depth must be positive");
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", -1), indices.rank() + 1);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + *axis, depth);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= dims[k];
  for (size_t k = *axis + 1; k < dims.size(); ++k) inner *= dims[k];
  Tensor out(values.dtype(), dims);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = static_cast<int64_t>(indices.ElementAsDouble(o * inner + i));
        if (v < 0) v += depth;
        CopyElement(values, v == d ? 1 : 0, out, (o * depth + d) * inner + i);
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Trilu ----

absl::Status InferTrilu(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  if (in.has_rank() && in.rank() < 2) return ctx.Error("input must have rank ≥ 2");
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status TriluKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input must have rank ≥ 2");
  if (!IsCopyableDType(x.dtype())) return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  if (ctx.has_input(1) && ctx.input(1).num_elements() != 1) return ctx.Error("k must hold one value");
  int64_t k = ctx.has_input(1) ? TensorToInt64s(ctx.input(1))[0] : 0;
  bool upper = ctx.node().GetInt("upper", 1) != 0;
  int64_t r = x.rank();
  int64_t flat = 0;
  ctx.set_output(0, Remap(x, x.dims(), [&](const std::vector<int64_t>& idx) {
                   int64_t d = idx[r - 1] - idx[r - 2];
                   bool keep = upper ? d >= k : d <= k;
                   int64_t o = flat++;
                   return keep ? o : -1;
                 }));
  return absl::OkStatus();
}

// ---- CumSum, CumProd ----

// The operands both cumulative ops share: the axis input (a scalar) and the
// exclusive / reverse attributes, decoded once.
struct Cumulative {
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
};

absl::StatusOr<Cumulative> DecodeCumulative(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!ctx.has_input(1) || ctx.input(1).num_elements() != 1) {
    return absl::InvalidArgumentError("axis must be a scalar");
  }
  AIC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(TensorToInt64s(ctx.input(1))[0], x.rank()));
  return Cumulative{axis, ctx.node().GetInt("exclusive", 0) != 0, ctx.node().GetInt("reverse", 0) != 0};
}

// y[i] = x[0] ∘ … ∘ x[i] along the axis (∘ = + or ×), starting from the
// identity; exclusive stops one short, reverse runs from the end.
absl::Status CumulativeKernel(KernelContext& ctx, bool product) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<Cumulative> c = DecodeCumulative(ctx);
  if (!c.ok()) return ctx.Error(c.status().message());
  int64_t outer = 1, dim = x.dim(c->axis), inner = 1;
  for (int64_t k = 0; k < c->axis; ++k) outer *= x.dim(k);
  for (int64_t k = c->axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
  Tensor w = WidenToFloat(x);
  Tensor out(w.dtype(), w.dims());
  absl::Status s = DispatchNumeric(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = w.data<T>();
    T* o = out.mutable_data<T>();
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t i = 0; i < inner; ++i) {
        T acc = product ? T(1) : T(0);
        for (int64_t j = 0; j < dim; ++j) {
          int64_t jj = c->reverse ? dim - 1 - j : j;
          int64_t at = (a * dim + jj) * inner + i;
          T next = product ? static_cast<T>(acc * in[at]) : static_cast<T>(acc + in[at]);
          o[at] = c->exclusive ? acc : next;
          acc = next;
        }
      }
    }
  });
  if (!s.ok()) return ctx.Unimplemented(s.message());
  ctx.set_output(0, NarrowFromFloat(out, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferCumulative(OpContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterGeneratorOps(OpRegistry& r) {
  TraitsFn constant_traits = [](const OpContext& ctx) {
    return GeneratorTraits(ctx, "Constant", "y = value");
  };
  r.Register(MakeOp("Constant", 1, InferConstant, constant_traits, nullptr, ConstantKernel));
  r.Register(MakeOp(
      "ConstantOfShape", 9, InferConstantOfShape,
      [](const OpContext& ctx) { return GeneratorTraits(ctx, "ConstantOfShape", "y = full(shape, value)"); },
      nullptr, ConstantOfShapeKernel));
  r.Register(MakeOp(
      "Range", 11, InferRange,
      [](const OpContext& ctx) {
        return GeneratorTraits(ctx, "Range", "y = [start, start + delta, …) up to limit");
      },
      nullptr, RangeKernel));
  r.Register(MakeOp(
      "EyeLike", 9, InferEyeLike,
      [](const OpContext& ctx) { return GeneratorTraits(ctx, "EyeLike", "y = eye(shape(x), k)"); },
      nullptr, EyeLikeKernel));
  r.Register(MakeOp(
      "OneHot", 9, InferOneHot,
      [](const OpContext& ctx) {
        Traits t = GeneratorTraits(ctx, "OneHot", "y[…, d, …] = values[indices == d]");
        t.linearity = Linearity::kNonlinear;
        t.invertibility = Invertibility::kInvertible;  // indices in range are recoverable
        t.effect = RepresentationEffect::kExpands;
        return t;
      },
      nullptr, OneHotKernel));
  r.Register(MakeOp(
      "Trilu", 14, InferTrilu,
      [](const OpContext& ctx) {
        bool upper = ctx.node().GetInt("upper", 1) != 0;
        Traits t = SelectTraits(ctx, "Trilu", upper ? "y = triu(x, k)" : "y = tril(x, k)", false,
                                upper ? "elements below the k-th diagonal set to 0"
                                      : "elements above the k-th diagonal set to 0");
        t.effect = RepresentationEffect::kRestricts;
        return t;
      },
      nullptr, TriluKernel));
  r.Register(MakeOp(
      "CumSum", 11, InferCumulative,
      [](const OpContext& ctx) {
        bool exclusive = ctx.node().GetInt("exclusive", 0) != 0;
        Traits t = ReindexTraits(ctx, "CumSum", exclusive ? "y[i] = Σ_{j<i} x[j]" : "y[i] = Σ_{j≤i} x[j]");
        // Inclusive cumsum is a unit triangular matrix (invertible: differences);
        // exclusive drops the last element.
        if (exclusive) {
          t.invertibility = Invertibility::kIrreversible;
          t.collapse = CollapseKind::kSelects;
          t.collapse_how = "the last element along the axis never reaches the output";
        }
        return t;
      },
      [](const OpContext& ctx) { return ElementwiseCost(ctx, 1); },
      [](KernelContext& ctx) { return CumulativeKernel(ctx, false); }));
  r.Register(MakeOp(
      "CumProd", 26, InferCumulative,
      [](const OpContext& ctx) {
        bool exclusive = ctx.node().GetInt("exclusive", 0) != 0;
        Traits t = ReindexTraits(ctx, "CumProd", exclusive ? "y[i] = Π_{j<i} x[j]" : "y[i] = Π_{j≤i} x[j]");
        // Not linear, and a zero wipes out everything after it: not invertible in general.
        t.linearity = Linearity::kNonlinear;
        t.invertibility = Invertibility::kIrreversible;
        t.collapse = CollapseKind::kSelects;
        t.collapse_how = exclusive ? "the last element along the axis never reaches the output"
                                   : "a zero hides every later element along the axis";
        return t;
      },
      [](const OpContext& ctx) { return ElementwiseCost(ctx, 1); },
      [](KernelContext& ctx) { return CumulativeKernel(ctx, true); }));
}

}  // namespace aic

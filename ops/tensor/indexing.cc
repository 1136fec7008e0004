// Indexing op family: ops that pick elements of a tensor by position (Slice,
// Compress) or by an index tensor (Gather, GatherElements, GatherND). They
// select: distinct inputs that differ only in discarded elements give equal
// outputs, so traits report CollapseKind::kSelects unless everything is kept.
// Gather/Slice of a Shape output resolve to constants when the picked dims are
// static, so Shape → Gather → Reshape chains fold during inference.
// Scatter and search ops (TopK, ArgMax, Unique...) live in scatter.cc and search.cc.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/slice_params.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"
#include "ops/util/broadcast.h"

namespace aic {

namespace {

// ---- Slice ----

// x[.., 0:d, ..] on one axis, d a dim read off a shape (HF's
// position_ids[:, 0:seq_len] of a [1, 512] buffer): the axis keeps d when it
// is d, and becomes min(d, c) on an axis of length c (MinDimSymbol,
// ops/util/broadcast.h), which broadcasting against d resolves. nullopt
// where the slice is not of that form.
std::optional<std::pair<int64_t, Dim>> SlicedPrefixDim(const OpContext& ctx, const Shape& in) {
  if (ctx.opset() < 10 || !in.has_rank()) return std::nullopt;
  std::optional<std::vector<int64_t>> starts = ConstantInts(ctx, 1);
  std::optional<std::vector<Dim>> ends = ShapeValueOf(ctx, 2);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || (*starts)[0] != 0) return std::nullopt;
  int64_t axis = 0;
  if (ctx.node().has_input(3)) {
    std::optional<std::vector<int64_t>> axes = ConstantInts(ctx, 3);
    if (!axes || axes->size() != 1) return std::nullopt;
    axis = (*axes)[0] < 0 ? (*axes)[0] + in.rank() : (*axes)[0];
  }
  if (ctx.node().has_input(4)) {
    std::optional<std::vector<int64_t>> steps = ConstantInts(ctx, 4);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  if (axis < 0 || axis >= in.rank()) return std::nullopt;
  const Dim& end = (*ends)[0];
  const Dim& length = in[axis];
  if (!end.is_symbol()) return std::nullopt;
  if (length.SameAs(end)) return std::make_pair(axis, end);
  if (length.is_value() && length.value() >= 1) return std::make_pair(axis, MinDimSymbol(end, length.value()));
  return std::nullopt;
}

absl::Status InferSlice(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  auto params = SliceParamsOf(ctx.node(), ctx.opset(), in.rank(),
                              [&](size_t i) { return ConstantInts(ctx, i); });
  if (!params.ok()) return ctx.Error(params.status().message());
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<Dim> dims = in.dims();
  if (!params->has_value()) {
    if (auto prefix = SlicedPrefixDim(ctx, in)) {
      dims[prefix->first] = prefix->second;
      ctx.set_output(0, dt, Shape(dims));
      return absl::OkStatus();
    }
    // Only axes known: other dims pass through.
    std::optional<std::vector<int64_t>> axes = ctx.node().has_input(3) ? ConstantInts(ctx, 3) : std::nullopt;
    if (axes) {
      auto norm = NormalizeAxes(*axes, in.rank());
      if (!norm.ok()) return ctx.Error(norm.status().message());
      for (int64_t a : *norm) dims[a] = ctx.FreshDim();
    } else {
      for (Dim& d : dims) d = ctx.FreshDim();
    }
    ctx.set_output(0, dt, Shape(dims));
    return absl::OkStatus();
  }
  const SliceParams& p = **params;
  std::vector<AxisRange> ranges(static_cast<size_t>(in.rank()));
  bool value_known = true;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    int64_t a = p.axes[i];
    const Dim& d = in[a];
    if (d.is_value()) {
      ranges[a] = ClampSlice(p.starts[i], p.ends[i], p.steps[i], d.value());
      dims[a] = Dim(ranges[a].count);
    } else if (p.starts[i] == 0 && p.steps[i] == 1 && p.ends[i] >= (int64_t{1} << 31) - 1) {
      ranges[a].count = -1;  // the whole (symbolic) axis
      value_known = false;
    } else {
      dims[a] = ctx.FreshDim();
      value_known = false;
    }
  }
  ctx.set_output(0, dt, Shape(dims));
  // Slice of a Shape output: a constant when the kept dims are static.
  std::optional<std::vector<Dim>> shape_value = ShapeValueOf(ctx, 0);
  if (shape_value && value_known && in.rank() == 1) {
    std::vector<int64_t> values;
    const AxisRange& r = ranges[0];
    bool all_static = true;
    for (int64_t k = 0; k < dims[0].value(); ++k) {
      const Dim& d = (*shape_value)[r.start + k * r.step];
      if (!d.is_value()) {
        all_static = false;
        break;
      }
      values.push_back(d.value());
    }
    if (all_static) {
      ctx.set_output_constant(0, Tensor::FromVector<int64_t>(values, {dims[0].value()}));
    }
  }
  return absl::OkStatus();
}

absl::Status SliceKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  auto params = SliceParamsOf(ctx.node(), ctx.opset(), x.rank(), [&](size_t i) {
    return std::optional<std::vector<int64_t>>(TensorToInt64s(ctx.input(i)));
  });
  if (!params.ok()) return ctx.Error(params.status().message());
  const SliceParams& p = **params;
  std::vector<AxisRange> ranges(static_cast<size_t>(x.rank()));
  for (int64_t k = 0; k < x.rank(); ++k) ranges[k].count = x.dim(k);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    int64_t a = p.axes[i];
    ranges[a] = ClampSlice(p.starts[i], p.ends[i], p.steps[i], x.dim(a));
  }
  std::vector<int64_t> dims, strides = ContiguousStrides(x.dims());
  for (const AxisRange& r : ranges) dims.push_back(r.count);
  ctx.set_output(0, Remap(x, dims, [&](const std::vector<int64_t>& idx) {
                   int64_t o = 0;
                   for (size_t k = 0; k < idx.size(); ++k) {
                     o += (ranges[k].start + idx[k] * ranges[k].step) * strides[k];
                   }
                   return o;
                 }));
  return absl::OkStatus();
}

Traits SliceTraits(const OpContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  const TypeInfo& out = ctx.output_type(0);
  bool keeps_all = in.is_tensor() && out.is_tensor() && in.shape.has_rank() &&
                   out.shape.NumElements().has_value() &&
                   in.shape.NumElements() == out.shape.NumElements();
  Traits t = SelectTraits(ctx, "Slice", "y = x[starts:ends:steps] along axes", keeps_all,
                          "elements outside the slice are discarded");
  t.removable_when = "the slice covers every axis fully with step 1";
  t.fuses_with = {"Slice"};
  return t;
}

// ---- Gather ----

// Normalized indices (negative count from the end); error when out of range.
absl::StatusOr<std::vector<int64_t>> CheckedIndices(const Tensor& t, int64_t dim) {
  std::vector<int64_t> idx = TensorToInt64s(t);
  for (int64_t& i : idx) {
    if (i < -dim || i >= dim) {
      return absl::InvalidArgumentError(absl::StrCat("index ", i, " out of range [", -dim, ", ", dim, ")"));
    }
    if (i < 0) i += dim;
  }
  return idx;
}

absl::Status InferGather(OpContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  DType dt = ctx.input_dtype(0);
  if (!data.has_rank() || !indices.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims(data.dims().begin(), data.dims().begin() + *axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.dims().begin() + *axis + 1, data.dims().end());
  ctx.set_output(0, dt, Shape(dims));
  // Gather from a Shape output: a constant when the picked dims are static.
  std::optional<std::vector<Dim>> shape_value = ShapeValueOf(ctx, 0);
  const Tensor* idx = ctx.input_constant(1);
  if (shape_value && idx != nullptr && ctx.input_constant(0) == nullptr) {
    auto picked = CheckedIndices(*idx, static_cast<int64_t>(shape_value->size()));
    if (!picked.ok()) return ctx.Error(picked.status().message());
    std::vector<int64_t> values;
    for (int64_t i : *picked) {
      if (!(*shape_value)[i].is_value()) return absl::OkStatus();
      values.push_back((*shape_value)[i].value());
    }
    ctx.set_output_constant(0, Tensor::FromVector<int64_t>(values, idx->dims()));
  }
  return absl::OkStatus();
}

absl::Status GatherKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const Tensor& it = ctx.input(1);
  auto idx = CheckedIndices(it, x.dim(*axis));
  if (!idx.ok()) return ctx.Error(idx.status().message());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= x.dim(k);
  for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
  std::vector<int64_t> dims(x.dims().begin(), x.dims().begin() + *axis);
  dims.insert(dims.end(), it.dims().begin(), it.dims().end());
  dims.insert(dims.end(), x.dims().begin() + *axis + 1, x.dims().end());
  Tensor out(x.dtype(), dims);
  int64_t n = static_cast<int64_t>(idx->size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      CopyElements(x, (o * x.dim(*axis) + (*idx)[j]) * inner, out, (o * n + j) * inner, inner);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Gather may repeat or drop rows, so it is never a bijection in general.
Traits GatherTraits(const OpContext& ctx, std::string semantic, std::string meaning) {
  return SelectTraits(ctx, std::move(semantic), std::move(meaning), /*keeps_all=*/false,
                      "elements not indexed are discarded");
}

// Gather of rows of a constant floating-point table by indices computed at
// run time (token ids, positions) is an embedding lookup: it makes a
// representation from indices, it does not select from one, and the table
// is learned.
bool IsEmbeddingLookup(const OpContext& ctx) {
  const Tensor* table = ctx.input_constant(0);
  return table != nullptr && IsFloatingPoint(table->dtype()) && table->rank() >= 2 &&
         ctx.input_constant(1) == nullptr;
}

Traits GatherOpTraits(const OpContext& ctx) {
  if (!IsEmbeddingLookup(ctx)) return GatherTraits(ctx, "Gather", "y = take(x, indices, axis)");
  Traits t;
  t.semantic_name = "Embedding";
  t.meaning = "y = table[indices]: one learned vector per index";
  t.linearity = Linearity::kLinear;  // in the table
  t.invertibility = Invertibility::kUnknown;
  t.collapse = CollapseKind::kNone;
  t.effect = RepresentationEffect::kExpands;
  t.effect_detail = ShapeChange(ctx);
  t.trainable = true;
  return t;
}

// An embedding reads the rows it looks up, not its whole table; the table's
// elements are its parameters.
Cost GatherCost(const OpContext& ctx) {
  if (!IsEmbeddingLookup(ctx)) return BytesOnlyCost(ctx);
  Cost c = BytesOnlyCost(ctx, {0});
  int64_t table_elements = StaticElements(ctx.input_type(0));
  int64_t indices = StaticElements(ctx.input_type(1));
  if (c.known && table_elements >= 0 && indices >= 0) {
    c.bytes_read -= static_cast<int64_t>(ByteSizeOf(ctx.input_dtype(0), table_elements));
    c.bytes_read += c.bytes_written;  // the rows looked up
  }
  return c;
}

// ---- GatherElements ----

absl::Status InferGatherElements(OpContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (data.has_rank() && indices.has_rank() && data.rank() != indices.rank()) {
    return ctx.Error("data and indices differ in rank");
  }
  if (data.has_rank()) {
    absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), data.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
  }
  ctx.set_output(0, ctx.input_dtype(0), indices);
  return absl::OkStatus();
}

absl::Status GatherElementsKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& it = ctx.input(1);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  if (x.rank() != it.rank()) return ctx.Error("data and indices differ in rank");
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  auto idx = CheckedIndices(it, x.dim(*axis));
  if (!idx.ok()) return ctx.Error(idx.status().message());
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  int64_t flat = 0;
  ctx.set_output(0, Remap(x, it.dims(), [&](const std::vector<int64_t>& i) {
                   int64_t o = OffsetOf(i, strides) + ((*idx)[flat++] - i[*axis]) * strides[*axis];
                   return o;
                 }));
  return absl::OkStatus();
}

// ---- GatherND ----

absl::Status InferGatherND(OpContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  DType dt = ctx.input_dtype(0);
  int64_t b = ctx.node().GetInt("batch_dims", 0);
  if (!data.has_rank() || !indices.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (indices.rank() < 1 || b < 0 || b >= indices.rank() || b >= data.rank()) {
    return ctx.Error("batch_dims ", b, " invalid for ranks ", data.rank(), " and ", indices.rank());
  }
  const Dim& last = indices[indices.rank() - 1];
  if (!last.is_value()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  int64_t k = last.value();
  if (k < 1 || b + k > data.rank()) return ctx.Error("index tuples of length ", k, " too long");
  std::vector<Dim> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.dims().begin() + b + k, data.dims().end());
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status GatherNDKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& it = ctx.input(1);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  int64_t b = ctx.node().GetInt("batch_dims", 0);
  if (it.rank() < 1 || b < 0 || b >= it.rank() || b >= x.rank()) return ctx.Error("invalid batch_dims");
  int64_t k = it.dim(it.rank() - 1);
  if (k < 1 || b + k > x.rank()) return ctx.Error("index tuples of length ", k, " too long");
  for (int64_t i = 0; i < b; ++i) {
    if (x.dim(i) != it.dim(i)) return ctx.Error("batch dims of data and indices differ");
  }
  std::vector<int64_t> idx = TensorToInt64s(it);
  std::vector<int64_t> dims(it.dims().begin(), it.dims().end() - 1);
  dims.insert(dims.end(), x.dims().begin() + b + k, x.dims().end());
  Tensor out(x.dtype(), dims);
  int64_t batches = 1;
  for (int64_t i = 0; i < b; ++i) batches *= x.dim(i);
  int64_t slice = 1;
  for (int64_t i = b + k; i < x.rank(); ++i) slice *= x.dim(i);
  int64_t per_batch_data = 1;
  for (int64_t i = b; i < x.rank(); ++i) per_batch_data *= x.dim(i);
  int64_t tuples = static_cast<int64_t>(idx.size()) / k;
  int64_t per_batch_tuples = batches > 0 ? tuples / batches : 0;
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t batch = per_batch_tuples > 0 ? t / per_batch_tuples : 0;
    int64_t src = batch * per_batch_data;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = idx[t * k + j], d = x.dim(b + j);
      if (v < -d || v >= d) return ctx.Error("index ", v, " out of range for dim ", d);
      src += (v < 0 ? v + d : v) * strides[b + j];
    }
    CopyElements(x, src, out, t * slice, slice);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Compress ----

absl::Status InferCompress(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  Dim kept = ctx.FreshDim();
  if (const Tensor* c = ctx.input_constant(1)) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->num_elements(); ++i) n += c->ElementAsDouble(i) != 0;
    kept = Dim(n);
  }
  if (!ctx.node().HasAttr("axis")) {
    ctx.set_output(0, dt, Shape({kept}));
    return absl::OkStatus();
  }
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims = in.dims();
  dims[*axis] = kept;
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status CompressKernel(KernelContext& ctx) {
  Tensor x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  const Tensor& cond = ctx.input(1);
  int64_t axis = 0;
  if (ctx.node().HasAttr("axis")) {
    absl::StatusOr<int64_t> a = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
    if (!a.ok()) return ctx.Error(a.status().message());
    axis = *a;
  } else {
    x = x.WithDims({x.num_elements()});
  }
  if (cond.num_elements() > x.dim(axis)) return ctx.Error("condition longer than the axis");
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.num_elements(); ++i) {
    if (cond.ElementAsDouble(i) != 0) keep.push_back(i);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.dim(k);
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
  std::vector<int64_t> dims = x.dims();
  dims[axis] = static_cast<int64_t>(keep.size());
  Tensor out(x.dtype(), dims);
  int64_t n = dims[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      CopyElements(x, (o * x.dim(axis) + keep[j]) * inner, out, (o * n + j) * inner, inner);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  r.Register(MakeOp("Slice", 1, InferSlice, SliceTraits, nullptr, SliceKernel));
  r.Register(MakeOp(
      "Gather", 1, InferGather, GatherOpTraits, GatherCost, GatherKernel));
  r.Register(MakeOp(
      "GatherElements", 11, InferGatherElements,
      [](const OpContext& ctx) {
        return GatherTraits(ctx, "GatherElements", "y[i] = x[i with axis ← indices[i]]");
      },
      nullptr, GatherElementsKernel));
  r.Register(MakeOp(
      "GatherND", 11, InferGatherND,
      [](const OpContext& ctx) {
        return GatherTraits(ctx, "GatherND", "y[i] = x[batch, indices[i]]");
      },
      nullptr, GatherNDKernel));
  r.Register(MakeOp(
      "Compress", 9, InferCompress,
      [](const OpContext& ctx) {
        return SelectTraits(ctx, "Compress", "y = x[condition] along axis", false,
                            "slices where the condition is false are discarded");
      },
      nullptr, CompressKernel));
  RegisterScatterOps(r);
  RegisterSearchOps(r);
}

}  // namespace aic

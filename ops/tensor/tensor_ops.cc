// Tensor op family: data movement that keeps every element but moves it
// (Transpose, Concat, Split; block and sequence rearrangements in
// rearrange.cc) or repeats it (Expand, Tile). Reference kernels are index remaps (Remap in
// tensor_util.h): obviously correct, dtype-agnostic, strings included. The
// family's other files (pad, generators, resize) register from here too.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// ---- Transpose ----

absl::StatusOr<std::vector<int64_t>> PermOf(const Node& node, int64_t rank) {
  std::vector<int64_t> perm = node.GetInts("perm");
  if (!node.HasAttr("perm")) {
    perm.resize(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("perm has ", perm.size(), " entries for rank ", rank));
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat("perm [", absl::StrJoin(perm, ", "),
                                                     "] is not a permutation"));
    }
    seen[p] = true;
  }
  return perm;
}

absl::Status InferTranspose(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (!in.has_rank()) {
    if (ctx.node().HasAttr("perm")) {
      std::vector<Dim> dims;
      for (size_t i = 0; i < ctx.node().GetInts("perm").size(); ++i) dims.push_back(ctx.FreshDim());
      ctx.set_output(0, dt, Shape(dims));
    } else {
      ctx.set_output(0, dt, Shape::UnknownRank());
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> perm = PermOf(ctx.node(), in.rank());
  if (!perm.ok()) return ctx.Error(perm.status().message());
  std::vector<Dim> dims;
  for (int64_t p : *perm) dims.push_back(in[p]);
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status TransposeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  absl::StatusOr<std::vector<int64_t>> perm = PermOf(ctx.node(), x.rank());
  if (!perm.ok()) return ctx.Error(perm.status().message());
  std::vector<int64_t> in_strides = ContiguousStrides(x.dims());
  std::vector<int64_t> dims, strides;
  for (int64_t p : *perm) {
    dims.push_back(x.dim(p));
    strides.push_back(in_strides[p]);
  }
  ctx.set_output(0, Remap(x, dims, [&](const std::vector<int64_t>& idx) { return OffsetOf(idx, strides); }));
  return absl::OkStatus();
}

Traits TransposeTraits(const OpContext& ctx) {
  Traits t = ReindexTraits(ctx, "Transpose", "y = transpose(x, perm)");
  if (ctx.input_shape(0).has_rank()) {
    auto perm = PermOf(ctx.node(), ctx.input_shape(0).rank());
    if (perm.ok()) t.meaning = absl::StrCat("y = transpose(x, [", absl::StrJoin(*perm, ", "), "])");
  }
  t.removable_when = "perm is identity";
  t.fuses_with = {"Transpose", "Gemm", "MatMul"};
  return t;
}

// ---- Concat ----

// Two dims that must be equal: the more informative one, or an error.
absl::StatusOr<Dim> MergeDims(const Dim& a, const Dim& b) {
  if (a.is_value() && b.is_value() && a.value() != b.value()) {
    return absl::InvalidArgumentError(absl::StrCat("dims ", a.value(), " and ", b.value(), " differ"));
  }
  if (a.is_value()) return a;
  if (b.is_value()) return b;
  return a.is_symbol() ? a : b;
}

absl::Status InferConcat(OpContext& ctx) {
  if (!ctx.node().HasAttr("axis") && ctx.opset() >= 4) return ctx.Error("attribute axis is required");
  DType dt = ctx.input_dtype(0);
  int64_t rank = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input_shape(i).has_rank()) {
      if (rank >= 0 && ctx.input_shape(i).rank() != rank) {
        return ctx.Error("inputs have different ranks");
      }
      rank = ctx.input_shape(i).rank();
    }
  }
  if (rank < 0) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 1), rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims(static_cast<size_t>(rank));
  bool first = true;
  bool all_ranked = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input_shape(i);
    if (!s.has_rank()) {
      all_ranked = false;
      continue;
    }
    for (int64_t k = 0; k < rank; ++k) {
      if (k == *axis) {
        dims[k] = first ? s[k] : DimAdd(dims[k], s[k], FreshFn(ctx));
        continue;
      }
      absl::StatusOr<Dim> m = first ? absl::StatusOr<Dim>(s[k]) : MergeDims(dims[k], s[k]);
      if (!m.ok()) return ctx.Error(m.status().message());
      dims[k] = *m;
    }
    first = false;
  }
  if (!all_ranked) dims[*axis] = ctx.FreshDim();
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status ConcatKernel(KernelContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("no inputs");
  const Tensor& x0 = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x0.dtype()));
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 1), x0.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> dims = x0.dims();
  dims[*axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    if (x.rank() != x0.rank() || x.dtype() != x0.dtype()) return ctx.Error("inputs differ in rank or dtype");
    for (int64_t k = 0; k < x.rank(); ++k) {
      if (k != *axis && x.dim(k) != x0.dim(k)) return ctx.Error("inputs differ in dim ", k);
    }
    dims[*axis] += x.dim(*axis);
  }
  Tensor out(x0.dtype(), dims);
  int64_t outer = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= dims[k];
  int64_t out_block = out.num_elements() / std::max<int64_t>(outer, 1);
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    int64_t block = outer > 0 ? x.num_elements() / outer : 0;
    for (int64_t o = 0; o < outer; ++o) CopyElements(x, o * block, out, o * out_block + offset, block);
    offset += block;
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Split ----

// Split sizes along the axis of extent `dim`; nullopt when the sizes are not
// known statically. `given` is the split attribute/input when present.
absl::StatusOr<std::vector<int64_t>> SplitSizes(const Node& node, int64_t opset,
                                                const std::optional<std::vector<int64_t>>& given,
                                                int64_t dim, size_t num_outputs) {
  if (given && !given->empty()) {
    if (given->size() != num_outputs) {
      return absl::InvalidArgumentError(absl::StrCat("split has ", given->size(), " entries for ",
                                                     num_outputs, " outputs"));
    }
    int64_t total = 0;
    for (int64_t s : *given) {
      if (s < 0) return absl::InvalidArgumentError("negative split size");
      total += s;
    }
    if (dim >= 0 && total != dim) {
      return absl::InvalidArgumentError(absl::StrCat("split sizes sum to ", total, ", axis has ", dim));
    }
    return *given;
  }
  if (dim < 0) return absl::InvalidArgumentError("unknown");
  int64_t n = static_cast<int64_t>(num_outputs);
  if (opset >= 18 && node.HasAttr("num_outputs")) {
    n = node.GetInt("num_outputs", n);
    if (n <= 0 || n != static_cast<int64_t>(num_outputs)) {
      return absl::InvalidArgumentError("num_outputs does not match the node's outputs");
    }
    int64_t chunk = (dim + n - 1) / n;
    std::vector<int64_t> sizes;
    for (int64_t i = 0, left = dim; i < n; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
    return sizes;
  }
  if (n == 0 || dim % n != 0) {
    return absl::InvalidArgumentError(absl::StrCat("axis of ", dim, " does not split in ", n, " equal parts"));
  }
  return std::vector<int64_t>(static_cast<size_t>(n), dim / n);
}

std::optional<std::vector<int64_t>> GivenSplit(const OpContext& ctx, bool* unknown) {
  *unknown = false;
  if (ctx.opset() < 13) {
    if (ctx.node().HasAttr("split")) return ctx.node().GetInts("split");
    if (ctx.opset() < 2 && ctx.has_input(1)) {
      auto c = ConstantInts(ctx, 1);
      *unknown = !c;
      return c;
    }
    return std::nullopt;
  }
  if (!ctx.has_input(1)) return std::nullopt;
  auto c = ConstantInts(ctx, 1);
  *unknown = !c;
  return c;
}

absl::Status InferSplit(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  size_t n = ctx.num_outputs();
  if (!in.has_rank()) {
    for (size_t i = 0; i < n; ++i) ctx.set_output(i, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  bool unknown = false;
  std::optional<std::vector<int64_t>> given = GivenSplit(ctx, &unknown);
  const Dim& d = in[*axis];
  absl::StatusOr<std::vector<int64_t>> sizes =
      unknown ? absl::InvalidArgumentError("unknown")
              : SplitSizes(ctx.node(), ctx.opset(), given, d.is_value() ? d.value() : -1, n);
  if (!sizes.ok() && d.is_value() && !unknown) return ctx.Error(sizes.status().message());
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dim> dims = in.dims();
    if (sizes.ok()) {
      dims[*axis] = Dim((*sizes)[i]);
    } else if (n == 1) {
      dims[*axis] = d;
    } else {
      dims[*axis] = ctx.FreshDim();
    }
    ctx.set_output(i, dt, Shape(dims));
  }
  return absl::OkStatus();
}

absl::Status SplitKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::optional<std::vector<int64_t>> given;
  if (ctx.opset() < 13 && ctx.node().HasAttr("split")) {
    given = ctx.node().GetInts("split");
  } else if ((ctx.opset() >= 13 || ctx.opset() < 2) && ctx.has_input(1)) {
    given = TensorToInt64s(ctx.input(1));
  }
  absl::StatusOr<std::vector<int64_t>> sizes =
      SplitSizes(ctx.node(), ctx.opset(), given, x.dim(*axis), ctx.num_outputs());
  if (!sizes.ok()) return ctx.Error(sizes.status().message());
  int64_t outer = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= x.dim(k);
  int64_t inner = 1;
  for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
  int64_t start = 0;
  for (size_t i = 0; i < sizes->size(); ++i) {
    std::vector<int64_t> dims = x.dims();
    dims[*axis] = (*sizes)[i];
    Tensor out(x.dtype(), dims);
    int64_t block = (*sizes)[i] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      CopyElements(x, (o * x.dim(*axis) + start) * inner, out, o * block, block);
    }
    start += (*sizes)[i];
    ctx.set_output(i, std::move(out));
  }
  return absl::OkStatus();
}

// ---- Expand, Tile ----

absl::Status InferExpand(OpContext& ctx) {
  DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> shape = ConstantInts(ctx, 1);
  Shape target;
  if (shape) {
    target = Shape::FromValues(*shape);
  } else if (std::optional<std::vector<Dim>> dims = ShapeValueOf(ctx, 1);
             dims && std::none_of(dims->begin(), dims->end(), [](const Dim& d) { return d.is_value() && d.value() < 0; })) {
    target = Shape(*dims);  // Expand(x, Shape(y)) and the like: y's symbolic shape
  } else if (const Shape& len = ctx.input_shape(1); len.has_rank() && len.rank() == 1 && len[0].is_value()) {
    // Only the target's length is known: the output has that rank at least,
    // its dims known where x's are (a dim other than 1 is kept) and fresh
    // elsewhere.
    target = Shape(std::vector<Dim>(static_cast<size_t>(len[0].value()), Dim()));
  } else {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  absl::StatusOr<Shape> s = BroadcastShapes({ctx.input_shape(0), target}, FreshFn(ctx));
  if (!s.ok()) return ctx.Error(s.status().message());
  ctx.set_output(0, dt, *s);
  return absl::OkStatus();
}

absl::Status ExpandKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({x.dims(), TensorToInt64s(ctx.input(1))});
  if (!dims.ok()) return ctx.Error(dims.status().message());
  std::vector<int64_t> strides = BroadcastStrides(x.dims(), *dims);
  ctx.set_output(0, Remap(x, *dims, [&](const std::vector<int64_t>& idx) { return OffsetOf(idx, strides); }));
  return absl::OkStatus();
}

absl::Status InferTile(OpContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> repeats = ConstantInts(ctx, 1);
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<Dim> dims;
  if (repeats && static_cast<int64_t>(repeats->size()) != in.rank()) {
    return ctx.Error("repeats has ", repeats->size(), " entries for rank ", in.rank());
  }
  for (int64_t k = 0; k < in.rank(); ++k) {
    if (!repeats) {
      dims.push_back(ctx.FreshDim());
    } else if ((*repeats)[k] < 0) {
      return ctx.Error("negative repeat");
    } else if ((*repeats)[k] == 1) {
      dims.push_back(in[k]);
    } else if (in[k].is_value()) {
      dims.push_back(Dim(in[k].value() * (*repeats)[k]));
    } else {
      dims.push_back((*repeats)[k] == 0 ? Dim(0) : ctx.FreshDim());
    }
  }
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status TileKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  std::vector<int64_t> repeats = TensorToInt64s(ctx.input(1));
  if (static_cast<int64_t>(repeats.size()) != x.rank()) return ctx.Error("repeats does not match the rank");
  std::vector<int64_t> dims = x.dims();
  for (size_t k = 0; k < dims.size(); ++k) {
    if (repeats[k] < 0) return ctx.Error("negative repeat");
    dims[k] *= repeats[k];
  }
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  ctx.set_output(0, Remap(x, dims, [&](const std::vector<int64_t>& idx) {
                   int64_t o = 0;
                   for (size_t k = 0; k < idx.size(); ++k) o += (idx[k] % x.dim(k)) * strides[k];
                   return o;
                 }));
  return absl::OkStatus();
}

// Expand and Tile copy each element to several places: injective, linear.
TraitsFn RepeatTraits(std::string semantic, std::string meaning) {
  return [=](const OpContext& ctx) {
    Traits t = ReindexTraits(ctx, semantic, meaning);
    t.removable_when = "output shape equals input shape";
    return t;
  };
}

// The constant floating-point inputs of a Concat that also joins computed
// data: a class token or register tokens prepended to the patches, learned.
std::vector<size_t> LearnedConcatInputs(const OpContext& ctx) {
  std::vector<size_t> learned;
  bool any_data = false;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* c = ctx.input_constant(i);
    if (c == nullptr) {
      any_data = true;
    } else if (IsFloatingPoint(c->dtype())) {
      learned.push_back(i);
    }
  }
  return any_data ? learned : std::vector<size_t>{};
}

Cost ConcatCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  for (size_t i : LearnedConcatInputs(ctx)) c.params += ctx.input_constant(i)->num_elements();
  return c;
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  r.Register(MakeOp("Transpose", 1, InferTranspose, TransposeTraits, nullptr, TransposeKernel));
  r.Register(MakeOp(
      "Concat", 1, InferConcat,
      [](const OpContext& ctx) {
        Traits t = ReindexTraits(ctx, "Concat", "y = concat(x₀, x₁, …, axis)");
        t.removable_when = "a single input";
        t.fuses_with = {"Concat", "Split"};
        t.trainable = !LearnedConcatInputs(ctx).empty();
        return t;
      },
      ConcatCost, ConcatKernel));
  r.Register(MakeOp(
      "Split", 1, InferSplit,
      [](const OpContext& ctx) {
        Traits t = ReindexTraits(ctx, "Split", "y₀, y₁, … = split(x, axis)");
        t.removable_when = "a single output";
        t.fuses_with = {"Concat"};
        return t;
      },
      nullptr, SplitKernel));
  r.Register(MakeOp("Expand", 8, InferExpand,
                    RepeatTraits("Expand", "y = broadcast(x, shape)"), nullptr, ExpandKernel));
  r.Register(MakeOp("Tile", 1, InferTile, RepeatTraits("Tile", "y = tile(x, repeats)"), nullptr,
                    TileKernel));
  RegisterRearrangeOps(r);
  RegisterPadOps(r);
  RegisterGeneratorOps(r);
  RegisterResizeOps(r);
  RegisterTensorScatterOps(r);
}

}  // namespace aic

// Crossing between tensors and sequences: SplitToSequence cuts a tensor along
// an axis (pieces of size 1, of a scalar `split` size with a shorter last one,
// or of listed lengths), ConcatFromSequence joins a sequence along an existing
// axis or, with new_axis = 1, stacks it along a new one.
#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"
#include "ops/sequence/tensor_pieces.h"
#include "ops/util/broadcast.h"

namespace aic {

namespace {

// ---- ConcatFromSequence

absl::Status InferConcat(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  if (!ctx.node().HasAttr("axis")) return ctx.Error("needs attribute axis");
  const TypeInfo element = ElementType(ctx.input_type(0));
  if (!element.is_tensor()) return absl::OkStatus();
  if (!element.shape.has_rank()) {
    ctx.set_output(0, element.dtype, Shape::UnknownRank());
    return absl::OkStatus();
  }
  const bool new_axis = ctx.node().GetInt("new_axis", 0) != 0;
  const int64_t out_rank = element.shape.rank() + (new_axis ? 1 : 0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), out_rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims = element.shape.dims();
  // The count (or total length) along the axis depends on the sequence's length.
  if (new_axis) {
    dims.insert(dims.begin() + *axis, ctx.FreshDim());
  } else {
    dims[static_cast<size_t>(*axis)] = ctx.FreshDim();
  }
  ctx.set_output(0, element.dtype, Shape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status RunConcat(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* seq, SequenceInput(ctx, 0));
  if (seq->sequence.empty()) return ctx.Error("cannot concatenate an empty sequence");
  const bool new_axis = ctx.node().GetInt("new_axis", 0) != 0;
  const int64_t out_rank = seq->sequence[0].rank() + (new_axis ? 1 : 0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), out_rank);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  absl::StatusOr<Tensor> y = ConcatAlongAxis(seq->sequence, *axis, new_axis);
  if (!y.ok()) return ctx.Error(y.status().message());
  ctx.set_output(0, *std::move(y));
  return absl::OkStatus();
}

Traits ConcatTraits(const OpContext& ctx) {
  return ContainerTraits(
      "ConcatFromSequence",
      absl::StrCat(ctx.node().GetInt("new_axis", 0) != 0 ? "y = stack(seq, axis=" : "y = concat(seq, axis=",
                   ctx.node().GetInt("axis", 0), ")"),
      Linearity::kLinear, Invertibility::kInvertible);
}

// ---- SplitToSequence

// The lengths of the pieces for a dim of `dim` elements, or an error.
absl::StatusOr<std::vector<int64_t>> PieceLengths(const KernelContext& ctx, int64_t dim) {
  std::vector<int64_t> lengths;
  if (!ctx.has_input(1)) {
    lengths.assign(static_cast<size_t>(dim), 1);
    return lengths;
  }
  const Tensor& split = ctx.input(1);
  if (split.dtype() != DType::kInt32 && split.dtype() != DType::kInt64) {
    return ctx.Error("split must be int32 or int64, got ", DTypeName(split.dtype()));
  }
  if (split.rank() == 0) {
    const int64_t size = static_cast<int64_t>(split.ElementAsDouble(0));
    if (size <= 0) return ctx.Error("split size must be positive, got ", size);
    for (int64_t start = 0; start < dim; start += size) lengths.push_back(std::min(size, dim - start));
    return lengths;
  }
  if (split.rank() != 1) return ctx.Error("split must be a scalar or 1-D");
  int64_t total = 0;
  for (int64_t i = 0; i < split.num_elements(); ++i) {
    const int64_t len = static_cast<int64_t>(split.ElementAsDouble(i));
    if (len < 0) return ctx.Error("split lengths must be >= 0, got ", len);
    lengths.push_back(len);
    total += len;
  }
  if (total != dim) {
    return ctx.Error("split lengths sum to ", total, " but the axis has ", dim, " elements");
  }
  return lengths;
}

absl::Status InferSplit(OpContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.known()) return absl::OkStatus();
  if (!in.is_tensor()) return ctx.Error("input must be a tensor");
  if (ctx.has_input(1)) {
    const TypeInfo& st = ctx.input_type(1);
    if (st.is_tensor() && st.dtype != DType::kUndefined && st.dtype != DType::kInt32 &&
        st.dtype != DType::kInt64) {
      return ctx.Error("split must be int32 or int64, got ", DTypeName(st.dtype));
    }
  }
  if (!in.shape.has_rank()) {
    ctx.set_output_type(0, TypeInfo::SequenceOf(TypeInfo::Tensor(in.dtype, Shape::UnknownRank())));
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), in.shape.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<Dim> dims = in.shape.dims();
  const size_t a = static_cast<size_t>(*axis);
  if (!ctx.has_input(1)) {
    if (ctx.node().GetInt("keepdims", 1) != 0) {
      dims[a] = Dim(1);
    } else {
      dims.erase(dims.begin() + *axis);
    }
  } else {
    // Equal pieces only when a scalar size divides a known dim.
    const Tensor* split = ctx.input_constant(1);
    const Dim& d = dims[a];
    Dim piece = ctx.FreshDim();
    if (split != nullptr && split->rank() == 0 && d.is_value()) {
      const int64_t size = static_cast<int64_t>(split->ElementAsDouble(0));
      if (size > 0 && d.value() % size == 0) piece = Dim(size);
    }
    dims[a] = piece;
  }
  ctx.set_output_type(0, TypeInfo::SequenceOf(TypeInfo::Tensor(in.dtype, Shape(std::move(dims)))));
  return absl::OkStatus();
}

absl::Status RunSplit(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) {
    return ctx.Error("input must be a tensor");
  }
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, PieceLengths(ctx, x.dim(*axis)));
  const bool squeeze = !ctx.has_input(1) && ctx.node().GetInt("keepdims", 1) == 0;
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t len : lengths) {
    pieces.push_back(squeeze ? TakeAlongAxis(x, *axis, start)
                             : SliceAlongAxis(x, *axis, start, len));
    start += len;
  }
  ctx.set_output_value(0, RuntimeValue::Sequence(std::move(pieces), x.dtype()));
  return absl::OkStatus();
}

Traits SplitTraits(const OpContext& ctx) {
  return ContainerTraits("SplitToSequence",
                         absl::StrCat("y = split(x, axis=", ctx.node().GetInt("axis", 0),
                                      ctx.has_input(1) ? ", split)" : ") into size-1 pieces"),
                         Linearity::kLinear, Invertibility::kInvertible);
}

}  // namespace

void RegisterSequenceSplitConcatOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "ConcatFromSequence",
                   .since_version = 11,
                   .infer = InferConcat,
                   .traits = ConcatTraits,
                   .cost = ContainerCost,
                   .kernel = RunConcat});
  r.Register(OpDef{.domain = "",
                   .op_type = "SplitToSequence",
                   .since_version = 11,
                   .infer = InferSplit,
                   .traits = SplitTraits,
                   .cost = ContainerCost,
                   .kernel = RunSplit});
}

}  // namespace aic

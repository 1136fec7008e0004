// The sequence family: ops on RuntimeValue::kSequence (an ordered list of
// tensors of one dtype). This file holds the container basics (SequenceEmpty,
// SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength) and registers the rest: split/concat, SequenceMap and the
// Optional ops, each in its own file. Statically a sequence's element type is
// the union of what may be in it (MergeTypes).
#include "absl/strings/str_cat.h"
#include "ops/control/control_util.h"
#include "ops/registry.h"
#include "ops/sequence/sequence_util.h"

namespace aic {

namespace {

// ---- SequenceEmpty: an empty sequence of attribute `dtype` (default float).

DType EmptyDType(const Node& node) {
  return static_cast<DType>(node.GetInt("dtype", static_cast<int64_t>(DType::kFloat)));
}

absl::Status InferEmpty(OpContext& ctx) {
  const int64_t raw = ctx.node().GetInt("dtype", static_cast<int64_t>(DType::kFloat));
  if (!IsKnownDType(static_cast<int32_t>(raw))) return ctx.Error("unknown dtype ", raw);
  ctx.set_output_type(0, TypeInfo::SequenceOf(
                             TypeInfo::Tensor(EmptyDType(ctx.node()), Shape::UnknownRank())));
  return absl::OkStatus();
}

absl::Status RunEmpty(KernelContext& ctx) {
  ctx.set_output_value(0, RuntimeValue::Sequence({}, EmptyDType(ctx.node())));
  return absl::OkStatus();
}

// ---- SequenceConstruct: (x0, x1, ...) -> [x0, x1, ...], one dtype.

absl::Status InferConstruct(OpContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  TypeInfo element = ctx.input_type(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (t.known() && !t.is_tensor()) return ctx.Error("input ", i, " must be a tensor");
    if (t.is_tensor() && element.is_tensor() && t.dtype != element.dtype) {
      return ctx.Error("input ", i, " is ", DTypeName(t.dtype), ", input 0 is ",
                       DTypeName(element.dtype));
    }
    if (i > 0) element = MergeTypes(element, t, ctx);
  }
  ctx.set_output_type(0, TypeInfo::SequenceOf(element));
  return absl::OkStatus();
}

absl::Status RunConstruct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) {
      return ctx.Error("input ", i, " must be a tensor");
    }
    if (i > 0 && ctx.input(i).dtype() != items[0].dtype()) {
      return ctx.Error("input ", i, " is ", DTypeName(ctx.input(i).dtype()), ", input 0 is ",
                       DTypeName(items[0].dtype()));
    }
    items.push_back(ctx.input(i));
  }
  if (items.empty()) return ctx.Error("needs at least one input");
  const DType dtype = items[0].dtype();
  ctx.set_output_value(0, RuntimeValue::Sequence(std::move(items), dtype));
  return absl::OkStatus();
}

// ---- SequenceAt: seq[position].

absl::Status InferAt(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  AIC_RETURN_IF_ERROR(CheckPositionInput(ctx, 1));
  if (!ctx.has_input(1)) return ctx.Error("needs a position input");
  ctx.set_output_type(0, ElementType(ctx.input_type(0)));
  return absl::OkStatus();
}

absl::Status RunAt(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* seq, SequenceInput(ctx, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  AIC_ASSIGN_OR_RETURN(int64_t pos, ReadPosition(ctx, 1, n, /*allow_end=*/false));
  ctx.set_output(0, seq->sequence[static_cast<size_t>(pos)]);
  return absl::OkStatus();
}

// ---- SequenceInsert: seq with tensor inserted at position (default: the end).

absl::Status InferInsert(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  AIC_RETURN_IF_ERROR(CheckPositionInput(ctx, 2));
  const TypeInfo& seq = ctx.input_type(0);
  const TypeInfo& t = ctx.input_type(1);
  if (t.known() && !t.is_tensor()) return ctx.Error("input 1 must be a tensor");
  const DType seq_dtype = SequenceDType(seq);
  if (t.is_tensor() && seq_dtype != DType::kUndefined && t.dtype != seq_dtype) {
    return ctx.Error("cannot insert ", DTypeName(t.dtype), " into a sequence of ",
                     DTypeName(seq_dtype));
  }
  ctx.set_output_type(0, TypeInfo::SequenceOf(MergeTypes(ElementType(seq), t, ctx)));
  return absl::OkStatus();
}

absl::Status RunInsert(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* seq, SequenceInput(ctx, 0));
  if (!ctx.has_input(1) || !ctx.input_value(1).is_tensor()) {
    return ctx.Error("input 1 must be a tensor");
  }
  const Tensor& t = ctx.input(1);
  DType dtype = seq->sequence_dtype;
  if (dtype == DType::kUndefined && !seq->sequence.empty()) dtype = seq->sequence[0].dtype();
  if (dtype != DType::kUndefined && t.dtype() != dtype) {
    return ctx.Error("cannot insert ", DTypeName(t.dtype()), " into a sequence of ",
                     DTypeName(dtype));
  }
  std::vector<Tensor> items = seq->sequence;
  int64_t pos = static_cast<int64_t>(items.size());
  if (ctx.has_input(2)) {
    AIC_ASSIGN_OR_RETURN(pos, ReadPosition(ctx, 2, pos, /*allow_end=*/true));
  }
  items.insert(items.begin() + pos, t);
  ctx.set_output_value(0, RuntimeValue::Sequence(std::move(items), t.dtype()));
  return absl::OkStatus();
}

// ---- SequenceErase: seq without the element at position (default: the last).

absl::Status InferErase(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  AIC_RETURN_IF_ERROR(CheckPositionInput(ctx, 1));
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status RunErase(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* seq, SequenceInput(ctx, 0));
  std::vector<Tensor> items = seq->sequence;
  const int64_t n = static_cast<int64_t>(items.size());
  if (n == 0) return ctx.Error("cannot erase from an empty sequence");
  int64_t pos = n - 1;
  if (ctx.has_input(1)) {
    AIC_ASSIGN_OR_RETURN(pos, ReadPosition(ctx, 1, n, /*allow_end=*/false));
  }
  items.erase(items.begin() + pos);
  ctx.set_output_value(0, RuntimeValue::Sequence(std::move(items), seq->sequence_dtype));
  return absl::OkStatus();
}

// ---- SequenceLength: int64 scalar.

absl::Status InferLength(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckSequenceInput(ctx, 0));
  ctx.set_output(0, DType::kInt64, Shape::Scalar());
  return absl::OkStatus();
}

absl::Status RunLength(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(const RuntimeValue* seq, SequenceInput(ctx, 0));
  ctx.set_output(0, Tensor::Scalar<int64_t>(static_cast<int64_t>(seq->sequence.size())));
  return absl::OkStatus();
}

Traits EmptyTraits(const OpContext& ctx) {
  return ContainerTraits("SequenceEmpty",
                         absl::StrCat("y = [] of ", DTypeName(EmptyDType(ctx.node()))),
                         Linearity::kUnknown, Invertibility::kUnknown);
}

Traits ConstructTraits(const OpContext& ctx) {
  return ContainerTraits("SequenceConstruct",
                         absl::StrCat("y = [x0 .. x", ctx.num_inputs() - 1, "]"),
                         Linearity::kLinear, Invertibility::kInvertible);
}

Traits AtTraits(const OpContext&) {
  return ContainerTraits("SequenceAt", "y = seq[position]", Linearity::kLinear,
                         Invertibility::kIrreversible, CollapseKind::kSelects,
                         "every other element of the sequence is dropped");
}

Traits InsertTraits(const OpContext& ctx) {
  return ContainerTraits(
      "SequenceInsert",
      ctx.has_input(2) ? "y = seq with x inserted at position" : "y = seq + [x]",
      Linearity::kLinear, Invertibility::kInvertible);
}

Traits EraseTraits(const OpContext& ctx) {
  return ContainerTraits("SequenceErase",
                         ctx.has_input(1) ? "y = seq without seq[position]" : "y = seq[:-1]",
                         Linearity::kLinear, Invertibility::kIrreversible,
                         CollapseKind::kSelects, "one element of the sequence is dropped");
}

Traits LengthTraits(const OpContext&) {
  return ContainerTraits("SequenceLength", "y = len(seq)", Linearity::kUnknown,
                         Invertibility::kIrreversible, CollapseKind::kSelects,
                         "only the number of elements is kept");
}

void Add(OpRegistry& r, const char* op, InferFn infer, TraitsFn traits, KernelFn kernel) {
  r.Register(OpDef{.domain = "",
                   .op_type = op,
                   .since_version = 11,
                   .infer = std::move(infer),
                   .traits = std::move(traits),
                   .cost = ContainerCost,
                   .kernel = std::move(kernel)});
}

}  // namespace

void RegisterSequenceBasicOps(OpRegistry& r) {
  Add(r, "SequenceEmpty", InferEmpty, EmptyTraits, RunEmpty);
  Add(r, "SequenceConstruct", InferConstruct, ConstructTraits, RunConstruct);
  Add(r, "SequenceAt", InferAt, AtTraits, RunAt);
  Add(r, "SequenceInsert", InferInsert, InsertTraits, RunInsert);
  Add(r, "SequenceErase", InferErase, EraseTraits, RunErase);
  Add(r, "SequenceLength", InferLength, LengthTraits, RunLength);
}

void RegisterSequenceOps(OpRegistry& r) {
  RegisterSequenceBasicOps(r);
  RegisterSequenceSplitConcatOps(r);
  RegisterSequenceMapOp(r);
  RegisterOptionalOps(r);
}

}  // namespace aic

#include "ops/sequence/sequence_util.h"

#include "absl/strings/str_cat.h"
#include "ops/util/cost_util.h"

namespace aic {

TypeInfo ElementType(const TypeInfo& container) {
  return container.element ? *container.element : TypeInfo();
}

DType SequenceDType(const TypeInfo& seq) {
  if (seq.kind != TypeInfo::Kind::kSequence || !seq.element) return DType::kUndefined;
  return seq.element->is_tensor() ? seq.element->dtype : DType::kUndefined;
}

absl::Status CheckSequenceInput(const OpContext& ctx, size_t i) {
  const TypeInfo& t = ctx.input_type(i);
  if (t.known() && t.kind != TypeInfo::Kind::kSequence) {
    return ctx.Error("input ", i, " must be a sequence, got ", t.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<const RuntimeValue*> SequenceInput(const KernelContext& ctx, size_t i) {
  const RuntimeValue& v = ctx.input_value(i);
  if (!v.is_sequence()) return ctx.Error("input ", i, " must be a sequence");
  return &v;
}

absl::Status CheckPositionInput(const OpContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const TypeInfo& t = ctx.input_type(i);
  if (!t.known()) return absl::OkStatus();
  if (!t.is_tensor() ||
      (t.dtype != DType::kUndefined && t.dtype != DType::kInt32 && t.dtype != DType::kInt64)) {
    return ctx.Error("position must be an int32 or int64 tensor, got ", t.ToString());
  }
  if (t.shape.has_rank() && t.shape.rank() > 1) {
    return ctx.Error("position must be a scalar, got ", t.shape.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ReadPosition(const KernelContext& ctx, size_t i, int64_t size,
                                     bool allow_end) {
  const RuntimeValue& v = ctx.input_value(i);
  if (!v.is_tensor() || v.tensor.num_elements() != 1) {
    return ctx.Error("position must be a one-element tensor");
  }
  const DType dt = v.tensor.dtype();
  if (dt != DType::kInt32 && dt != DType::kInt64) {
    return ctx.Error("position must be int32 or int64, got ", DTypeName(dt));
  }
  const int64_t pos = static_cast<int64_t>(v.tensor.ElementAsDouble(0));
  const int64_t hi = allow_end ? size : size - 1;
  if (pos < -size || pos > hi) {
    return ctx.Error("position ", pos, " is outside [", -size, ", ", hi, "] for a sequence of ",
                     size);
  }
  return pos < 0 ? pos + size : pos;
}

Traits ContainerTraits(const std::string& semantic_name, const std::string& meaning,
                       Linearity linearity, Invertibility invertibility, CollapseKind collapse,
                       const std::string& collapse_how) {
  Traits t;
  t.semantic_name = semantic_name;
  t.meaning = meaning;
  t.linearity = linearity;
  t.invertibility = invertibility;
  t.collapse = collapse;
  t.collapse_how = collapse_how;
  t.effect = collapse == CollapseKind::kNone ? RepresentationEffect::kPreserves
                                             : RepresentationEffect::kRestricts;
  return t;
}

Cost ContainerCost(const OpContext& ctx) { return BytesOnlyCost(ctx); }

}  // namespace aic

#include "ops/control/control_util.h"

#include "absl/strings/str_cat.h"
#include "ops/sequence/tensor_pieces.h"
#include "ops/util/cost_util.h"

namespace aic {

const Graph* GraphAttr(const Node& node, const char* name) {
  const Attribute* a = node.FindAttr(name);
  return a != nullptr && a->type == AttrType::kGraph ? a->g.get() : nullptr;
}

namespace {

// What is certain about `t` without its dims: kind and element types.
TypeInfo Weaken(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::kTensor: return TypeInfo::Tensor(t.dtype, Shape::UnknownRank());
    case TypeInfo::Kind::kSequence:
      return TypeInfo::SequenceOf(t.element ? Weaken(*t.element) : TypeInfo());
    case TypeInfo::Kind::kOptional:
      return TypeInfo::OptionalOf(t.element ? Weaken(*t.element) : TypeInfo());
    default: return TypeInfo();
  }
}

TypeInfo ElementOrNone(const TypeInfo& t) { return t.element ? *t.element : TypeInfo(); }

}  // namespace

TypeInfo MergeTypes(const TypeInfo& a, const TypeInfo& b, const OpContext& ctx) {
  if (!a.known()) return Weaken(b);
  if (!b.known()) return Weaken(a);
  if (a.kind != b.kind) {
    // optional(T) against T: the value may be absent, so it stays optional.
    if (a.kind == TypeInfo::Kind::kOptional) {
      return TypeInfo::OptionalOf(MergeTypes(ElementOrNone(a), b, ctx));
    }
    if (b.kind == TypeInfo::Kind::kOptional) {
      return TypeInfo::OptionalOf(MergeTypes(a, ElementOrNone(b), ctx));
    }
    return TypeInfo();
  }
  switch (a.kind) {
    case TypeInfo::Kind::kTensor: {
      const DType dtype = a.dtype == b.dtype ? a.dtype : DType::kUndefined;
      if (!a.shape.has_rank() || !b.shape.has_rank() || a.shape.rank() != b.shape.rank()) {
        return TypeInfo::Tensor(dtype, Shape::UnknownRank());
      }
      std::vector<Dim> dims;
      for (size_t i = 0; i < a.shape.dims().size(); ++i) {
        const Dim& da = a.shape.dims()[i];
        dims.push_back(da.SameAs(b.shape.dims()[i]) ? da : ctx.FreshDim());
      }
      return TypeInfo::Tensor(dtype, Shape(std::move(dims)));
    }
    case TypeInfo::Kind::kSequence:
      return TypeInfo::SequenceOf(MergeTypes(ElementOrNone(a), ElementOrNone(b), ctx));
    case TypeInfo::Kind::kOptional:
      return TypeInfo::OptionalOf(MergeTypes(ElementOrNone(a), ElementOrNone(b), ctx));
    default: return a == b ? a : TypeInfo();
  }
}

TypeInfo StackedType(const TypeInfo& per_iteration, const Dim& dim, int64_t axis) {
  if (!per_iteration.is_tensor()) return TypeInfo();
  if (!per_iteration.shape.has_rank()) {
    return TypeInfo::Tensor(per_iteration.dtype, Shape::UnknownRank());
  }
  std::vector<Dim> dims = per_iteration.shape.dims();
  if (axis < 0 || axis > static_cast<int64_t>(dims.size())) {
    return TypeInfo::Tensor(per_iteration.dtype, Shape::UnknownRank());
  }
  dims.insert(dims.begin() + axis, dim);
  return TypeInfo::Tensor(per_iteration.dtype, Shape(std::move(dims)));
}

absl::StatusOr<Tensor> EmptyStack(const TypeInfo& per_iteration, int64_t axis) {
  if (!per_iteration.is_tensor() || per_iteration.dtype == DType::kUndefined) {
    return absl::InvalidArgumentError(
        "no iterations ran and the body does not declare the scan output's dtype");
  }
  std::vector<int64_t> dims;
  if (per_iteration.shape.has_rank()) {
    for (const Dim& d : per_iteration.shape.dims()) dims.push_back(d.is_value() ? d.value() : 0);
  }
  if (axis < 0 || axis > static_cast<int64_t>(dims.size())) axis = 0;
  dims.insert(dims.begin() + axis, 0);
  return Tensor(per_iteration.dtype, dims);
}

absl::StatusOr<Tensor> StackIterations(const std::vector<Tensor>& parts,
                                       const TypeInfo& per_iteration, int64_t axis) {
  if (parts.empty()) return EmptyStack(per_iteration, axis);
  return ConcatAlongAxis(parts, axis, /*new_axis=*/true);
}

absl::StatusOr<SubgraphRunner*> RunnerOf(const KernelContext& ctx) {
  if (ctx.subgraph_runner() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(ctx.node().Describe(), ": needs an executor to run its subgraph"));
  }
  return ctx.subgraph_runner();
}

Traits ControlFlowTraits(const std::string& semantic_name, const std::string& meaning,
                         const std::string& removable_when) {
  Traits t;
  t.semantic_name = semantic_name;
  t.meaning = meaning;
  t.linearity = Linearity::kUnknown;
  t.invertibility = Invertibility::kUnknown;
  t.effect = RepresentationEffect::kUnknown;
  t.removable_when = removable_when;
  t.safe_transform_when =
      "never matched or merged as a whole; each body is optimized on its own, keeping its "
      "inputs and outputs";
  return t;
}

Cost ControlFlowCost(const OpContext& ctx, bool iterations_known) {
  Cost c = BytesOnlyCost(ctx);
  if (!iterations_known) c.known = false;
  return c;
}

}  // namespace aic

// Inference, traits and kernel-argument helpers shared by the elementwise and
// activation families (see elementwise_common.h).
#include "ops/math/elementwise_common.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

bool InTypeSet(TypeSet s, DType t) {
  const bool is_float = IsFloatingPoint(t);
  switch (s) {
    case TypeSet::kFloat: return is_float;
    case TypeSet::kNumeric: return is_float || IsInteger(t);
    case TypeSet::kInteger: return IsInteger(t);
    case TypeSet::kBool: return t == DType::kBool;
    case TypeSet::kNumericOrBool: return is_float || IsInteger(t) || t == DType::kBool;
  }
  return false;
}

std::vector<int64_t> LegacyAlignDims(const Node& node, int64_t opset, size_t rank_a,
                                     std::vector<int64_t> dims_b) {
  if (opset >= 7 || node.GetInt("broadcast", 0) == 0 || !node.HasAttr("axis")) return dims_b;
  int64_t axis = node.GetInt("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank_a);
  // B covers A's dims [axis, axis + rank_b): pad the rest with 1s.
  int64_t trailing = static_cast<int64_t>(rank_a) - axis - static_cast<int64_t>(dims_b.size());
  for (int64_t k = 0; k < trailing; ++k) dims_b.push_back(1);
  return dims_b;
}

absl::Status RequireTensorInputs(const KernelContext& ctx, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) {
      return ctx.Error("input ", i, " is missing or not a tensor");
    }
  }
  return absl::OkStatus();
}

namespace {

// "a dtype in the op's set" check shared by every inference helper; an
// undefined dtype (untyped input) passes.
absl::Status CheckDType(const OpContext& ctx, size_t i, TypeSet s) {
  DType t = ctx.input_dtype(i);
  if (t == DType::kUndefined || InTypeSet(s, t)) return absl::OkStatus();
  return ctx.Error("input ", i, " has dtype ", DTypeName(t), ", which this op does not take");
}

}  // namespace

absl::Status InferSameAsInput(OpContext& ctx, TypeSet s) {
  if (!ctx.has_input(0)) return ctx.Error("missing input 0");
  AIC_RETURN_IF_ERROR(CheckDType(ctx, 0, s));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return absl::OkStatus();
}

absl::Status InferPredicate(OpContext& ctx, TypeSet s) {
  if (!ctx.has_input(0)) return ctx.Error("missing input 0");
  AIC_RETURN_IF_ERROR(CheckDType(ctx, 0, s));
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
  return absl::OkStatus();
}

absl::Status InferBroadcast(OpContext& ctx, TypeSet s, std::optional<DType> out) {
  std::vector<Shape> shapes;
  DType dtype = DType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    AIC_RETURN_IF_ERROR(CheckDType(ctx, i, s));
    DType t = ctx.input_dtype(i);
    if (t != DType::kUndefined) {
      if (dtype != DType::kUndefined && t != dtype) {
        return ctx.Error("input dtypes differ: ", DTypeName(dtype), " and ", DTypeName(t));
      }
      dtype = t;
    }
    shapes.push_back(ctx.input_shape(i));
  }
  if (shapes.empty()) return ctx.Error("needs at least one input");
  // Opset < 7 with broadcast=1 and axis: B aligns at `axis`, pad with 1s.
  if (ctx.opset() < 7 && shapes.size() == 2 && shapes[0].has_rank() && shapes[1].has_rank() &&
      ctx.node().GetInt("broadcast", 0) != 0 && ctx.node().HasAttr("axis")) {
    int64_t axis = ctx.node().GetInt("axis", 0);
    if (axis < 0) axis += shapes[0].rank();
    std::vector<Dim> dims = shapes[1].dims();
    for (int64_t k = axis + shapes[1].rank(); k < shapes[0].rank(); ++k) dims.push_back(Dim(1));
    shapes[1] = Shape(std::move(dims));
  }
  absl::StatusOr<Shape> shape = BroadcastShapes(shapes, [&ctx] { return ctx.FreshDim(); });
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.set_output(0, out.value_or(dtype), *std::move(shape));
  return absl::OkStatus();
}

InferFn SameAsInputInfer(TypeSet s) {
  return [s](OpContext& ctx) { return InferSameAsInput(ctx, s); };
}
InferFn PredicateInfer(TypeSet s) {
  return [s](OpContext& ctx) { return InferPredicate(ctx, s); };
}
InferFn BroadcastInfer(TypeSet s, std::optional<DType> out) {
  return [s, out](OpContext& ctx) { return InferBroadcast(ctx, s, out); };
}
InferFn BinaryInfer(TypeSet s, std::optional<DType> out) {
  return [s, out](OpContext& ctx) {
    if (ctx.num_inputs() != 2 || !ctx.has_input(0) || !ctx.has_input(1)) {
      return ctx.Error("takes 2 inputs, got ", ctx.num_inputs());
    }
    return InferBroadcast(ctx, s, out);
  };
}
CostFn ElementwiseCostFn(int64_t flops_per_element) {
  return [flops_per_element](const OpContext& ctx) {
    return ElementwiseCost(ctx, flops_per_element);
  };
}

Traits PointwiseTraits(const OpContext& ctx, PointwiseInfo info) {
  Traits t;
  t.semantic_name = std::move(info.name);
  t.meaning = std::move(info.meaning);
  t.linearity = info.linearity;
  t.invertibility = info.invertibility;
  t.collapse = info.collapse;
  t.collapse_how = std::move(info.collapse_how);
  t.elementwise = true;
  t.effect = t.collapse_producing() ? RepresentationEffect::kRestricts
                                    : RepresentationEffect::kPreserves;
  if (ctx.num_inputs() > 0 && ctx.input_type(0).is_tensor()) {
    t.effect_detail = absl::StrCat("shape ", ctx.input_shape(0).ToString(), " kept");
  }
  t.fuses_with = std::move(info.fuses_with);
  t.removable_when = std::move(info.removable_when);
  t.safe_transform_when = std::move(info.safe_transform_when);
  return t;
}

TraitsFn PointwiseTraitsFn(PointwiseInfo info) {
  return [info](const OpContext& ctx) { return PointwiseTraits(ctx, info); };
}

OpDef MakeOpDef(const char* op_type, int since_version, InferFn infer, TraitsFn traits,
                CostFn cost, KernelFn kernel) {
  OpDef def;
  def.op_type = op_type;
  def.since_version = since_version;
  def.infer = std::move(infer);
  def.traits = std::move(traits);
  def.cost = std::move(cost);
  def.kernel = std::move(kernel);
  return def;
}

std::vector<std::string> ActivationFusions() { return {"Gemm", "MatMul", "Conv", "Add"}; }

bool AllNonZero(const Tensor& t) {
  if (t.dtype() == DType::kString) return false;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.ElementAsDouble(i) == 0.0) return false;
  }
  return true;
}

}  // namespace aic

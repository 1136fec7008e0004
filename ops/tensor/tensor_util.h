// Shared helpers of the tensor-manipulation op families (shape ops, data
// movement, indexing, resize): reading integer operands, dtype-agnostic
// element copies (strings included), the index-remapping driver that most
// reference kernels here reduce to, symbolic-dim arithmetic and the common
// trait shapes ("pure re-indexing", "selects elements").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "ops/op_context.h"
#include "ops/op_def.h"
#include "ops/traits.h"

namespace aic {

// The elements of an integer (or bool/float, truncated) tensor as int64.
std::vector<int64_t> TensorToInt64s(const Tensor& t);
// Constant input i as int64s, or nullopt when not known statically.
std::optional<std::vector<int64_t>> ConstantInts(const OpContext& ctx, size_t i);

// ConstantOfShape's fill: its value attribute's one element, float 0 without
// one (the reference kernel and the CPU backend's both fill with it).
Tensor ConstantOfShapeFill(const Node& node);

// Copies element `si` of `src` to element `di` of `dst` (same dtype; strings too).
void CopyElement(const Tensor& src, int64_t si, Tensor& dst, int64_t di);
// Copies n consecutive elements.
void CopyElements(const Tensor& src, int64_t si, Tensor& dst, int64_t di, int64_t n);
// A new tensor of `dims` whose element at each multi-index is src[source(index)],
// or left zero ("" for strings) where source returns -1.
Tensor Remap(const Tensor& src, const std::vector<int64_t>& dims,
             const std::function<int64_t(const std::vector<int64_t>&)>& source);
// Row-major multi-index iteration: advances `idx` within `dims`; false at the end.
bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims);
// True for dtypes these data-movement kernels can copy element by element.
bool IsCopyableDType(DType t);

// Unimplemented naming the node when element copies cannot handle dtype t.
absl::Status CheckCopyable(const KernelContext& ctx, DType t);
// ctx.FreshDim as a callable, for helpers that take a `fresh` function.
std::function<Dim()> FreshFn(const OpContext& ctx);

// Flat offset of a multi-index under row-major strides.
int64_t OffsetOf(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides);
// OpDef with the default domain, written out so every registration stays one call.
OpDef MakeOp(std::string op_type, int since_version, InferFn infer, TraitsFn traits, CostFn cost,
             KernelFn kernel);
// Bytes read and written, no FLOPs: the cost of pure data movement.
Cost MovementCost(const OpContext& ctx);

// Shape's [start, end) range of dims for a rank (start/end attributes from opset 15, clamped).
std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t opset, int64_t rank);
// When input i is computed from shapes (Shape, and Gather, Slice, Concat,
// Unsqueeze, Cast and arithmetic with constants over it), its elements as
// dims: known values, the symbols of the dims they were read from, or unknown.
// Lets Gather/Slice of a shape resolve to a constant when the picked dims are
// static, and a Reshape/Expand target built from shapes keep its symbols.
// Values may be any integer (a Reshape target's -1 or 0 included).
std::optional<std::vector<Dim>> ShapeValueOf(const OpContext& ctx, size_t i);
// A Constant node's value (value, value_int(s), value_float(s), value_string(s)).
absl::StatusOr<Tensor> ConstantNodeValue(const Node& node);

// Product of dims: known when all are known, the single non-1 symbol when the
// rest are 1, else `fresh`.
Dim DimProduct(const std::vector<Dim>& dims, const std::function<Dim()>& fresh);
// a + b, a - b, ... on known dims; `fresh` otherwise.
Dim DimAdd(const Dim& a, const Dim& b, const std::function<Dim()>& fresh);

// Normalizes each axis against rank; error on out-of-range or repeated axes.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank);

// The traits of an op that only re-indexes its input: linear, invertible, no
// collapse, preserves.
Traits ReindexTraits(const OpContext& ctx, std::string semantic, std::string meaning);
// The traits of an op that keeps a subset of its input: linear, irreversible,
// selects (unless `keeps_all`, then like ReindexTraits).
Traits SelectTraits(const OpContext& ctx, std::string semantic, std::string meaning, bool keeps_all,
                    std::string how);
// "[2, 3] → [6]" from the first input and first output shapes.
std::string ShapeChange(const OpContext& ctx);

}  // namespace aic

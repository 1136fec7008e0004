// ZipMap (ai.onnx.ml opset 1): the classifier's probability matrix X [N, C]
// as N maps {label_c: X[n, c]}, what skl2onnx appends to classifiers unless
// asked not to. The value is RuntimeValue's map form (a sequence of maps that
// share one key set: the C labels, and a copy of X as the values; a copy
// because an executor may reuse X's storage once ZipMap has run);
// `aic-onnx run` writes it as JSON.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/tensor/tensor_util.h"

namespace aic {

namespace {

// The keys as a [C] tensor: classlabels_int64s or classlabels_strings.
absl::StatusOr<Tensor> ZipMapKeys(const Node& node) {
  AIC_ASSIGN_OR_RETURN(ClassLabels labels, DecodeClassLabels(node, "classlabels_int64s"));
  if (labels.strings) return Tensor::FromStrings(labels.names, {labels.size()});
  return Tensor::FromVector<int64_t>(labels.ints, {labels.size()});
}

absl::Status InferZipMap(OpContext& ctx) {
  absl::StatusOr<Tensor> keys = ZipMapKeys(ctx.node());
  if (!keys.ok()) return ctx.Error(keys.status().message());
  const TypeInfo& x = ctx.input_type(0);
  if (x.known() && (!x.is_tensor() || (x.dtype != DType::kUndefined && x.dtype != DType::kFloat))) {
    return ctx.Error("X must be a float tensor, got ", x.ToString());
  }
  if (x.known() && x.shape.has_rank()) {
    if (x.shape.rank() != 1 && x.shape.rank() != 2) return ctx.Error("X must be [N, C] or [C], got ", x.shape.ToString());
    const Dim& c = x.shape[static_cast<size_t>(x.shape.rank() - 1)];
    if (c.is_value() && c.value() != keys->num_elements()) {
      return ctx.Error("X has ", c.value(), " columns for ", keys->num_elements(), " labels");
    }
  }
  TypeInfo map;
  map.kind = TypeInfo::Kind::kMap;
  map.dtype = keys->dtype();
  map.element = std::make_shared<const TypeInfo>(TypeInfo::Tensor(DType::kFloat, Shape::UnknownRank()));
  ctx.set_output_type(0, TypeInfo::SequenceOf(map));
  return absl::OkStatus();
}

absl::Status ZipMapKernel(KernelContext& ctx) {
  absl::StatusOr<Tensor> keys = ZipMapKeys(ctx.node());
  if (!keys.ok()) return ctx.Error(keys.status().message());
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("X must be a tensor");
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat) return ctx.Error("X must be float, got ", DTypeName(x.dtype()));
  if (x.rank() != 1 && x.rank() != 2) return ctx.Error("X must be [N, C] or [C], got ", DimsToString(x.dims()));
  const int64_t c = x.dim(x.rank() - 1);
  if (c != keys->num_elements()) return ctx.Error("X has ", c, " columns for ", keys->num_elements(), " labels");
  ctx.set_output_value(0, RuntimeValue::MapSequence(*keys, x.Clone().WithDims({x.rank() == 2 ? x.dim(0) : 1, c})));
  return absl::OkStatus();
}

}  // namespace

void RegisterZipMapOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "ZipMap",
      .since_version = 1,
      .infer = InferZipMap,
      .traits = [](const OpContext& ctx) { return ReindexTraits(ctx, "ZipMap", "z[n] = {label_c: x[n, c]}"); },
      .cost = MovementCost,
      .kernel = ZipMapKernel,
  });
}

}  // namespace aic

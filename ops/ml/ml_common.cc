#include "ops/ml/ml_common.h"

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"

namespace aic {

Tensor ClassLabels::Pick(const std::vector<int64_t>& picks) const {
  const int64_t n = static_cast<int64_t>(picks.size());
  if (strings) {
    std::vector<std::string> out;
    out.reserve(picks.size());
    for (int64_t p : picks) out.push_back(names[static_cast<size_t>(p)]);
    return Tensor::FromStrings(std::move(out), {n});
  }
  std::vector<int64_t> out;
  out.reserve(picks.size());
  for (int64_t p : picks) out.push_back(ints[static_cast<size_t>(p)]);
  return Tensor::FromVector<int64_t>(out, {n});
}

absl::StatusOr<ClassLabels> DecodeClassLabels(const Node& node, const char* ints_attr) {
  ClassLabels labels;
  const Attribute* s = node.FindAttr("classlabels_strings");
  const Attribute* i = node.FindAttr(ints_attr);
  const bool has_s = s != nullptr && s->type == AttrType::kStrings && !s->strings.empty();
  const bool has_i = i != nullptr && i->type == AttrType::kInts && !i->ints.empty();
  if (has_s == has_i) {
    return absl::InvalidArgumentError(
        absl::StrCat("exactly one of classlabels_strings and ", ints_attr, " must be set"));
  }
  labels.strings = has_s;
  if (has_s) labels.names = s->strings;
  if (has_i) labels.ints = i->ints;
  return labels;
}

absl::StatusOr<std::vector<double>> FloatsOrTensor(const Node& node, const std::string& name) {
  const Attribute* plain = node.FindAttr(name);
  const Attribute* tensor = node.FindAttr(name + "_as_tensor");
  if (plain != nullptr && tensor != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("both ", name, " and ", name, "_as_tensor are set"));
  }
  if (tensor != nullptr) {
    if (tensor->type != AttrType::kTensor || !IsRealFloat(tensor->t.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(name, "_as_tensor must be a float or double tensor"));
    }
    return ToDoubles(tensor->t);
  }
  if (plain == nullptr) return std::vector<double>();
  if (plain->type != AttrType::kFloats) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a list of floats"));
  }
  return std::vector<double>(plain->floats.begin(), plain->floats.end());
}

Tensor FloatTensor(const std::vector<double>& values, std::vector<int64_t> dims) {
  return Tensor::FromVector<float>(std::vector<float>(values.begin(), values.end()), std::move(dims));
}

bool IsMlNumeric(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kInt64 || t == DType::kInt32;
}

absl::StatusOr<FeatureRows> ReadFeatureRows(const KernelContext& ctx, size_t input) {
  if (!ctx.has_input(input) || !ctx.input_value(input).is_tensor()) {
    return ctx.Error("input ", input, " (X) must be a tensor");
  }
  const Tensor& x = ctx.input(input);
  if (!IsMlNumeric(x.dtype())) {
    return ctx.Error("X must be float, double, int32 or int64, got ", DTypeName(x.dtype()));
  }
  if (x.rank() != 1 && x.rank() != 2) return ctx.Error("X must be [N, F] or [F], got ", DimsToString(x.dims()));
  FeatureRows r;
  r.rows = x.rank() == 2 ? x.dim(0) : 1;
  r.features = x.dim(x.rank() - 1);
  r.x = ToDoubles(x);
  return r;
}

absl::Status CheckFeatureInput(const OpContext& ctx, size_t input) {
  const TypeInfo& x = ctx.input_type(input);
  if (!x.known()) return absl::OkStatus();
  if (!x.is_tensor() || (x.dtype != DType::kUndefined && !IsMlNumeric(x.dtype))) {
    return ctx.Error("X must be a float, double, int32 or int64 tensor, got ", x.ToString());
  }
  if (x.shape.has_rank() && x.shape.rank() != 1 && x.shape.rank() != 2) {
    return ctx.Error("X must be [N, F] or [F], got ", x.shape.ToString());
  }
  return absl::OkStatus();
}

Dim RowsDim(const OpContext& ctx, size_t input) {
  const Shape& x = ctx.input_shape(input);
  if (!x.has_rank()) return ctx.FreshDim();
  if (x.rank() == 1) return Dim(1);
  return x[0].is_unknown() ? ctx.FreshDim() : x[0];
}

std::optional<int64_t> StaticFeatures(const OpContext& ctx, size_t input) {
  const Shape& x = ctx.input_shape(input);
  if (!x.has_rank() || x.rank() == 0 || !x[static_cast<size_t>(x.rank() - 1)].is_value()) return std::nullopt;
  return x[static_cast<size_t>(x.rank() - 1)].value();
}

}  // namespace aic

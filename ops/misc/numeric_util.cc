// Double-precision conversions for the misc and rnn reference kernels.
#include "ops/misc/numeric_util.h"

#include "ops/util/float_convert.h"

namespace aic {

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[static_cast<size_t>(i)] = t.ElementAsDouble(i);
  return v;
}

std::vector<int64_t> ToInt64s(const Tensor& t) {
  Tensor c = ConvertTensor(t, DType::kInt64);
  const int64_t* p = c.data<int64_t>();
  return std::vector<int64_t>(p, p + c.num_elements());
}

Tensor FromDoubles(const std::vector<double>& values, std::vector<int64_t> dims, DType dtype) {
  Tensor d = Tensor::FromVector<double>(values, std::move(dims));
  return ConvertTensor(d, dtype);
}

namespace {

absl::Status CheckNumeric(const KernelContext& ctx, size_t i) {
  if (!ctx.input_value(i).is_tensor()) return ctx.Error("input ", i, " must be a tensor");
  const DType t = ctx.input(i).dtype();
  if (!IsFloatingPoint(t) && !IsInteger(t) && t != DType::kBool) {
    return ctx.Error("input ", i, " has unsupported dtype ", DTypeName(t));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RequireNumericInputs(const KernelContext& ctx, std::initializer_list<size_t> required,
                                  std::initializer_list<size_t> optional) {
  for (size_t i : required) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is required");
    AIC_RETURN_IF_ERROR(CheckNumeric(ctx, i));
  }
  for (size_t i : optional) {
    if (ctx.has_input(i)) AIC_RETURN_IF_ERROR(CheckNumeric(ctx, i));
  }
  return absl::OkStatus();
}

bool IsRealFloat(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

absl::Status ExpectFloatInput(const OpContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i) || !ctx.input_type(i).known()) return absl::OkStatus();
  if (!ctx.input_type(i).is_tensor() || !IsRealFloat(ctx.input_dtype(i))) {
    return ctx.Error(what, " must be a float tensor, got ", ctx.input_type(i).ToString());
  }
  return absl::OkStatus();
}

}  // namespace aic

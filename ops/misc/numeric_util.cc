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

std::string ShapeText(const Shape& s) { return s.ToString(); }

}  // namespace aic

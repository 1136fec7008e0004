#include "ops/math/matmul_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

std::vector<double> TensorToDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.ElementAsDouble(static_cast<int64_t>(i));
  return v;
}

std::vector<int64_t> TensorToInt64(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
  absl::Status s = DispatchInteger(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
  });
  if (!s.ok()) {  // bool or real types: through double
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<int64_t>(t.ElementAsDouble(static_cast<int64_t>(i)));
    }
  }
  return v;
}

Tensor DoublesToTensor(const std::vector<double>& values, std::vector<int64_t> dims, DType dtype) {
  Tensor t = Tensor::FromVector<double>(values, std::move(dims));
  return dtype == DType::kDouble ? t : ConvertTensor(t, dtype);
}

Tensor Int64ToTensor(const std::vector<int64_t>& values, std::vector<int64_t> dims, DType dtype) {
  Tensor t = Tensor::FromVector<int64_t>(values, std::move(dims));
  return dtype == DType::kInt64 ? t : ConvertTensor(t, dtype);
}

bool IsRealDType(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

bool IsQuant8DType(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

int64_t QuantizeValue(double v, int64_t zero_point, DType dtype) {
  double r = std::nearbyint(v) + static_cast<double>(zero_point);  // default mode: half to even
  double lo = -2147483648.0, hi = 2147483647.0;
  if (dtype == DType::kUint8) lo = 0, hi = 255;
  if (dtype == DType::kInt8) lo = -128, hi = 127;
  if (std::isnan(r)) return 0;
  return static_cast<int64_t>(std::min(hi, std::max(lo, r)));
}

bool NextMultiIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t k = idx.size(); k-- > 0;) {
    if (++idx[k] < dims[k]) return true;
    idx[k] = 0;
  }
  return false;
}

Traits LinearLayerTraits(std::string semantic_name, std::string meaning, int64_t in_features,
                         int64_t out_features, bool has_bias) {
  Traits t;
  t.semantic_name = std::move(semantic_name);
  t.meaning = std::move(meaning);
  t.linearity = has_bias ? Linearity::kAffine : Linearity::kLinear;
  // Square weights are invertible exactly when full rank; that needs the
  // weight's spectrum, which analysis computes, not the op.
  t.invertibility = in_features == out_features && in_features > 0
                        ? Invertibility::kInvertibleIfFullRank
                        : Invertibility::kUnknown;
  t.collapse = CollapseKind::kNone;
  t.trainable = true;
  if (in_features > 0 && out_features > 0) {
    t.effect = out_features > in_features   ? RepresentationEffect::kExpands
               : out_features < in_features ? RepresentationEffect::kRestricts
                                            : RepresentationEffect::kPreserves;
    t.effect_detail = absl::StrCat(in_features, " → ", out_features);
  }
  t.fuses_with = {"Add", "Relu", "Gelu", "Sigmoid", "Tanh", "BatchNormalization"};
  t.safe_transform_when =
      "fold a following constant Add into the bias and a following inference BatchNorm into the "
      "weight (fp32/fp64, single consumer)";
  return t;
}

}  // namespace aic

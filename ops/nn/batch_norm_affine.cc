#include "ops/nn/batch_norm_affine.h"

#include <cmath>

namespace aic {

namespace {

Tensor ToF32(const std::vector<double>& v) {
  Tensor t(DType::kFloat, {static_cast<int64_t>(v.size())});
  float* p = t.mutable_data<float>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
  return t;
}

}  // namespace

Tensor ChannelAffine::ScaleF32() const { return ToF32(scale); }
Tensor ChannelAffine::ShiftF32() const { return ToF32(shift); }

std::optional<ChannelAffine> BatchNormAsAffine(const Node& bn, const Tensor* gamma, const Tensor* beta,
                                               const Tensor* mean, const Tensor* var, int64_t channels) {
  if (bn.GetInt("training_mode", 0) != 0) return std::nullopt;
  for (size_t i = 1; i < bn.num_outputs(); ++i) {
    if (bn.output(i) != nullptr) return std::nullopt;  // running statistics wanted: training
  }
  if (!gamma || !beta || !mean || !var) return std::nullopt;
  int64_t c = channels >= 0 ? channels : gamma->num_elements();
  for (const Tensor* t : {gamma, beta, mean, var}) {
    if (t->num_elements() != c || !IsFloatingPoint(t->dtype())) return std::nullopt;
  }
  double eps = bn.GetFloat("epsilon", 1e-5f);
  ChannelAffine a;
  a.scale.resize(c);
  a.shift.resize(c);
  for (int64_t i = 0; i < c; ++i) {
    a.scale[i] = gamma->ElementAsDouble(i) / std::sqrt(var->ElementAsDouble(i) + eps);
    a.shift[i] = beta->ElementAsDouble(i) - mean->ElementAsDouble(i) * a.scale[i];
  }
  return a;
}

}  // namespace aic

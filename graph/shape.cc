#include "graph/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/status.h"

namespace aic {

bool Dim::SameAs(const Dim& other) const {
  if (is_value() && other.is_value()) return value_ == other.value_;
  if (is_symbol() && other.is_symbol()) return symbol_ == other.symbol_;
  return false;
}

std::string Dim::ToString() const {
  switch (kind_) {
    case Kind::kValue: return absl::StrCat(value_);
    case Kind::kSymbol: return symbol_;
    case Kind::kUnknown: return "?";
  }
  return "?";
}

Shape Shape::FromValues(const std::vector<int64_t>& values) {
  std::vector<Dim> dims;
  dims.reserve(values.size());
  for (int64_t v : values) dims.emplace_back(v);
  return Shape(std::move(dims));
}

const std::vector<Dim>& Shape::dims() const {
  AIC_CHECK(dims_.has_value(), "dims() of a shape with unknown rank");
  return *dims_;
}

std::vector<Dim>& Shape::mutable_dims() {
  AIC_CHECK(dims_.has_value(), "mutable_dims() of a shape with unknown rank");
  return *dims_;
}

bool Shape::IsStatic() const {
  if (!dims_) return false;
  for (const Dim& d : *dims_) {
    if (!d.is_value()) return false;
  }
  return true;
}

std::vector<int64_t> Shape::Values() const {
  AIC_CHECK(IsStatic(), "Values() of a non-static shape ", ToString());
  std::vector<int64_t> out;
  out.reserve(dims_->size());
  for (const Dim& d : *dims_) out.push_back(d.value());
  return out;
}

std::optional<int64_t> Shape::NumElements() const {
  if (!IsStatic()) return std::nullopt;
  int64_t n = 1;
  for (const Dim& d : *dims_) n *= d.value();
  return n;
}

std::string Shape::ToString() const {
  if (!dims_) return "unknown rank";
  return absl::StrCat("[", absl::StrJoin(*dims_, ", ", [](std::string* out, const Dim& d) {
                        out->append(d.ToString());
                      }), "]");
}

}  // namespace aic

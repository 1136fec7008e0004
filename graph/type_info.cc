#include "graph/type_info.h"

#include "absl/strings/str_cat.h"

namespace aic {

bool TypeInfo::operator==(const TypeInfo& other) const {
  if (kind != other.kind || dtype != other.dtype || !(shape == other.shape) ||
      denotation != other.denotation) {
    return false;
  }
  if ((element == nullptr) != (other.element == nullptr)) return false;
  return element == nullptr || *element == *other.element;
}

std::string TypeInfo::ToString() const {
  switch (kind) {
    case Kind::kNone: return "?";
    case Kind::kTensor: return absl::StrCat(DTypeName(dtype), shape.ToString());
    case Kind::kSparseTensor: return absl::StrCat("sparse ", DTypeName(dtype), shape.ToString());
    case Kind::kSequence: return absl::StrCat("seq(", element ? element->ToString() : "?", ")");
    case Kind::kOptional: return absl::StrCat("optional(", element ? element->ToString() : "?", ")");
    case Kind::kMap:
      return absl::StrCat("map(", DTypeName(dtype), ", ", element ? element->ToString() : "?", ")");
  }
  return "?";
}

}  // namespace aic

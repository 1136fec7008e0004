// Two inputs' views of one dim, as ops whose inputs share dims (attention's
// heads and lengths, a state's size) reconcile them in shape inference: a
// known value wins over a symbol, a symbol over unknown; two known values must
// agree, else an error naming `what`.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/shape.h"

namespace aic {

inline absl::Status UnifyDim(Dim& into, const Dim& other, const char* what) {
  if (other.is_value()) {
    if (into.is_value() && into.value() != other.value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is ", into.value(), " in one input and ", other.value(), " in another"));
    }
    into = other;
  } else if (into.is_unknown()) {
    into = other;
  }
  return absl::OkStatus();
}

}  // namespace aic

// Dtype dispatch for kernels: call a generic lambda with the C++ element type.
//
//   AIC_RETURN_IF_ERROR(DispatchNumeric(t.dtype(), [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//   }));
//
// fp16 and bf16 are not listed: reference kernels compute them by converting
// through float (see ops/util/float_convert.h).
#pragma once

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/dtype.h"

namespace aic {

template <typename T>
struct TypeTag {
  using type = T;
};

// float, double.
template <typename F>
absl::Status DispatchFloat(DType t, F&& f) {
  switch (t) {
    case DType::kFloat: f(TypeTag<float>{}); return absl::OkStatus();
    case DType::kDouble: f(TypeTag<double>{}); return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrCat("dtype ", DTypeName(t), " not supported here"));
  }
}

// Signed and unsigned integers 8..64 bits.
template <typename F>
absl::Status DispatchInteger(DType t, F&& f) {
  switch (t) {
    case DType::kInt8: f(TypeTag<int8_t>{}); return absl::OkStatus();
    case DType::kInt16: f(TypeTag<int16_t>{}); return absl::OkStatus();
    case DType::kInt32: f(TypeTag<int32_t>{}); return absl::OkStatus();
    case DType::kInt64: f(TypeTag<int64_t>{}); return absl::OkStatus();
    case DType::kUint8: f(TypeTag<uint8_t>{}); return absl::OkStatus();
    case DType::kUint16: f(TypeTag<uint16_t>{}); return absl::OkStatus();
    case DType::kUint32: f(TypeTag<uint32_t>{}); return absl::OkStatus();
    case DType::kUint64: f(TypeTag<uint64_t>{}); return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrCat("dtype ", DTypeName(t), " not supported here"));
  }
}

// float, double and all integers.
template <typename F>
absl::Status DispatchNumeric(DType t, F&& f) {
  if (t == DType::kFloat || t == DType::kDouble) return DispatchFloat(t, std::forward<F>(f));
  return DispatchInteger(t, std::forward<F>(f));
}

// Numeric plus bool (stored as uint8_t-sized bool).
template <typename F>
absl::Status DispatchNumericOrBool(DType t, F&& f) {
  if (t == DType::kBool) {
    f(TypeTag<bool>{});
    return absl::OkStatus();
  }
  return DispatchNumeric(t, std::forward<F>(f));
}

}  // namespace aic

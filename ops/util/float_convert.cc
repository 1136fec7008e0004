#include "ops/util/float_convert.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "support/half.h"

namespace aic {

bool IsHalfType(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

Tensor WidenToFloat(const Tensor& t) {
  if (!IsHalfType(t.dtype())) return t;
  return ConvertTensor(t, DType::kFloat);
}

Tensor NarrowFromFloat(const Tensor& t, DType target) {
  if (!IsHalfType(target)) return t;
  return ConvertTensor(t, target);
}

namespace {

// Reads element i of any numeric tensor as double, or as int64 exactly when
// the source is integral (doubles lose precision above 2^53).
struct Scalar {
  bool is_int;
  bool is_unsigned;
  int64_t i;
  uint64_t u;
  double d;
};

Scalar Read(const Tensor& t, int64_t i) {
  Scalar s{false, false, 0, 0, 0.0};
  switch (t.dtype()) {
    case DType::kInt8: s = {true, false, t.data<int8_t>()[i], 0, 0}; break;
    case DType::kInt16: s = {true, false, t.data<int16_t>()[i], 0, 0}; break;
    case DType::kInt32: s = {true, false, t.data<int32_t>()[i], 0, 0}; break;
    case DType::kInt64: s = {true, false, t.data<int64_t>()[i], 0, 0}; break;
    case DType::kUint8: s = {true, true, 0, t.data<uint8_t>()[i], 0}; break;
    case DType::kUint16: s = {true, true, 0, t.data<uint16_t>()[i], 0}; break;
    case DType::kUint32: s = {true, true, 0, t.data<uint32_t>()[i], 0}; break;
    case DType::kUint64: s = {true, true, 0, t.data<uint64_t>()[i], 0}; break;
    case DType::kBool: s = {true, true, 0, t.data<uint8_t>()[i] ? 1u : 0u, 0}; break;
    default: s.d = t.ElementAsDouble(i); break;
  }
  if (s.is_int) s.d = s.is_unsigned ? static_cast<double>(s.u) : static_cast<double>(s.i);
  return s;
}

template <typename T>
T ToInt(const Scalar& s) {
  if (s.is_int) return s.is_unsigned ? static_cast<T>(s.u) : static_cast<T>(s.i);
  if (std::isnan(s.d) || std::isinf(s.d)) return static_cast<T>(0);  // UB in C++; numpy-like 0-ish
  // Truncate toward zero; wrap like numpy's C casts for out-of-range values.
  double tr = std::trunc(s.d);
  if (tr >= -9.2e18 && tr <= 9.2e18) return static_cast<T>(static_cast<int64_t>(tr));
  return static_cast<T>(static_cast<uint64_t>(tr));
}

std::string FormatFloatLikeNumpy(double v, bool is_double) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest repr that round-trips (what numpy's str() produces).
  for (int precision = 1; precision <= 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    if (is_double ? std::strtod(s.c_str(), nullptr) == v
                  : std::strtof(s.c_str(), nullptr) == static_cast<float>(v)) {
      return s;
    }
  }
  return absl::StrFormat("%.17g", v);
}

}  // namespace

Tensor ConvertTensor(const Tensor& t, DType target) {
  if (t.dtype() == target) return t;
  Tensor out(target, t.dims());
  const int64_t n = t.num_elements();
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      const std::string& s = t.strings()[static_cast<size_t>(i)];
      double d = std::strtod(s.c_str(), nullptr);
      Tensor one = Tensor::Scalar<double>(d);
      Tensor conv = ConvertTensor(one, target);
      std::memcpy(static_cast<uint8_t*>(out.mutable_raw_data()) + i * ElementSize(target),
                  conv.raw_data(), ElementSize(target));
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    Scalar s = Read(t, i);
    switch (target) {
      case DType::kFloat: out.mutable_data<float>()[i] = static_cast<float>(s.d); break;
      case DType::kDouble: out.mutable_data<double>()[i] = s.d; break;
      case DType::kFloat16: out.mutable_data<uint16_t>()[i] = FloatToHalf(static_cast<float>(s.d)); break;
      case DType::kBFloat16:
        out.mutable_data<uint16_t>()[i] = FloatToBFloat16(static_cast<float>(s.d));
        break;
      case DType::kInt8: out.mutable_data<int8_t>()[i] = ToInt<int8_t>(s); break;
      case DType::kInt16: out.mutable_data<int16_t>()[i] = ToInt<int16_t>(s); break;
      case DType::kInt32: out.mutable_data<int32_t>()[i] = ToInt<int32_t>(s); break;
      case DType::kInt64: out.mutable_data<int64_t>()[i] = ToInt<int64_t>(s); break;
      case DType::kUint8: out.mutable_data<uint8_t>()[i] = ToInt<uint8_t>(s); break;
      case DType::kUint16: out.mutable_data<uint16_t>()[i] = ToInt<uint16_t>(s); break;
      case DType::kUint32: out.mutable_data<uint32_t>()[i] = ToInt<uint32_t>(s); break;
      case DType::kUint64: out.mutable_data<uint64_t>()[i] = ToInt<uint64_t>(s); break;
      case DType::kBool:
        out.mutable_data<uint8_t>()[i] = s.is_int ? (s.is_unsigned ? s.u != 0 : s.i != 0) : s.d != 0;
        break;
      case DType::kString:
        out.mutable_strings()[static_cast<size_t>(i)] =
            s.is_int ? (s.is_unsigned ? std::to_string(s.u) : std::to_string(s.i))
                     : FormatFloatLikeNumpy(s.d, t.dtype() == DType::kDouble);
        break;
      default: AIC_CHECK(false, "ConvertTensor to ", DTypeName(target));
    }
  }
  return out;
}

}  // namespace aic

#include "ops/util/float_convert.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "ops/util/small_float.h"
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

// Whether `text` reads back as `v` in type `t` (the shortest such text is
// what numpy prints).
bool RoundTrips(const std::string& text, double v, DType t) {
  const double back = std::strtod(text.c_str(), nullptr);
  switch (t) {
    case DType::kDouble: return back == v;
    case DType::kFloat16: return FloatToHalf(static_cast<float>(back)) == FloatToHalf(static_cast<float>(v));
    case DType::kBFloat16:
      return FloatToBFloat16(static_cast<float>(back)) == FloatToBFloat16(static_cast<float>(v));
    default: return static_cast<float>(back) == static_cast<float>(v);
  }
}

// numpy's str() of a float scalar (what astype(str) and so onnx.reference's
// Cast give): the shortest digits that read back as the same value, written
// positionally ("100.0", "0.00012") when 1e-4 <= |v| < a cutoff that grows
// with the type's precision (1e3 for float16, 1e6 for float32, 1e16 for
// double), else in scientific form ("1e+06", "1.2345679e+08", "1e-05").
std::string FormatFloatLikeNumpy(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  std::string sci;
  for (int precision = 0; precision <= 16; ++precision) {
    sci = absl::StrFormat("%.*e", precision, v);
    if (RoundTrips(sci, v, t)) break;
  }
  const double cutoff = t == DType::kDouble ? 1e16 : t == DType::kFloat16 ? 1e3 : 1e6;
  const double magnitude = std::fabs(v);
  if (magnitude < 1e-4 || magnitude >= cutoff) return sci;
  // Positional: the same digits placed by the exponent.
  const size_t e_at = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e_at + 1);
  std::string digits;
  for (size_t i = 0; i < e_at; ++i) {
    if (std::isdigit(static_cast<unsigned char>(sci[i]))) digits += sci[i];
  }
  std::string out = v < 0 ? "-" : "";
  if (exponent < 0) {
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  }
  const size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) return out + digits + std::string(int_digits - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

}  // namespace

Tensor ConvertTensor(const Tensor& t, DType target) {
  if (t.dtype() == target) return t;
  if (IsOpaqueStorageOnly(t.dtype()) || IsOpaqueStorageOnly(target)) return ConvertSmall(t, target);
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
                     : FormatFloatLikeNumpy(s.d, t.dtype());
        break;
      default: AIC_CHECK(false, "ConvertTensor to ", DTypeName(target));
    }
  }
  return out;
}

}  // namespace aic

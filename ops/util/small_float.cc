#include "ops/util/small_float.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "ops/util/float_convert.h"

namespace aic {

namespace {

// A sign-exponent-mantissa format narrower than half. How each spends its
// top codes (after OCP's and ONNX's definitions):
//   kIeee  (e5m2): exponent all ones is inf (mantissa 0) or NaN;
//   kFn    (e4m3fn): only S.1111.111 is NaN, no inf;
//   kFnuz  (e4m3fnuz, e5m2fnuz): 0x80 (negative zero's code) is the one NaN;
//          no inf, no -0;
//   kNone  (float4e2m1): every code is finite.
enum class Specials { kIeee, kFn, kFnuz, kNone };

struct MiniFloat {
  int exp_bits;
  int man_bits;
  int bias;
  Specials specials;
  uint8_t max_code;  // the largest finite magnitude's code
};

const MiniFloat* FormatOf(DType t) {
  static constexpr MiniFloat kE4M3FN{4, 3, 7, Specials::kFn, 0x7E};        // 448
  static constexpr MiniFloat kE4M3FNUZ{4, 3, 8, Specials::kFnuz, 0x7F};    // 240
  static constexpr MiniFloat kE5M2{5, 2, 15, Specials::kIeee, 0x7B};       // 57344
  static constexpr MiniFloat kE5M2FNUZ{5, 2, 16, Specials::kFnuz, 0x7F};   // 57344
  static constexpr MiniFloat kE2M1{2, 1, 1, Specials::kNone, 0x7};         // 6
  switch (t) {
    case DType::kFloat8E4M3FN: return &kE4M3FN;
    case DType::kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case DType::kFloat8E5M2: return &kE5M2;
    case DType::kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case DType::kFloat4E2M1: return &kE2M1;
    default: return nullptr;
  }
}

float QuietNaN(bool negative) { return std::bit_cast<float>(negative ? 0xffc00000u : 0x7fc00000u); }

float DecodeMini(const MiniFloat& f, uint8_t bits) {
  const int sign_shift = f.exp_bits + f.man_bits;
  const bool negative = (bits >> sign_shift) & 1;
  const int mag = bits & ((1 << sign_shift) - 1);
  const int exp = mag >> f.man_bits;
  const int man = mag & ((1 << f.man_bits) - 1);
  const int max_exp = (1 << f.exp_bits) - 1;
  // ml_dtypes widens the FNUZ NaN to a negative NaN; keep its bits alike.
  if (f.specials == Specials::kFnuz && bits == 0x80) return QuietNaN(true);
  if (f.specials == Specials::kFn && exp == max_exp && man == (1 << f.man_bits) - 1) {
    return QuietNaN(negative);
  }
  if (f.specials == Specials::kIeee && exp == max_exp) {
    if (man != 0) return QuietNaN(negative);
    return negative ? -INFINITY : INFINITY;
  }
  const float v = exp == 0 ? std::ldexp(static_cast<float>(man), 1 - f.bias - f.man_bits)
                           : std::ldexp(static_cast<float>(man + (1 << f.man_bits)),
                                        exp - f.bias - f.man_bits);
  return negative ? -v : v;
}

// Rounds |x| to the format's precision (nearest, ties to even) with an
// unbounded exponent, then decides overflow on the rounded value, as
// ml_dtypes does: e4m3fn's 464 (halfway to the NaN code) rounds to 448.
uint8_t EncodeMini(const MiniFloat& f, double x, bool saturate) {
  const int sign_shift = f.exp_bits + f.man_bits;
  const bool negative = std::signbit(x);
  const uint8_t sign = negative ? static_cast<uint8_t>(1u << sign_shift) : 0;
  if (std::isnan(x)) {
    switch (f.specials) {
      case Specials::kIeee: return sign | 0x7E;
      case Specials::kFn: return sign | 0x7F;
      case Specials::kFnuz: return 0x80;
      // No NaN code: ml_dtypes gives +NaN -> -0 and -NaN -> +0; match its bits.
      case Specials::kNone: return negative ? 0 : static_cast<uint8_t>(1u << sign_shift);
    }
  }
  auto overflow = [&]() -> uint8_t {
    if (saturate || f.specials == Specials::kNone) return sign | f.max_code;
    if (f.specials == Specials::kIeee) return sign | static_cast<uint8_t>(((1 << f.exp_bits) - 1) << f.man_bits);
    if (f.specials == Specials::kFn) return sign | 0x7F;
    return 0x80;
  };
  const double a = std::fabs(x);
  if (std::isinf(a)) return overflow();
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int e2 = 0;
  std::frexp(a, &e2);                                  // a = m * 2^e2, m in [0.5, 1)
  int e = a == 0 ? min_exp : std::max(e2 - 1, min_exp);  // a = 1.m' * 2^e (or subnormal)
  // Mantissa as an integer of man_bits + 1 bits; exact scaling by a power of 2.
  double r = std::nearbyint(std::ldexp(a, f.man_bits - e));
  const double one = std::ldexp(1.0, f.man_bits);
  if (r == 0) return f.specials == Specials::kFnuz ? 0 : sign;  // no -0 in FNUZ
  if (r >= 2 * one) {  // rounded up into the next binade
    r /= 2;
    ++e;
  }
  int exp_field = 0, man = static_cast<int>(r);
  if (r >= one) {
    exp_field = e + f.bias;
    man -= static_cast<int>(one);
  }
  if (exp_field >= (1 << f.exp_bits)) return overflow();
  const int code = (exp_field << f.man_bits) | man;
  if (code > f.max_code) return overflow();
  return sign | static_cast<uint8_t>(code);
}

// float8e8m0: 2^(e - 127), e in 0..254; 0xFF is NaN. Mirrors
// onnx.numpy_helper.to_float8e8m0 bit for bit (the sign is dropped; a zero or
// float32-subnormal input has exponent field 0).
uint8_t EncodeE8M0(double x, const SmallCastOptions& opts) {
  const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(x));
  uint32_t exp = (bits >> 23) & 0xFF;
  if (exp == 0xFF) return 0xFF;
  bool round_up = false;
  switch (opts.round_mode) {
    case E8M0Rounding::kUp: round_up = (bits & 0x7FFFFF) != 0; break;
    case E8M0Rounding::kDown: break;
    case E8M0Rounding::kNearest: {
      const bool guard = bits & 0x400000, round = bits & 0x200000, sticky = bits & 0x1FFFFF;
      round_up = guard && (round || sticky || exp > 0);
      break;
    }
  }
  if (opts.saturate && exp == 0xFE) round_up = false;  // stay at the largest value, not NaN
  return static_cast<uint8_t>(exp + (round_up ? 1 : 0));
}

}  // namespace

bool IsSmallFloat(DType t) { return FormatOf(t) != nullptr || t == DType::kFloat8E8M0; }

bool IsSmallInt(DType t) {
  return t == DType::kInt4 || t == DType::kUint4 || t == DType::kInt2 || t == DType::kUint2;
}

DType WideTypeOf(DType small) {
  if (small == DType::kInt4 || small == DType::kInt2) return DType::kInt8;
  if (small == DType::kUint4 || small == DType::kUint2) return DType::kUint8;
  return DType::kFloat;
}

float DecodeSmallFloat(DType t, uint8_t bits) {
  if (t == DType::kFloat8E8M0) {
    return bits == 0xFF ? QuietNaN(false) : std::ldexp(1.0f, static_cast<int>(bits) - 127);
  }
  const MiniFloat* f = FormatOf(t);
  AIC_CHECK(f != nullptr, "DecodeSmallFloat on ", DTypeName(t));
  return DecodeMini(*f, bits);
}

uint8_t EncodeSmallFloat(DType t, double x, const SmallCastOptions& opts) {
  if (t == DType::kFloat8E8M0) return EncodeE8M0(x, opts);
  const MiniFloat* f = FormatOf(t);
  AIC_CHECK(f != nullptr, "EncodeSmallFloat to ", DTypeName(t));
  return EncodeMini(*f, x, opts.saturate);
}

int32_t DecodeSmallInt(DType t, uint8_t bits) {
  const int width = BitsPerElement(t);
  const int32_t v = bits & ((1 << width) - 1);
  const bool is_signed = t == DType::kInt4 || t == DType::kInt2;
  return is_signed && (v >> (width - 1)) ? v - (1 << width) : v;
}

uint8_t WrapSmallInt(DType t, int64_t v) {
  return static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << BitsPerElement(t)) - 1));
}

uint8_t TruncateToSmallInt(DType t, double x) {
  if (!std::isfinite(x)) return 0;
  const double tr = std::trunc(x);
  if (tr < -2147483648.0 || tr >= 2147483648.0) return 0;  // int32 conversion's INT_MIN: low bits 0
  return WrapSmallInt(t, static_cast<int64_t>(tr));
}

uint8_t SmallBits(const Tensor& t, int64_t i) {
  const uint8_t* p = t.data<uint8_t>();
  const int width = BitsPerElement(t.dtype());
  if (width == 8) return p[i];
  const int per_byte = 8 / width;
  return static_cast<uint8_t>((p[i / per_byte] >> ((i % per_byte) * width)) & ((1 << width) - 1));
}

void SetSmallBits(Tensor& t, int64_t i, uint8_t bits) {
  uint8_t* p = t.mutable_data<uint8_t>();
  const int width = BitsPerElement(t.dtype());
  if (width == 8) {
    p[i] = bits;
    return;
  }
  const int per_byte = 8 / width;
  const int shift = static_cast<int>(i % per_byte) * width;
  const uint8_t mask = static_cast<uint8_t>(((1 << width) - 1) << shift);
  uint8_t& byte = p[i / per_byte];
  byte = static_cast<uint8_t>((byte & ~mask) | ((bits << shift) & mask));
}

Tensor WidenSmall(const Tensor& t) {
  const DType wide = WideTypeOf(t.dtype());
  Tensor out(wide, t.dims());
  const int64_t n = t.num_elements();
  if (IsSmallInt(t.dtype())) {
    // int8 and uint8 share the byte layout; the decoded value fits either.
    uint8_t* o = out.mutable_data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint8_t>(DecodeSmallInt(t.dtype(), SmallBits(t, i)));
  } else {
    float* o = out.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = DecodeSmallFloat(t.dtype(), SmallBits(t, i));
  }
  return out;
}

Tensor ConvertSmall(const Tensor& t, DType target, const SmallCastOptions& opts) {
  if (t.dtype() == target) return t;
  Tensor src = IsOpaqueStorageOnly(t.dtype()) ? WidenSmall(t) : t;
  if (!IsOpaqueStorageOnly(target)) return ConvertTensor(src, target);
  if (src.dtype() == DType::kString) src = ConvertTensor(src, DType::kDouble);
  Tensor out(target, src.dims());
  const int64_t n = src.num_elements();
  if (IsSmallInt(target) && (IsInteger(src.dtype()) || src.dtype() == DType::kBool)) {
    // Integers keep their low bits (uint64 wraps through int64 alike).
    const Tensor ints = ConvertTensor(src, DType::kInt64);
    for (int64_t i = 0; i < n; ++i) SetSmallBits(out, i, WrapSmallInt(target, ints.data<int64_t>()[i]));
  } else if (IsSmallInt(target)) {
    for (int64_t i = 0; i < n; ++i) SetSmallBits(out, i, TruncateToSmallInt(target, src.ElementAsDouble(i)));
  } else {
    for (int64_t i = 0; i < n; ++i) SetSmallBits(out, i, EncodeSmallFloat(target, src.ElementAsDouble(i), opts));
  }
  return out;
}

}  // namespace aic

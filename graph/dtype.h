// Tensor element types. The enumerator values equal ONNX's TensorProto.DataType
// numbers, so conversion at the file boundary is a cast, and every type ONNX can
// store (float8 and 4-bit types included) survives a round trip, even when no
// kernel computes with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace aic {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

inline constexpr int32_t kMaxDTypeValue = 26;

// True for values this build knows (0 < v <= kMaxDTypeValue).
bool IsKnownDType(int32_t value);

// Size of one element in bytes; 0 for kString and kUndefined. 4- and 2-bit types
// report 1 here; use ByteSizeOf for packed storage size.
size_t ElementSize(DType t);
// Bits one element occupies in storage: 4 for int4/uint4/float4e2m1, 2 for
// int2/uint2, else 8 * ElementSize.
int BitsPerElement(DType t);
// True for the types packed several to a byte (element i is not at byte i).
bool IsSubByte(DType t);
// Storage bytes of `count` elements (4-bit types pack two per byte, 2-bit
// types four, low bits first).
size_t ByteSizeOf(DType t, int64_t count);

// ONNX spelling: "float", "int64", "float16", "bfloat16", "float8e4m3fn", ...
const char* DTypeName(DType t);

bool IsFloatingPoint(DType t);  // float, double, float16, bfloat16 (not float8)
bool IsInteger(DType t);        // signed or unsigned, 8..64 bits (not 4-bit)
bool IsSignedInteger(DType t);
// int8 or uint8: what QuantizeLinear/DequantizeLinear and the QOperator ops
// (QLinearConv, QLinearMatMul, ...) compute with on every backend.
bool IsEightBitInteger(DType t);
// Storable, and converted by Cast and Q/DQ (ops/util/small_float.h), but not
// computed with by other kernels: float8 (e8m0 included), float4, 4- and 2-bit
// integers.
bool IsOpaqueStorageOnly(DType t);

// Compile-time mapping from C++ type to DType for kernels.
template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kDouble; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUint8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUint16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUint32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUint64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

}  // namespace aic

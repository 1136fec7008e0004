#include "graph/dtype.h"

namespace aic {

bool IsKnownDType(int32_t value) { return value > 0 && value <= kMaxDTypeValue; }

size_t ElementSize(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kInt32: case DType::kUint32: return 4;
    case DType::kDouble: case DType::kInt64: case DType::kUint64: case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    case DType::kFloat16: case DType::kBFloat16: case DType::kInt16: case DType::kUint16: return 2;
    case DType::kUint8: case DType::kInt8: case DType::kBool:
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: case DType::kUint4: case DType::kInt4: case DType::kFloat4E2M1:
    case DType::kFloat8E8M0: case DType::kUint2: case DType::kInt2:
      return 1;
    case DType::kString: case DType::kUndefined: return 0;
  }
  return 0;
}

int BitsPerElement(DType t) {
  switch (t) {
    case DType::kUint4: case DType::kInt4: case DType::kFloat4E2M1: return 4;
    case DType::kUint2: case DType::kInt2: return 2;
    default: return static_cast<int>(ElementSize(t) * 8);
  }
}

bool IsSubByte(DType t) {
  const int bits = BitsPerElement(t);
  return bits > 0 && bits < 8;
}

size_t ByteSizeOf(DType t, int64_t count) {
  if (count <= 0) return 0;
  if (IsSubByte(t)) {
    const int64_t per_byte = 8 / BitsPerElement(t);
    return static_cast<size_t>((count + per_byte - 1) / per_byte);
  }
  return static_cast<size_t>(count) * ElementSize(t);
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat: return "float";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUint4: return "uint4";
    case DType::kInt4: return "int4";
    case DType::kFloat4E2M1: return "float4e2m1";
    case DType::kFloat8E8M0: return "float8e8m0";
    case DType::kUint2: return "uint2";
    case DType::kInt2: return "int2";
  }
  return "unknown";
}

bool IsFloatingPoint(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

bool IsSignedInteger(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}

bool IsInteger(DType t) {
  return IsSignedInteger(t) || t == DType::kUint8 || t == DType::kUint16 || t == DType::kUint32 ||
         t == DType::kUint64;
}

bool IsEightBitInteger(DType t) { return t == DType::kInt8 || t == DType::kUint8; }

bool IsOpaqueStorageOnly(DType t) {
  int v = static_cast<int>(t);
  return v >= static_cast<int>(DType::kFloat8E4M3FN) && v <= kMaxDTypeValue;
}

}  // namespace aic

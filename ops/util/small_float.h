// The small element types: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
// float4e2m1 and the 4- and 2-bit integers. They are stored, never computed
// with: Cast, CastLike and QuantizeLinear/DequantizeLinear convert them from
// and to the computable types here, one element at a time, bit-exact with
// ONNX's reference (ml_dtypes and onnx.numpy_helper): round to nearest even,
// `saturate` clamping float8 overflow to the largest finite value (else inf
// or NaN, as the type has them), e8m0 with its own rounding modes, float4
// always saturating, the small integers truncating and wrapping like C.
#pragma once

#include <cstdint>

#include "graph/tensor.h"

namespace aic {

// How Cast to float8e8m0 rounds (its `round_mode` attribute).
enum class E8M0Rounding { kUp, kDown, kNearest };

struct SmallCastOptions {
  bool saturate = true;  // float8 overflow: largest finite value, not inf/NaN
  E8M0Rounding round_mode = E8M0Rounding::kUp;
};

// float8 (all five kinds) and float4e2m1.
bool IsSmallFloat(DType t);
// int4, uint4, int2, uint2.
bool IsSmallInt(DType t);
// The computable type every value of a small type converts to exactly:
// float for the small floats, int8/uint8 for the small integers.
DType WideTypeOf(DType small);

// Scalar codecs; `bits` are the element's bits, right-aligned.
float DecodeSmallFloat(DType t, uint8_t bits);
uint8_t EncodeSmallFloat(DType t, double x, const SmallCastOptions& opts = {});
int32_t DecodeSmallInt(DType t, uint8_t bits);  // sign-extended for int4/int2
uint8_t WrapSmallInt(DType t, int64_t v);        // keeps the low 4 or 2 bits
// float -> int4/uint4/int2/uint2 as ml_dtypes does it: truncate toward zero
// through int32 (NaN, inf and values past int32's range give 0), then wrap.
uint8_t TruncateToSmallInt(DType t, double x);

// Element i's bits in a tensor of a small type (4- and 2-bit types unpacked).
uint8_t SmallBits(const Tensor& t, int64_t i);
// Sets element i's bits (the other elements sharing its byte are kept).
void SetSmallBits(Tensor& t, int64_t i, uint8_t bits);

// A tensor of a small type widened to WideTypeOf (exact).
Tensor WidenSmall(const Tensor& t);
// Converts between any numeric/bool/string type and a small type (either
// side, or both, small); the opposite side goes through ConvertTensor.
Tensor ConvertSmall(const Tensor& t, DType target, const SmallCastOptions& opts = {});

}  // namespace aic

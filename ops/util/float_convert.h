// Reference kernels compute float16/bfloat16 in float: widen the inputs, run the
// float kernel, narrow the outputs (round to nearest even), as numpy does.
#pragma once

#include "graph/tensor.h"

namespace aic {

bool IsHalfType(DType t);  // float16 or bfloat16
// A float copy of an fp16/bf16 tensor (other dtypes: returned unchanged).
Tensor WidenToFloat(const Tensor& t);
// Converts a float tensor to `target` (fp16/bf16); other targets: unchanged.
Tensor NarrowFromFloat(const Tensor& t, DType target);

// Converts any numeric/bool tensor to `target` with C++ static_cast semantics
// (float→int truncates toward zero; to bool: nonzero is true). Strings parse
// and print as numpy does. The float8/float4/4- and 2-bit types convert as
// ConvertSmall (ops/util/small_float.h) does with its default options
// (saturating, e8m0 rounding up). Used by Cast and by kernels that normalize
// dtypes.
Tensor ConvertTensor(const Tensor& t, DType target);

}  // namespace aic

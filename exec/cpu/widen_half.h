// The CPU backend computes float16 and bfloat16 in float: its kernels and
// oneDNN's fast paths are f32 (issue #17; ONNX Runtime's CPU provider also
// runs most half-precision ops through inserted Casts to float). Before
// lowering, every half-precision value of the plan's own model clone becomes
// float: initializers are converted once, ConstantOfShape/Constant values and
// dtype attributes that name a half type name float instead, a Cast to half
// inside the graph still rounds (to half and back to float: an fp32 model's
// explicit f16 island keeps its rounding), and the graph's half inputs and
// outputs keep their declared types through one Cast at the entry and one at
// the exit. Between Casts the ops compute in f32 rather than rounding to half
// after each one: no less accurate than the model itself, and within the
// 1e-2 that fp16 comparisons allow against ONNX Runtime.
#pragma once

#include "graph/model.h"

namespace aic::cpu {

// Whether anything in the graph is declared half precision (inputs,
// initializers, outputs, value_info, dtype attributes or constant values):
// the cheap test before inferring every dtype for WidenHalfToFloat.
bool DeclaresHalfPrecision(const Model& model);

// Rewrites `model` (its dtypes inferred) in place; returns how many values were widened (0 when
// the model has no half-precision values, or has control-flow bodies, which
// are left as they are).
int WidenHalfToFloat(Model& model);

}  // namespace aic::cpu

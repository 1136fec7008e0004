// CumSum along one axis of dense f32/int32/int64 (exclusive and reverse as
// ONNX defines them), the axis seen as outer x dim x inner.
#pragma once

#include "exec/cpu/kernels/axis_lanes.h"
#include "graph/dtype.h"

namespace aic::cpu::kernels {

// False for other dtypes.
bool CumSum(DType dtype, const void* x, void* y, const AxisLanes& lanes, bool exclusive, bool reverse);

}  // namespace aic::cpu::kernels

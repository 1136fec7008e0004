// Selection along one axis of dense f32: TopK (partial selection, not a full
// sort) and ArgMax/ArgMin. Semantics follow the reference
// (ops/tensor/search.cc): ties keep the lower index first (ArgMax/ArgMin
// with select_last_index the higher one); NaN never beats a number.
#pragma once

#include <cstdint>

#include "exec/cpu/kernels/axis_lanes.h"

namespace aic::cpu::kernels {

// values, indices: outer x k x inner, each lane's k best in order (best first).
void TopKF32(const float* x, const AxisLanes& lanes, int64_t k, bool largest, float* values, int64_t* indices);

// out: outer x inner indices of each lane's largest (is_max) or smallest value.
void ArgExtremeF32(const float* x, const AxisLanes& lanes, bool is_max, bool select_last, int64_t* out);

}  // namespace aic::cpu::kernels

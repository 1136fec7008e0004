// One axis of a dense tensor seen as outer x dim x inner (inner = 1 when it
// is the last axis): the shape every along-an-axis kernel takes.
#pragma once

#include <cstdint>
#include <vector>

namespace aic::cpu::kernels {

struct AxisLanes {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
};

// The lanes of `axis` (negative counts from the end) of `dims`; false when
// the axis is out of range. *normalized gets the axis counted from 0.
inline bool LanesAlong(const std::vector<int64_t>& dims, int64_t axis, AxisLanes* l, int64_t* normalized) {
  auto rank = static_cast<int64_t>(dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  *l = AxisLanes();
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) l->outer *= dims[i];
    if (i > axis) l->inner *= dims[i];
  }
  l->dim = dims[axis];
  *normalized = axis;
  return true;
}

}  // namespace aic::cpu::kernels

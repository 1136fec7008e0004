// A realistic size for a graph input dim that the model leaves open, where a
// command must pick one (verification inputs, the report's default sizes).
#pragma once

#include <cstdint>

#include "graph/shape.h"

namespace aic {

// Dim `axis` of an input of shape `shape`: a leading (batch) dim 1, the
// spatial dims of an image input (NCHW with at most 4 channels and an
// open width) 224, any
// other dim (a sequence) 16. Not 1 everywhere: an image side of 1 breaks
// strided convolutions and a recognizer's reshapes, and says nothing about
// the model.
int64_t RealisticDimSize(const Shape& shape, size_t axis);

}  // namespace aic

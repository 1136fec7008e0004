// A realistic size for a graph input dim that the model leaves open, where a
// command must pick one (verification inputs, the report's default sizes).
#pragma once

#include <cstdint>

#include "graph/type_info.h"

namespace aic {

// Dim `axis` of an input of type `type`: a leading (batch) dim 1; the
// spatial dims of an image (NCHW with at most 4 channels and an open width)
// 224; the samples of a waveform (a floating-point [batch, samples] input)
// 16000, one second at 16 kHz; any other dim (a sequence of tokens) 16. Not
// 1 everywhere: an image side or a waveform of a few samples breaks strided
// convolutions and a recognizer's reshapes, and says nothing about the model.
int64_t RealisticDimSize(const TypeInfo& type, size_t axis);

}  // namespace aic

// Transposes through registers: a strided copy whose innermost output dim is
// not contiguous in the source, but some other output dim is (every
// Transpose that moves the innermost axis: NCHW <-> NHWC, swapping the last
// two axes), is a batch of 2-D transposes between those two dims. Each goes
// in tiles of 8x8 elements (loaded as 8 source runs, transposed in
// registers, stored as 8 output runs) instead of one element at a time with
// a stride: both sides move whole cache lines.
#pragma once

#include "exec/cpu/kernels/strided_copy.h"

namespace aic::cpu::kernels {

// out = the copy `plan` describes, when it has that shape and 2-, 4- or
// 8-byte elements; false (nothing written) otherwise.
bool TransposeInBlocks(const StridedCopyPlan& plan, const void* in, void* out);

}  // namespace aic::cpu::kernels

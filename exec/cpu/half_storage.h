// Half-precision values stored as the model declares them. The CPU backend
// computes float16/bfloat16 graphs in f32 (widen_half.h); after lowering,
// each slot that holds a value the model declares half gets a step, right
// after the last step writing it, that rounds its floats to half in place
// (and a value folded at compile time is rounded when it is folded). So every
// value a step hands to the next is what an fp16 kernel would have stored:
// results follow the reference executor and ONNX Runtime, which round each
// op's output, rather than drifting with the f32 intermediates (the onnx
// wheel's expanded fp16 attention drifted 1.04e-3 past its tolerance).
// Values inside one step (oneDNN post-op chains, our fused kernels) stay f32.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "exec/cpu/internal.h"

namespace aic::cpu {

// Inserts the rounding steps: `half_slots` maps a slot to the half type its
// value is declared with. Slots no step writes are left alone.
void RoundStoredHalfSlots(Plan& plan, const absl::flat_hash_map<int, DType>& half_slots);

// A value folded at compile time, rounded the same way (a fresh tensor: the
// folded one may share bytes with an initializer).
Tensor RoundedToHalf(const Tensor& t, DType half);

}  // namespace aic::cpu

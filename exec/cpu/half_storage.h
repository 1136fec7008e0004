// Rounding to half where a step writes a value. The CPU backend computes
// float16/bfloat16 graphs in f32 (widen_half.h); the values the model reads
// as half that no Cast rounds to nearest (bfloat16 outputs, and bfloat16
// values a Cast reads: Cast to bfloat16 truncates) get a step, right after
// the last step writing their slot, that rounds its floats in place, and are
// rounded when folded at compile time.
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

// The CPU backend computes float16 and bfloat16 in float: its kernels and
// oneDNN's fast paths are f32 (issue #17; ONNX Runtime's CPU provider also
// runs most half-precision ops through inserted Casts to float). Before
// lowering, every half-precision value of the plan's own model clone becomes
// float: initializers are converted once, ConstantOfShape/Constant values and
// dtype attributes that name a half type name float instead, a Cast to half
// inside the graph still rounds (to half and back to float: an fp32 model's
// explicit f16 island keeps its rounding), and the graph's half inputs and
// outputs keep their declared types through one Cast at the entry and one at
// the exit.
//
// What the f32 computation does not change is what the model stores: each
// value the model declares half that a step of the plan writes is rounded to
// half right after it (exec/cpu/half_storage.h), as ONNX Runtime's fp16
// kernels and the reference executor store theirs. Only values inside a
// fused step (a post-op chain, a fused attention) stay f32 between ops.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "graph/model.h"

namespace aic::cpu {

// Whether anything in the graph is declared half precision (inputs,
// initializers, outputs, value_info, dtype attributes or constant values):
// the cheap test before inferring every dtype for WidenHalfToFloat.
bool DeclaresHalfPrecision(const Model& model);

// The values of a widened model that the model declared half and that a
// node other than a Cast (which rounds itself) computes: the type they were,
// and whether the node only moves or selects its inputs' half values
// (Transpose, Relu, Max, ...), so the value is half already wherever those
// inputs were stored (a Relu folded into its producer's step is not).
struct StoredHalf {
  DType type = DType::kFloat16;
  bool exact_on_stored_inputs = false;
};
using StoredHalfValues = absl::flat_hash_map<const Value*, StoredHalf>;

// What widening did: the values to round where steps write them, and every
// value that holds a half value in f32 (widened values, and the float copies
// of half graph inputs) with its half type, so a step that runs a reference
// kernel can hand it the half values the model declares.
struct WidenedHalf {
  StoredHalfValues stored;
  absl::flat_hash_map<const Value*, DType> declared;
};

// Rewrites `model` (its dtypes inferred) in place; returns how many values were widened (0 when
// the model has no half-precision values, or has control-flow bodies, which
// are left as they are). `widened`, when given, receives what was widened and
// the values to round where steps write them; without it, a Cast from a
// computed half value rounds its input itself.
int WidenHalfToFloat(Model& model, WidenedHalf* widened = nullptr);

}  // namespace aic::cpu

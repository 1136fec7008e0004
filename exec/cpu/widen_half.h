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
// Between those, values stay f32 (as in ONNX Runtime and OpenVINO on this
// CPU, whose results we are compared with): more accurate than rounding
// after every op, and a pass over memory cheaper per op. Where the model
// reads a computed value as half, it is rounded once: its outputs, a Cast
// from it. Data movement of half inputs and half tables stays half (2-byte
// elements); ops the backend runs by their reference kernels get their
// inputs in the declared half types, so they compute as the reference does.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "graph/model.h"

namespace aic::cpu {

// Whether anything in the graph is declared half precision (inputs,
// initializers, outputs, value_info, dtype attributes or constant values):
// the cheap test before inferring every dtype for WidenHalfToFloat.
bool DeclaresHalfPrecision(const Model& model);

// Values of a widened model to round to half where steps write them
// (half_storage.h), with their half type: the bfloat16 values the model reads
// as half (its outputs, a Cast from them), which Casts would truncate.
using StoredHalfValues = absl::flat_hash_map<const Value*, DType>;

// What widening did: the values to round where steps write them, and every
// value that holds a half value in f32 (widened values, and the float copies
// of half graph inputs) with its half type, so a step that runs a reference
// kernel can hand it the half values the model declares.
struct WidenedHalf {
  StoredHalfValues stored;
  absl::flat_hash_map<const Value*, DType> declared;
  // Each widened weight's buffer -> the half initializer it was widened
  // from (the compiled model's), which may give its bytes up once the
  // widened weight is packed (Lowerer::ReleaseHalfOriginal).
  absl::flat_hash_map<const Buffer*, Tensor> originals;
};

// Rewrites `model` (its dtypes inferred) in place; returns how many values were widened (0 when
// the model has no half-precision values, or has control-flow bodies, which
// are left as they are). `widened`, when given, receives what was widened and
// the values to round where steps write them; without it, a Cast from a
// computed half value rounds its input itself.
int WidenHalfToFloat(Model& model, WidenedHalf* widened = nullptr);

}  // namespace aic::cpu

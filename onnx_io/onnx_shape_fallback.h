// libonnx's shape inference as a fallback for what our own OpDefs do not know
// (ops without an OpDef, model-local functions): fills in the types of values
// that ops::InferShapes left unknown. Never overrides a type we inferred.
#pragma once

#include "absl/status/statusor.h"
#include "graph/model.h"

namespace aic {

// Returns the number of values whose type was filled in. libonnx errors on a
// node are ignored (that node's outputs stay unknown).
absl::StatusOr<int> FillTypesFromOnnxInference(Model& model);

}  // namespace aic

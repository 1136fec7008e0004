// What every compiling backend does before lowering: a copy of the model
// with the graph inputs' shapes made concrete (shape inference then gives
// every value static dims), and the input-shape signature its plan is cached
// under. Both exec/cpu and exec/cuda specialize a model per signature; the
// folding of what those dims determine is the lowering frame's
// (lowering_frame.h, through ops/evaluate.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/model.h"
#include "graph/runtime_value.h"
#include "graph/tensor.h"

namespace aic::exec {

// A clone of `model` whose tensor inputs named in `shapes` get those dims
// (an untyped input becomes float). Sequence and optional inputs keep their
// type. Initializers are shared with `model`, not copied.
std::unique_ptr<Model> SpecializedClone(const Model& model,
                                        const std::map<std::string, std::vector<int64_t>>& shapes);

// The input-shape signature plans are cached under ("x[1,3,224,224];...";
// a non-tensor feed contributes only its name), and the tensor feeds' dims
// into `shapes` (when given).
std::string ShapeSignature(const std::map<std::string, RuntimeValue>& feeds,
                           std::map<std::string, std::vector<int64_t>>* shapes);

}  // namespace aic::exec

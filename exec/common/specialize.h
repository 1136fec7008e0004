// What every compiling backend does before lowering: a copy of the model with
// the graph inputs' shapes made concrete (shape inference then gives every
// value static dims), and the Shape/Size values those dims determine. Both
// exec/cpu and exec/cuda specialize a model per input-shape signature.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/model.h"
#include "graph/tensor.h"

namespace aic::exec {

// A clone of `model` whose tensor inputs named in `shapes` get those dims
// (an untyped input becomes float). Sequence and optional inputs keep their
// type. Initializers are shared with `model`, not copied.
std::unique_ptr<Model> SpecializedClone(const Model& model,
                                        const std::map<std::string, std::vector<int64_t>>& shapes);

// The value of a Shape (with opset-15 start/end) or Size node whose input has
// the concrete `dims`; nullopt for any other node.
std::optional<Tensor> ShapeOrSizeOf(const Node& node, int64_t opset, const std::vector<int64_t>& dims);

}  // namespace aic::exec

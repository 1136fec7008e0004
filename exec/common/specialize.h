// What every compiling backend does before and while lowering: a copy of the
// model with the graph inputs' shapes made concrete (shape inference then
// gives every value static dims), the Shape/Size values those dims
// determine, and the folding of nodes whose inputs are all known. Both
// exec/cpu and exec/cuda specialize a model per input-shape signature.
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

// The value of a Shape (with opset-15 start/end) or Size node whose input has
// the concrete `dims`; nullopt for any other node.
std::optional<Tensor> ShapeOrSizeOf(const Node& node, int64_t opset, const std::vector<int64_t>& dims);

// The values of `node`'s outputs when compile time already knows them:
// Shape/Size from the concrete dims of input 0 (`input0_dims`; null when
// they are not static), any other deterministic op without subgraphs from
// its constant inputs (`constant_inputs[i]`, null when input i is absent or
// not constant) through its reference kernel. One tensor per output
// (undefined for an omitted output); nullopt when the node cannot be folded.
std::optional<std::vector<Tensor>> FoldNode(const Node& node, int64_t opset,
                                            const std::vector<const Tensor*>& constant_inputs,
                                            const std::vector<int64_t>* input0_dims);

}  // namespace aic::exec

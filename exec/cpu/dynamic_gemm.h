// The f32 GEMM family for steps whose shapes are known only when they run:
// values after NonZero, a data-dependent TopK or a loop (a detector's box
// head over its proposals: torchvision's Faster R-CNN spent 2.4 s of 2.7 in
// the reference kernel of two Linear layers, ORT 0.1 s for the whole model).
// Such steps cannot be lowered at compile time, so they run as fallback
// steps; for these ops the step calls oneDNN's sgemm on this run's shapes
// (no primitive to create per shape) instead of the reference kernel.
#pragma once

#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/runtime_value.h"
#include "graph/tensor.h"

namespace aic::cpu {

// Whether `node` is one RunDynamicGemm may take: Gemm, ai.aic
// FusedLinearReLU (Gemm then ReLU) or MatMul, whatever their shapes.
bool IsDynamicGemmOp(const Node& node);

// The node's output on these inputs, or nullopt where this kernel does not
// apply and the reference kernel should run: a dtype other than f32, a
// MatMul whose second operand is not 2-D or whose first is 1-D, a Gemm bias
// that does not broadcast to [M, N]. Gemm: Y = alpha·A'·B' + beta·C with A'
// and B' transposed as transA/transB say; MatMul: the rows of [.., M, K] by
// [K, N], as one product.
std::optional<Tensor> RunDynamicGemm(const Node& node, const std::vector<const RuntimeValue*>& inputs);

}  // namespace aic::cpu

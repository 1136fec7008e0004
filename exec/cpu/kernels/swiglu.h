// SwiGLU over dense f32: y = a · sigmoid(alpha·a) · b, the gated activation
// of Llama-style MLPs (ONNX SwiGLU, opset 28), in one pass over both inputs.
#pragma once

#include <cstdint>

namespace aic::cpu::kernels {

// a, b, y of n elements each; y may equal a or b. Threaded when large.
void SwiGluF32(const float* a, const float* b, float* y, int64_t n, float alpha);

}  // namespace aic::cpu::kernels

// Native unary elementwise kernels over dense f32 (y[i] = f(x[i])) for ops
// oneDNN's eltwise lacks, plus GELU (exact and tanh forms) for when it cannot
// ride on a producing primitive, and on AVX-512 CPUs the transcendental ones
// whenever nothing is fused after them. Each is a vectorizable loop compiled for
// several instruction sets; UnaryF32 runs one over threads.
#pragma once

#include <cstdint>
#include <string>

namespace aic::cpu::kernels {

using UnaryRowFn = void (*)(const float* x, float* y, int64_t n);

// The row kernel for ONNX op `op` ("Erf", "Reciprocal", "Floor", "Ceil",
// "Round", "Sin", "Cos", "Softplus", "Softsign", "Sign", "Log", "GeluErf",
// "GeluTanh", "Mish"; and where FastUnaryKernel has one, its kernel, which
// adds "Exp", "Sigmoid", "Tanh" and "Swish"), or null.
UnaryRowFn UnaryKernel(const std::string& op);

// The hand-vectorized kernel for `op` on this CPU: AVX-512 (unary_avx512.h)
// where it runs, else AVX2+FMA (unary_avx2.h, fewer ops), else null.
UnaryRowFn FastUnaryKernel(const std::string& op);

// y = f(x) over n elements, threaded when large. x may equal y.
void UnaryF32(UnaryRowFn fn, const float* x, float* y, int64_t n);

// HardSigmoid: y = max(0, min(1, alpha·x + beta)) in one pass (oneDNN 2.6 has
// no such eltwise: a linear and a clip, two passes). x may equal y.
void HardSigmoidF32(const float* x, float* y, int64_t n, float alpha, float beta);

// IsNaN / IsInf over f32 into bools (one byte each, 0 or 1); IsInf counts
// +inf when `positive`, -inf when `negative`.
void IsNaNF32(const float* x, uint8_t* y, int64_t n);
void IsInfF32(const float* x, uint8_t* y, int64_t n, bool positive, bool negative);

}  // namespace aic::cpu::kernels

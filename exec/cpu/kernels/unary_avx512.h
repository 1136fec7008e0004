// AVX-512F row kernels for the transcendental unary ops (unary_avx512.cc).
#pragma once

#include <string>

#include "exec/cpu/kernels/unary.h"

namespace aic::cpu::kernels {

// The AVX-512F row kernel for `op` ("Exp", "Sigmoid", "Tanh", "Softplus",
// "GeluTanh", "Mish", "Swish" with alpha 1: x·sigmoid(x)), or null (another
// op, or a CPU without AVX-512F).
UnaryRowFn Avx512UnaryKernel(const std::string& op);

}  // namespace aic::cpu::kernels

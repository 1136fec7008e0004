// AVX2+FMA row kernels for the transcendental unary ops (unary_avx2.cc), for
// CPUs without AVX-512.
#pragma once

#include <string>

#include "exec/cpu/kernels/unary.h"

namespace aic::cpu::kernels {

// The AVX2+FMA row kernel for `op` ("Exp", "Sigmoid", "Tanh", "GeluTanh",
// "Swish" with alpha 1, "Erf", "Softplus"), or null (another op, or a CPU
// without AVX2 and FMA).
UnaryRowFn Avx2UnaryKernel(const std::string& op);

}  // namespace aic::cpu::kernels

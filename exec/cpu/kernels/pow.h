// Pow of two float operands, elementwise, with AVX2 and FMA: what the
// broadcast driver runs for a Pow whose exponent is not one scalar small
// integer (binary.cc's PowF32 handles those with products).
#pragma once

#include "exec/cpu/kernels/broadcast.h"

namespace aic::cpu::kernels {

// The row kernel y[i] = pow(a[i·sa], b[i·sb]) (strides 0 or 1, as
// broadcast.h passes them), or null on a CPU without AVX2 and FMA. Results
// are std::pow's within an ulp (they are computed in double precision and
// rounded once); zero, infinite and NaN operands take std::pow itself.
RowFn Avx2PowKernel();

}  // namespace aic::cpu::kernels

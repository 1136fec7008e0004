// Eight float (or int32) lanes as GCC vector extensions, for loops that keep
// several vectors of partial results side by side in registers: AVX2
// registers in a kernel's avx2 and avx512f clones (AIC_KERNEL_CLONES), pairs
// of SSE ones in the baseline. One accumulator chained through every element
// is bound by the latency of its add or compare (3 cycles a vector on Zen 3);
// four independent ones are bound by the loads.
//
// Include only from a .cc file whose helpers are always inlined into the
// clones: no vector crosses a call there, which is what -Wpsabi would warn of
// (the ABI of passing one differs with and without AVX; GCC reports it at the
// end of the file, so the file ignores it).
#pragma once

#include <cstdint>
#include <cstring>

#pragma GCC diagnostic ignored "-Wpsabi"

namespace aic::cpu::kernels {

using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));

[[gnu::always_inline]] inline F8 Load8(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace aic::cpu::kernels

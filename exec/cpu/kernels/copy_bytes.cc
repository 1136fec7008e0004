#include "exec/cpu/kernels/copy_bytes.h"

#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// Runs from this size on go to memcpy (see the header).
constexpr size_t kMemcpyFromBytes = 8192;

AIC_KERNEL_CLONES void VectorMoves(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) __builtin_memcpy(d + i, s + i, 64);
  if (i < n) std::memcpy(d + i, s + i, n - i);
}

}  // namespace

void CopyBytes(void* d, const void* s, size_t n) {
  if (n < 256 || n >= kMemcpyFromBytes) {
    std::memcpy(d, s, n);
    return;
  }
  VectorMoves(static_cast<char*>(d), static_cast<const char*>(s), n);
}

}  // namespace aic::cpu::kernels

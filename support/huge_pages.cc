#include "support/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace aic {

void AdviseHugePages(void* data, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || size < kHugePageWorthwhile) return;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePageSize - 1) & ~(kHugePageSize - 1);
  const uintptr_t last = (begin + size) & ~(kHugePageSize - 1);
  // Advice only: a kernel without THP answers EINVAL, and the pages are small.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)size;
#endif
}

}  // namespace aic

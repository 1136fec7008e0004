// Large buffers on transparent huge pages. A buffer of many megabytes that
// is written for the first time faults in one 4 KiB page at a time; after
// something returned the heap's memory to the kernel (protobuf's Python
// module calls malloc_trim), a verified optimize of a 10 MB model took 16k
// page faults, about a third of its time. Advised huge, the kernel maps the
// buffer's aligned interior 2 MiB at a time (where the system's THP setting
// is "madvise" or "always"; a no-op under "never" and off Linux).
#pragma once

#include <cstddef>

namespace aic {

// Buffers at least this large are worth advising (and aligning to 2 MiB).
inline constexpr size_t kHugePageWorthwhile = size_t{4} << 20;
inline constexpr size_t kHugePageSize = size_t{2} << 20;

// Advises the 2 MiB-aligned pages inside [data, data + size) to be huge
// pages, before they are first touched; does nothing for smaller ranges.
void AdviseHugePages(void* data, size_t size);

}  // namespace aic

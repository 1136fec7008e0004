// Copies of mid-sized runs read from scattered places (a gathered embedding
// row) in 64-byte vector moves. glibc 2.36's memcpy moves runs from 2112
// bytes up (its rep_movsb_threshold) with `rep movsb`, which an AMD Zen 4
// runs slower than plain vector moves when each run comes from elsewhere:
// 12 MB of 3 KB runs from random places in 64 MB, 1.09 ms by memcpy, 0.94 by
// 64-byte moves (at 512 B-2 KB 1.6 vs 1.1-1.4, glibc's own vector path); from
// 8 KB on, memcpy is as fast or faster (0.69 vs 0.74 at 8 KB), so it keeps
// those. A Gather of embedding rows ([30522, 768] by [8, 512]) ran at
// 1.16-1.33x ONNX Runtime's time by memcpy, 0.93-1.05 this way. Runs that
// follow each other in memory copy within a few percent either way (3 KB
// runs as a last-axis Slice and Concat read them, interleaved in one
// process: 1.09 vs 1.11 ms, 0.52 vs 0.53), so the contiguous copies of
// axis_copy.cc and strided_copy.cc keep memcpy.
#pragma once

#include <cstddef>

namespace aic::cpu::kernels {

// memcpy(d, s, n) for non-overlapping d and s.
void CopyBytes(void* d, const void* s, size_t n);

}  // namespace aic::cpu::kernels

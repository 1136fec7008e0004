#include "exec/cpu/kernels/gather.h"

#include <atomic>
#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

int64_t Gather(const void* data, const void* indices, size_t index_bytes, int64_t num_indices, void* out,
               int64_t outer, int64_t axis_dim, size_t slice_bytes) {
  std::atomic<int64_t> bad{-1};
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  auto index = [&](int64_t j) {
    return index_bytes == 4 ? static_cast<int64_t>(static_cast<const int32_t*>(indices)[j])
                            : static_cast<const int64_t*>(indices)[j];
  };
  int64_t work = static_cast<int64_t>(slice_bytes) / 4 + 1;
  ParallelFor(outer * num_indices, work, [&](int64_t item) {
    int64_t o = item / num_indices, j = item % num_indices;
    int64_t k = index(j);
    if (k < 0) k += axis_dim;
    if (k < 0 || k >= axis_dim) {
      int64_t expected = -1;
      bad.compare_exchange_strong(expected, j);
      return;
    }
    std::memcpy(dst + static_cast<size_t>(item) * slice_bytes,
                src + static_cast<size_t>(o * axis_dim + k) * slice_bytes, slice_bytes);
  });
  return bad.load();
}

}  // namespace aic::cpu::kernels

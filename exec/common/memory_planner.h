// The static memory plan shared by the executors (the CPU arena, the CUDA
// device arena): every intermediate buffer has a size and a lifetime (first
// and last step touching it, inclusive); buffers
// are placed at offsets in one arena so that two buffers alive at the same
// step never overlap. Placement is greedy by size (largest first), each
// buffer taking the best-fitting gap among those already placed whose
// lifetimes intersect its own: the classic "greedy by size" offset planner,
// which lets buffers of different sizes reuse the same bytes (unlike ORT's
// same-size reuse).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aic::exec {

struct BufferRequest {
  size_t size = 0;  // bytes
  int first = 0;    // first step writing or reading it
  int last = 0;     // last step reading it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, multiples of kArenaAlignment
  size_t arena_bytes = 0;
};

inline constexpr size_t kArenaAlignment = 64;

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests);

// True when two requests are alive at a common step.
inline bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace aic::exec

#include "exec/common/memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace aic::exec {

namespace {

size_t AlignUp(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

}  // namespace

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first: big buffers pin the layout, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].size > requests[b].size; });
  std::vector<size_t> placed;
  for (size_t id : order) {
    const BufferRequest& r = requests[id];
    size_t need = AlignUp(std::max<size_t>(r.size, 1));
    // Address ranges already taken by buffers alive at the same time, sorted.
    std::vector<std::pair<size_t, size_t>> taken;
    for (size_t p : placed) {
      if (LifetimesOverlap(r, requests[p])) {
        taken.emplace_back(plan.offsets[p], plan.offsets[p] + AlignUp(std::max<size_t>(requests[p].size, 1)));
      }
    }
    std::sort(taken.begin(), taken.end());
    size_t best = std::numeric_limits<size_t>::max();
    size_t best_gap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;
    for (const auto& [begin, end] : taken) {
      if (begin > cursor && begin - cursor >= need && begin - cursor < best_gap) {
        best = cursor;
        best_gap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == std::numeric_limits<size_t>::max()) best = cursor;  // past everything alive
    plan.offsets[id] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + need);
    placed.push_back(id);
  }
  return plan;
}

}  // namespace aic::exec

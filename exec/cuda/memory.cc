// The plan's device arena: lifetimes over the step order (feeds alive from
// before the first step, outputs until after the last), offsets from the
// shared static memory planner; views share their source's buffer, so they
// extend its lifetime. Also: whether the plan can be one CUDA Graph.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "exec/common/memory_planner.h"
#include "exec/cuda/internal.h"

namespace aic::cuda {

void* Plan::Ptr(int slot, const Memory& mem) const {
  const Slot& s = slots[slot];
  if (s.storage == Slot::Storage::kWeight) return const_cast<uint8_t*>(mem.weights) + s.offset;
  return mem.arena + buffers[s.buffer].offset;
}

absl::Status PlanArena(Plan& plan) {
  for (ArenaBuffer& b : plan.buffers) b.first = b.last = -1;
  auto touch = [&](int slot, int step) {
    const Slot& s = plan.slots[slot];
    if (s.storage != Slot::Storage::kArena) return;
    ArenaBuffer& b = plan.buffers[s.buffer];
    b.first = b.first < 0 ? step : std::min(b.first, step);
    b.last = std::max(b.last, step);
  };
  for (const auto& [name, slot] : plan.feeds) touch(slot, 0);  // copied in before step 0
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (int s : plan.steps[i]->reads) touch(s, static_cast<int>(i));
    for (int s : plan.steps[i]->writes) touch(s, static_cast<int>(i));
  }
  for (int s : plan.outputs) touch(s, static_cast<int>(plan.steps.size()));  // copied out after the last
  std::vector<exec::BufferRequest> requests;
  std::vector<int> ids;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const ArenaBuffer& buf = plan.buffers[b];
    if (buf.first < 0) continue;  // never touched (a scratch slot the lowering did not use)
    requests.push_back({buf.size, buf.first, buf.last});
    ids.push_back(static_cast<int>(b));
  }
  exec::MemoryPlan mp = exec::PlanMemory(requests);
  for (size_t i = 0; i < ids.size(); ++i) plan.buffers[ids[i]].offset = mp.offsets[i];
  plan.arena_bytes = mp.arena_bytes;
  plan.stats.arena_bytes = mp.arena_bytes;
  return absl::OkStatus();
}

std::string GraphBlocker(const Plan& plan) {
  if (!plan.options.use_cuda_graph) return "disabled by option";
  for (const auto& s : plan.steps) {
    if (s->host_sync) return absl::StrCat("host fallback step ", s->label);
  }
  return "";
}

}  // namespace aic::cuda

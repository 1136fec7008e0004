// Places the plan's intermediates in one arena: lifetimes from the step
// order, in-place sharing where a step may overwrite an input that dies
// there, offsets from the memory planner, then pointers and memory objects.
#include <algorithm>

#include "exec/cpu/internal.h"
#include "exec/common/memory_planner.h"

namespace aic::cpu {

namespace {

void ComputeLifetimes(Plan& plan) {
  for (ArenaBuffer& b : plan.buffers) b.first = b.last = -1;
  auto touch = [&](int slot, int step) {
    int b = plan.slots[slot].buffer;
    if (plan.slots[slot].storage != Slot::Storage::kArena || b < 0) return;
    ArenaBuffer& buf = plan.buffers[b];
    buf.first = buf.first < 0 ? step : std::min(buf.first, step);
    buf.last = std::max(buf.last, step);
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (int s : plan.steps[i]->reads) touch(s, static_cast<int>(i));
    for (int s : plan.steps[i]->writes) touch(s, static_cast<int>(i));
  }
  // Graph outputs are copied out after the last step.
  for (int s : plan.outputs) {
    if (s >= 0) touch(s, static_cast<int>(plan.steps.size()));
  }
}

// Whether a layout pads its dims (aBcd16b over 8 channels): its bytes exceed
// the elements'.
bool IsPadded(const Slot& s) {
  size_t elements = 1;
  for (int64_t d : s.md.dims()) elements *= static_cast<size_t>(d);
  return s.md.get_size() != elements * sizeof(float);
}

// Lets a step's output take its first input's bytes when that input dies at
// the step and the sizes agree (eltwise and binary primitives allow it).
// Not over padded layouts: oneDNN 2.6's binary primitive with post-ops
// computes wrong values in place there (a deconvolution's aBcd16b output of
// 8 channels times a tensor, then a scale; found by tests/graph_fuzz).
// A step that accumulates into its output (Step::accumulate) takes the
// accumulated slot's bytes likewise, unless the step also reads that buffer
// through another input (a conv adding its own input: it would overwrite
// what it still reads).
void ShareInPlace(Plan& plan) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = *plan.steps[i];
    if (st.writes.empty()) continue;
    int from_slot = -1;
    if (st.accumulate >= 0) {
      const int buffer = plan.slots[st.accumulate].buffer;
      bool read_otherwise = false;
      for (int r : st.reads) read_otherwise = read_otherwise || (r != st.accumulate && plan.slots[r].buffer == buffer);
      if (read_otherwise) continue;
      from_slot = st.accumulate;
    } else if (st.inplace_ok && !st.reads.empty()) {
      from_slot = st.reads[0];
    } else {
      continue;
    }
    Slot& in = plan.slots[from_slot];
    Slot& out = plan.slots[st.writes[0]];
    if (in.storage != Slot::Storage::kArena || out.storage != Slot::Storage::kArena) continue;
    if (in.buffer == out.buffer || in.bytes() != out.bytes() || in.md != out.md || IsPadded(in)) continue;
    ArenaBuffer& ib = plan.buffers[in.buffer];
    ArenaBuffer& ob = plan.buffers[out.buffer];
    if (ib.last != static_cast<int>(i) || ob.first != static_cast<int>(i)) continue;
    int from = out.buffer;
    ib.last = std::max(ib.last, ob.last);
    ob.size = 0;
    ob.first = ob.last = -1;
    for (Slot& s : plan.slots) {
      if (s.buffer == from) s.buffer = in.buffer;
    }
  }
}

// Gives each plain graph output that owns its arena buffer (no view of it,
// no view itself) a fresh tensor per run instead: its producer writes there
// directly, so Run hands the tensor over rather than copying it out of the
// arena, and the arena need not hold it.
void PromoteOutputs(Plan& plan) {
  for (int id : plan.outputs) {
    if (id < 0) continue;
    Slot& s = plan.slots[id];
    if (s.storage != Slot::Storage::kArena || !s.plain || s.alias_of >= 0 || s.buffer < 0 ||
        s.dtype == DType::kUndefined || s.dtype == DType::kString || s.holds_other) {
      continue;
    }
    bool shared = false;
    for (size_t j = 0; j < plan.slots.size() && !shared; ++j) {
      shared = static_cast<int>(j) != id && plan.slots[j].storage == Slot::Storage::kArena &&
               plan.slots[j].buffer == s.buffer;
    }
    if (shared) continue;
    s.storage = Slot::Storage::kOutput;
    s.buffer = -1;
  }
}

}  // namespace

absl::Status PlaceArena(Plan& plan) {
  PromoteOutputs(plan);
  ComputeLifetimes(plan);
  ShareInPlace(plan);
  std::vector<exec::BufferRequest> requests;
  std::vector<int> ids;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const ArenaBuffer& buf = plan.buffers[b];
    if (buf.first < 0) continue;  // merged away or never touched
    requests.push_back({buf.size, buf.first, buf.last});
    ids.push_back(static_cast<int>(b));
  }
  exec::MemoryPlan mp = exec::PlanMemory(requests);
  for (size_t i = 0; i < ids.size(); ++i) plan.buffers[ids[i]].offset = mp.offsets[i];
  plan.arena = Buffer::Allocate(std::max<size_t>(mp.arena_bytes, exec::kArenaAlignment));
  plan.stats.arena_bytes = mp.arena_bytes;
  uint8_t* base = plan.arena->mutable_data();
  std::shared_ptr<Buffer> arena = plan.arena;
  for (Slot& s : plan.slots) {
    if (s.storage != Slot::Storage::kArena || s.buffer < 0) continue;
    size_t offset = plan.buffers[s.buffer].offset;
    s.ptr = base + offset;
    if (s.plain && s.dtype != DType::kUndefined) {
      s.tensor = Tensor(s.dtype, s.dims, arena, offset);
    }
  }
  for (auto& st : plan.steps) st->Bind(plan);
  return absl::OkStatus();
}

}  // namespace aic::cpu

#include "exec/cpu/half_storage.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/cast.h"

namespace aic::cpu {

namespace {

// Rounds one slot in place. The element count is read when it runs: a
// reference kernel's output (a dynamic slot) is a fresh tensor each run.
class RoundHalfStep : public Step {
 public:
  RoundHalfStep(int slot, DType half, const Slot& s) : slot_(slot), half_(half) {
    reads = {slot};
    writes = {slot};
    kind = "round";
    label = absl::StrCat("round '", s.name, "' to ", DTypeName(half));
  }
  absl::Status Execute(Plan& plan) override {
    Slot& s = plan.slots[slot_];
    if (s.ptr == nullptr || s.holds_other) return absl::OkStatus();
    int64_t n = 0;
    if (s.storage == Slot::Storage::kDynamic) {
      if (!s.tensor.defined() || s.tensor.dtype() != DType::kFloat) return absl::OkStatus();
      n = s.tensor.num_elements();
    } else if (s.md.get_size() > 0) {
      n = static_cast<int64_t>(s.md.get_size() / sizeof(float));  // a blocked layout's padding included: zeros stay 0
    } else {
      n = NumElements(s.dims);
    }
    kernels::RoundToHalfInPlace(static_cast<float*>(s.ptr), n, half_);
    return absl::OkStatus();
  }

 private:
  int slot_;
  DType half_;
};

}  // namespace

void RoundStoredHalfSlots(Plan& plan, const absl::flat_hash_map<int, DType>& half_slots) {
  if (half_slots.empty()) return;
  // The last writer of each slot: a value is complete once every step
  // producing it has run (its readers all come later).
  absl::flat_hash_map<int, size_t> last_writer;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (int w : plan.steps[i]->writes) {
      if (half_slots.contains(w)) last_writer[w] = i;
    }
  }
  std::vector<std::vector<int>> after(plan.steps.size());
  for (const auto& [slot, step] : last_writer) after[step].push_back(slot);
  std::vector<std::unique_ptr<Step>> steps;
  steps.reserve(plan.steps.size() + last_writer.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    steps.push_back(std::move(plan.steps[i]));
    std::sort(after[i].begin(), after[i].end());
    for (int slot : after[i]) {
      steps.push_back(std::make_unique<RoundHalfStep>(slot, half_slots.at(slot), plan.slots[slot]));
    }
  }
  plan.steps = std::move(steps);
}

Tensor RoundedToHalf(const Tensor& t, DType half) {
  Tensor r(t.dtype(), t.dims());
  if (t.byte_size() > 0) std::memcpy(r.mutable_raw_data(), t.raw_data(), t.byte_size());
  kernels::RoundToHalfInPlace(r.mutable_data<float>(), r.num_elements(), half);
  return r;
}

}  // namespace aic::cpu

// A step running one of our own kernels (exec/cpu/kernels/): reads the
// current addresses of its input slots, writes its output slots (dense
// row-major, in the arena). The body is a closure made at compile time, so
// shape-dependent tables (broadcast loops, pad maps, resize taps) are built once.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/internal.h"
#include "exec/cpu/lowering.h"

namespace aic::cpu {

class NativeStep : public Step {
 public:
  using Body = std::function<absl::Status(const void* const* in, void* const* out)>;
  NativeStep(std::vector<int> inputs, std::vector<int> outputs, Body body, std::string step_kind,
             std::string step_label)
      : inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        body_(std::move(body)),
        in_ptrs_(inputs_.size()),
        out_ptrs_(outputs_.size()) {
    for (int s : inputs_) {
      if (s >= 0) reads.push_back(s);
    }
    for (int s : outputs_) {
      if (s >= 0) writes.push_back(s);
    }
    kind = std::move(step_kind);
    label = std::move(step_label);
  }
  absl::Status Execute(Plan& plan) override {
    for (size_t i = 0; i < inputs_.size(); ++i) in_ptrs_[i] = inputs_[i] < 0 ? nullptr : plan.slots[inputs_[i]].ptr;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      out_ptrs_[i] = outputs_[i] < 0 ? nullptr : plan.slots[outputs_[i]].ptr;
    }
    return body_(in_ptrs_.data(), out_ptrs_.data());
  }

 private:
  std::vector<int> inputs_;   // -1: an omitted optional input (null pointer)
  std::vector<int> outputs_;  // -1: an unrequested output (null pointer)
  Body body_;
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
};

// A dense arena slot for value v (any fixed-size dtype); -1 when v's dtype
// or shape is not known or it has no elements.
int NativeOutSlot(Lowerer& L, const Value* v);

// Whether v has a value with a known dtype and static dims (a slot or a constant).
bool NativeReady(Lowerer& L, const Value* v);

// Appends a NativeStep for node n; returns it. The one-output form's body
// gets that output's address.
NativeStep* AddNativeStep(Lowerer& L, const Node& n, std::vector<int> inputs, std::vector<int> outputs,
                          NativeStep::Body body);
NativeStep* AddNativeStep(Lowerer& L, const Node& n, std::vector<int> inputs, int output,
                          std::function<absl::Status(const void* const* in, void* out)> body);

}  // namespace aic::cpu

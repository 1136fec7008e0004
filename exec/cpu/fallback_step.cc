#include "exec/cpu/fallback_step.h"

#include "absl/strings/str_cat.h"

namespace aic::cpu {

FallbackStep::FallbackStep(const Node* node, int64_t opset, const OpDef* def, std::vector<int> inputs,
                           std::vector<int> outputs)
    : node_(node), opset_(opset), def_(def), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  for (int s : inputs_) {
    if (s >= 0) reads.push_back(s);
  }
  for (int s : outputs_) {
    if (s >= 0) writes.push_back(s);
  }
  kind = "fallback";
  label = node->Describe();
  values_.resize(inputs_.size());
}

absl::Status FallbackStep::Execute(Plan& plan) {
  std::vector<const RuntimeValue*> ins(inputs_.size(), nullptr);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] < 0) continue;
    values_[i] = RuntimeValue(plan.slots[inputs_[i]].tensor);
    ins[i] = &values_[i];
  }
  KernelContext ctx(*node_, opset_, std::move(ins), nullptr);
  absl::Status s = def_->kernel(ctx);
  if (!s.ok()) return s;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] < 0) continue;
    Slot& out = plan.slots[outputs_[i]];
    const RuntimeValue& rv = ctx.outputs()[i];
    if (!rv.is_tensor()) {
      return absl::UnimplementedError(absl::StrCat(node_->Describe(), ": non-tensor output"));
    }
    if (out.static_shape) {
      if (rv.tensor.dims() != out.dims || rv.tensor.dtype() != out.dtype) {
        return absl::InternalError(absl::StrCat(node_->Describe(), ": output ", i, " is ",
                                                rv.tensor.DebugString(0), ", the plan expected ",
                                                DimsToString(out.dims)));
      }
    }
    out.tensor = rv.tensor;
    out.ptr = const_cast<void*>(out.tensor.raw_data());
  }
  return absl::OkStatus();
}

absl::Status ViewStep::Execute(Plan& plan) {
  Slot& dst = plan.slots[dst_];
  dst.tensor = plan.slots[src_].tensor.WithDims(dst.dims);
  dst.ptr = plan.slots[src_].ptr;
  return absl::OkStatus();
}

}  // namespace aic::cpu

#include "exec/cpu/fallback_step.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "exec/reference/executor.h"
#include "ops/util/float_convert.h"

namespace aic::cpu {

namespace {

// A kernel may return its input's storage (Identity-like kernels, a branch
// that yields an outer value): when that storage is the arena, the bytes are
// reused by later steps, so the result gets its own copy.
Tensor Detached(const Tensor& t, const Plan& plan) {
  if (t.buffer() != nullptr && t.buffer() == plan.arena) return t.Clone();
  return t;
}

RuntimeValue Detached(RuntimeValue v, const Plan& plan) {
  if (v.is_tensor()) v.tensor = Detached(v.tensor, plan);
  for (Tensor& t : v.sequence) t = Detached(t, plan);
  return v;
}

}  // namespace

FallbackStep::FallbackStep(const Node* node, int64_t opset, const OpDef* def, std::vector<int> inputs,
                           std::vector<int> outputs, std::vector<std::pair<const Value*, int>> outer)
    : node_(node),
      opset_(opset),
      def_(def),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      outer_(std::move(outer)) {
  for (int s : inputs_) {
    if (s >= 0) reads.push_back(s);
  }
  // The bodies read these during the step: their bytes must live until then.
  for (const auto& [v, s] : outer_) reads.push_back(s);
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
    values_[i] = plan.slots[inputs_[i]].Get();
    if (i < narrow_.size() && narrow_[i] != DType::kUndefined && values_[i].is_tensor() &&
        values_[i].tensor.dtype() == DType::kFloat) {
      values_[i].tensor = NarrowFromFloat(values_[i].tensor, narrow_[i]);
    }
    ins[i] = &values_[i];
  }
  // Last run's results let go first: a body plan reuses its output buffers
  // only when nobody else holds them (a fresh 12 MB each run faulted its
  // pages in again inside the body's kernel).
  for (int s : outputs_) {
    if (s >= 0 && plan.slots[s].storage == Slot::Storage::kDynamic) plan.slots[s].Set(RuntimeValue(Tensor()));
  }
  std::unique_ptr<SubgraphRunner> runner;
  if (!node_->Subgraphs().empty()) {
    if (bodies_ == nullptr) bodies_ = std::make_unique<BodyPlans>();
    std::vector<BodyPlans::Outer> scope;
    scope.reserve(outer_.size());
    for (const auto& [v, s] : outer_) {
      const Slot& slot = plan.slots[s];
      scope.push_back({v, slot.Get(), slot.storage == Slot::Storage::kConstant});
    }
    runner = bodies_->Runner(plan, std::move(scope));
  }
  std::vector<RuntimeValue> results;
  std::optional<Tensor> fast;
  if (fast_ != nullptr && narrow_.empty()) {
    AIC_ASSIGN_OR_RETURN(fast, fast_->run(*node_, opset_, ins));
  }
  if (fast) {
    results.emplace_back(std::move(*fast));
  } else if (def_ == nullptr) {
    AIC_ASSIGN_OR_RETURN(results, RunReferenceFunctionCall(*plan.model, *node_, ins));
  } else {
    KernelContext ctx(*node_, opset_, std::move(ins), runner.get());
    absl::Status s = def_->kernel(ctx);
    if (runner != nullptr) SetCpuThreads(plan.threads);  // a body's plan may have run on fewer
    if (!s.ok()) return s;
    results = std::move(ctx.outputs());
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] < 0) continue;
    Slot& out = plan.slots[outputs_[i]];
    RuntimeValue rv = Detached(std::move(results[i]), plan);
    if (!narrow_.empty() && rv.is_tensor() && IsHalfType(rv.tensor.dtype()) && out.dtype == DType::kFloat) {
      rv.tensor = WidenToFloat(rv.tensor);
    }
    if (out.static_shape) {
      if (!rv.is_tensor() || rv.tensor.dims() != out.dims || rv.tensor.dtype() != out.dtype) {
        return absl::InternalError(absl::StrCat(node_->Describe(), ": output ", i, " is ",
                                                rv.is_tensor() ? rv.tensor.DebugString(0) : "not a tensor",
                                                ", the plan expected ", DTypeName(out.dtype),
                                                DimsToString(out.dims)));
      }
    }
    out.Set(std::move(rv));
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

// The host fallback: a node with no device lowering runs its reference
// kernel on host copies of its inputs; its outputs go back into the arena.
#include <cuda_runtime_api.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/steps.h"
#include "ops/kernel_context.h"

namespace aic::cuda {

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
  host_sync = true;
}

absl::Status FallbackStep::RunKernel(const Plan& plan, const std::vector<Tensor>& inputs,
                                     std::vector<Tensor>* outputs) {
  std::vector<RuntimeValue> holders(inputs.size());
  std::vector<const RuntimeValue*> ins(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    holders[i] = RuntimeValue(inputs[i]);
    ins[i] = &holders[i];
  }
  KernelContext kc(*node_, opset_, std::move(ins), nullptr);
  AIC_RETURN_IF_ERROR(def_->kernel(kc));
  outputs->assign(outputs_.size(), Tensor());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] < 0) continue;
    const Slot& out = plan.slots[outputs_[i]];
    const RuntimeValue& rv = kc.outputs()[i];
    if (!rv.is_tensor() || rv.tensor.dims() != out.dims || rv.tensor.dtype() != out.dtype) {
      return absl::InternalError(absl::StrCat(node_->Describe(), ": output ", i, " is not the ", DTypeName(out.dtype),
                                              DimsToString(out.dims), " the plan expected"));
    }
    (*outputs)[i] = rv.tensor;
  }
  return absl::OkStatus();
}

absl::Status FallbackStep::Launch(const Plan& plan, DeviceContext& ctx) {
  std::vector<Tensor> ins(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] < 0) continue;
    const Slot& s = plan.slots[inputs_[i]];
    ins[i] = Tensor(s.dtype, s.dims);
    if (s.bytes() > 0) {
      AIC_CUDA_CHECK(cudaMemcpyAsync(ins[i].mutable_raw_data(), plan.Ptr(inputs_[i], ctx.mem), s.bytes(),
                                     cudaMemcpyDeviceToHost, ctx.stream));
    }
  }
  AIC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<Tensor> outs;
  AIC_RETURN_IF_ERROR(RunKernel(plan, ins, &outs));
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] < 0 || outs[i].byte_size() == 0) continue;
    AIC_CUDA_CHECK(cudaMemcpyAsync(plan.Ptr(outputs_[i], ctx.mem), outs[i].raw_data(), outs[i].byte_size(),
                                   cudaMemcpyHostToDevice, ctx.stream));
  }
  // The host tensors die here: finish the copies first.
  AIC_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return absl::OkStatus();
}

absl::Status FallbackStep::Emulate(const Plan& plan, const Memory& mem) {
  std::vector<Tensor> ins(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] < 0) continue;
    const Slot& s = plan.slots[inputs_[i]];
    ins[i] = Tensor(s.dtype, s.dims);
    if (s.bytes() > 0) std::memcpy(ins[i].mutable_raw_data(), plan.Ptr(inputs_[i], mem), s.bytes());
  }
  std::vector<Tensor> outs;
  AIC_RETURN_IF_ERROR(RunKernel(plan, ins, &outs));
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i] < 0 || outs[i].byte_size() == 0) continue;
    std::memcpy(plan.Ptr(outputs_[i], mem), outs[i].raw_data(), outs[i].byte_size());
  }
  return absl::OkStatus();
}

}  // namespace aic::cuda

// Steps over our own kernels (kernels_*.cu), each launching its descriptor on
// the plan's stream or running the host version of it (kernels_host.cc).
#include "absl/strings/str_cat.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/kernels_host.h"
#include "exec/cuda/steps.h"

namespace aic::cuda {

namespace {

std::vector<const float*> FloatInputs(const Plan& plan, const std::vector<int>& slots, const Memory& mem) {
  std::vector<const float*> ptrs;
  for (int s : slots) ptrs.push_back(plan.Ptr<const float>(s, mem));
  return ptrs;
}

}  // namespace

EltStep::EltStep(const EltProgram& p, std::vector<int> inputs, int out) : p_(p), inputs_(std::move(inputs)), out_(out) {
  reads = inputs_;
  writes = {out};
  kind = "eltwise";
}

absl::Status EltStep::Launch(const Plan& plan, DeviceContext& ctx) {
  auto ins = FloatInputs(plan, inputs_, ctx.mem);
  AIC_CUDA_CHECK(LaunchEltwise(p_, ins.data(), plan.Ptr<float>(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status EltStep::Emulate(const Plan& plan, const Memory& mem) {
  auto ins = FloatInputs(plan, inputs_, mem);
  host::Eltwise(p_, ins.data(), plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

CopyStep::CopyStep(std::vector<Part> parts, int out) : parts_(std::move(parts)), out_(out) {
  for (const Part& p : parts_) reads.push_back(p.in);
  writes = {out};
  kind = "copy";
}

absl::Status CopyStep::Launch(const Plan& plan, DeviceContext& ctx) {
  for (const Part& p : parts_) {
    AIC_CUDA_CHECK(LaunchStridedCopy(p.copy, plan.Ptr(p.in, ctx.mem), plan.Ptr(out_, ctx.mem), ctx.stream));
  }
  return absl::OkStatus();
}

absl::Status CopyStep::Emulate(const Plan& plan, const Memory& mem) {
  for (const Part& p : parts_) host::StridedCopyRun(p.copy, plan.Ptr(p.in, mem), plan.Ptr(out_, mem));
  return absl::OkStatus();
}

SoftmaxStep::SoftmaxStep(const SoftmaxDesc& d, int in, int out) : d_(d), in_(in), out_(out) {
  reads = {in};
  writes = {out};
  kind = "softmax";
}

absl::Status SoftmaxStep::Launch(const Plan& plan, DeviceContext& ctx) {
  AIC_CUDA_CHECK(LaunchSoftmax(d_, plan.Ptr<const float>(in_, ctx.mem), plan.Ptr<float>(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status SoftmaxStep::Emulate(const Plan& plan, const Memory& mem) {
  host::Softmax(d_, plan.Ptr<const float>(in_, mem), plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

LayerNormStep::LayerNormStep(const LayerNormDesc& d, int in, int scale, int bias, int out)
    : d_(d), in_(in), scale_(scale), bias_(bias), out_(out) {
  reads = {in, scale};
  if (bias >= 0) reads.push_back(bias);
  writes = {out};
  kind = "layernorm";
}

absl::Status LayerNormStep::Launch(const Plan& plan, DeviceContext& ctx) {
  const float* bias = bias_ >= 0 ? plan.Ptr<const float>(bias_, ctx.mem) : nullptr;
  AIC_CUDA_CHECK(LaunchLayerNorm(d_, plan.Ptr<const float>(in_, ctx.mem), plan.Ptr<const float>(scale_, ctx.mem), bias,
                                 plan.Ptr<float>(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status LayerNormStep::Emulate(const Plan& plan, const Memory& mem) {
  const float* bias = bias_ >= 0 ? plan.Ptr<const float>(bias_, mem) : nullptr;
  host::LayerNorm(d_, plan.Ptr<const float>(in_, mem), plan.Ptr<const float>(scale_, mem), bias,
                  plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

ReduceStep::ReduceStep(const ReduceDesc& d, int in, int out) : d_(d), in_(in), out_(out) {
  reads = {in};
  writes = {out};
  kind = "reduce";
}

absl::Status ReduceStep::Launch(const Plan& plan, DeviceContext& ctx) {
  AIC_CUDA_CHECK(LaunchReduce(d_, plan.Ptr<const float>(in_, ctx.mem), plan.Ptr<float>(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status ReduceStep::Emulate(const Plan& plan, const Memory& mem) {
  host::Reduce(d_, plan.Ptr<const float>(in_, mem), plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

GatherStep::GatherStep(const GatherDesc& d, int data, int indices, int out)
    : d_(d), data_(data), indices_(indices), out_(out) {
  reads = {data, indices};
  writes = {out};
  kind = "gather";
}

absl::Status GatherStep::Launch(const Plan& plan, DeviceContext& ctx) {
  AIC_CUDA_CHECK(
      LaunchGather(d_, plan.Ptr(data_, ctx.mem), plan.Ptr(indices_, ctx.mem), plan.Ptr(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status GatherStep::Emulate(const Plan& plan, const Memory& mem) {
  host::Gather(d_, plan.Ptr(data_, mem), plan.Ptr(indices_, mem), plan.Ptr(out_, mem));
  return absl::OkStatus();
}

PoolStep::PoolStep(const PoolDesc& d, int in, int out) : d_(d), in_(in), out_(out) {
  reads = {in};
  writes = {out};
  kind = "pool";
}

absl::Status PoolStep::Launch(const Plan& plan, DeviceContext& ctx) {
  AIC_CUDA_CHECK(LaunchPool(d_, plan.Ptr<const float>(in_, ctx.mem), plan.Ptr<float>(out_, ctx.mem), ctx.stream));
  return absl::OkStatus();
}

absl::Status PoolStep::Emulate(const Plan& plan, const Memory& mem) {
  host::Pool(d_, plan.Ptr<const float>(in_, mem), plan.Ptr<float>(out_, mem));
  return absl::OkStatus();
}

}  // namespace aic::cuda

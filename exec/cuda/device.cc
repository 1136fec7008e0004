// The device stage: stream, cuBLASLt and cuDNN handles, the arena sized by
// the static plan, the weights uploaded once, pinned host buffers for every
// input and output, and the whole plan (input copies, steps, output copies)
// captured as one CUDA Graph on the first run and replayed after. A failed
// capture is not an error: the plan records why and runs eagerly.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/cuda/cuda_status.h"
#include "exec/cuda/internal.h"
#ifdef AIC_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace aic::cuda {

struct DeviceState {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
#ifdef AIC_HAVE_CUDNN
  cudnnHandle_t dnn = nullptr;
#endif
  void* arena = nullptr;
  void* weights = nullptr;
  void* workspace = nullptr;
  std::vector<void*> pinned_in;   // per plan.feeds
  std::vector<void*> pinned_out;  // per plan.outputs
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool capture_tried = false;
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceContext ctx;

  ~DeviceState() {
    // Teardown errors have nobody to report to; a sticky device error makes them all fail alike.
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    for (void* p : pinned_in) cudaFreeHost(p);
    for (void* p : pinned_out) cudaFreeHost(p);
    if (workspace != nullptr) cudaFree(workspace);
    if (weights != nullptr) cudaFree(weights);
    if (arena != nullptr) cudaFree(arena);
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
#ifdef AIC_HAVE_CUDNN
    if (dnn != nullptr) cudnnDestroy(dnn);
#endif
    if (lt != nullptr) cublasLtDestroy(lt);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

Plan::Plan() = default;
Plan::~Plan() {
  steps.clear();  // their cuBLASLt/cuDNN descriptors go before the handles
  device.reset();
}

namespace {

size_t AtLeast(size_t n) { return n > 0 ? n : 256; }

absl::Status Enqueue(const Plan& plan, DeviceState& d) {
  for (size_t i = 0; i < plan.feeds.size(); ++i) {
    int slot = plan.feeds[i].second;
    size_t bytes = plan.slots[slot].bytes();
    if (bytes == 0) continue;
    AIC_CUDA_CHECK(cudaMemcpyAsync(plan.Ptr(slot, d.ctx.mem), d.pinned_in[i], bytes, cudaMemcpyHostToDevice, d.stream));
  }
  for (const auto& step : plan.steps) {
    absl::Status s = step->Launch(plan, d.ctx);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(step->label, ": ", s.message()));
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    int slot = plan.outputs[i];
    size_t bytes = plan.slots[slot].bytes();
    if (bytes == 0) continue;
    AIC_CUDA_CHECK(
        cudaMemcpyAsync(d.pinned_out[i], plan.Ptr(slot, d.ctx.mem), bytes, cudaMemcpyDeviceToHost, d.stream));
  }
  return absl::OkStatus();
}

// Captures the whole plan once; on failure records why in the stats and leaves exec null.
void TryCapture(Plan& plan, DeviceState& d) {
  d.capture_tried = true;
  if (!plan.stats.graph_blocker.empty()) return;
  absl::Status s = CudaStatus(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  if (s.ok()) {
    absl::Status enq = Enqueue(plan, d);
    absl::Status end = CudaStatus(cudaStreamEndCapture(d.stream, &d.graph), "end capture");
    s = enq.ok() ? end : enq;
  }
  if (s.ok()) s = CudaStatus(cudaGraphInstantiate(&d.exec, d.graph, 0), "cudaGraphInstantiate");
  if (!s.ok()) {
    cudaGetLastError();  // capture errors are not sticky; clear them
    if (d.exec != nullptr) cudaGraphExecDestroy(d.exec);
    d.exec = nullptr;
    plan.stats.graph_blocker = absl::StrCat("capture failed: ", s.message());
  }
}

absl::Status CopyFeedsToPinned(const Plan& plan, DeviceState& d, const std::map<std::string, RuntimeValue>& feeds) {
  AIC_RETURN_IF_ERROR(CheckFeeds(plan, feeds));
  for (size_t i = 0; i < plan.feeds.size(); ++i) {
    const Tensor& t = feeds.at(plan.feeds[i].first).tensor;
    if (t.byte_size() > 0) std::memcpy(d.pinned_in[i], t.raw_data(), t.byte_size());
  }
  return absl::OkStatus();
}

absl::Status LaunchOnce(Plan& plan, DeviceState& d) {
  if (!d.capture_tried) TryCapture(plan, d);
  if (d.exec != nullptr) {
    AIC_CUDA_CHECK(cudaGraphLaunch(d.exec, d.stream));
    return absl::OkStatus();
  }
  return Enqueue(plan, d);
}

}  // namespace

absl::Status Instantiate(Plan& plan) {
  AIC_RETURN_IF_ERROR(ProbeDevice());
  auto d = std::make_unique<DeviceState>();
  AIC_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
  AIC_CUBLAS_CHECK(cublasLtCreate(&d->lt));
#ifdef AIC_HAVE_CUDNN
  if (plan.options.use_cudnn && cudnnCreate(&d->dnn) != CUDNN_STATUS_SUCCESS) d->dnn = nullptr;  // implicit GEMM
#endif
  AIC_CUDA_CHECK(cudaMalloc(&d->arena, AtLeast(plan.arena_bytes)));
  AIC_CUDA_CHECK(cudaMalloc(&d->weights, AtLeast(plan.weights.size())));
  if (!plan.weights.empty()) {
    AIC_CUDA_CHECK(cudaMemcpy(d->weights, plan.weights.data(), plan.weights.size(), cudaMemcpyHostToDevice));
  }
  for (const auto& [name, slot] : plan.feeds) {
    d->pinned_in.push_back(nullptr);
    AIC_CUDA_CHECK(cudaMallocHost(&d->pinned_in.back(), AtLeast(plan.slots[slot].bytes())));
  }
  for (int slot : plan.outputs) {
    d->pinned_out.push_back(nullptr);
    AIC_CUDA_CHECK(cudaMallocHost(&d->pinned_out.back(), AtLeast(plan.slots[slot].bytes())));
  }
  AIC_CUDA_CHECK(cudaEventCreate(&d->start));
  AIC_CUDA_CHECK(cudaEventCreate(&d->stop));
  d->ctx.stream = d->stream;
  d->ctx.cublaslt = d->lt;
#ifdef AIC_HAVE_CUDNN
  d->ctx.cudnn = d->dnn;
#endif
  d->ctx.mem = {static_cast<uint8_t*>(d->arena), static_cast<const uint8_t*>(d->weights)};
  d->ctx.allow_tf32 = plan.options.allow_tf32;
  size_t workspace = 0;
  for (const auto& step : plan.steps) {
    absl::Status s = step->Prepare(plan, d->ctx);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(step->label, ": ", s.message()));
    workspace = std::max(workspace, step->WorkspaceBytes());
  }
  if (workspace > 0) AIC_CUDA_CHECK(cudaMalloc(&d->workspace, workspace));
  d->ctx.workspace = d->workspace;
  d->ctx.workspace_bytes = workspace;
  plan.device = std::move(d);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RuntimeValue>> Run(Plan& plan, const std::map<std::string, RuntimeValue>& feeds) {
  if (plan.device == nullptr) AIC_RETURN_IF_ERROR(Instantiate(plan));
  DeviceState& d = *plan.device;
  AIC_RETURN_IF_ERROR(CopyFeedsToPinned(plan, d, feeds));
  AIC_RETURN_IF_ERROR(LaunchOnce(plan, d));
  AIC_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  std::vector<RuntimeValue> outs;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const Slot& s = plan.slots[plan.outputs[i]];
    Tensor t(s.dtype, s.dims);
    if (t.byte_size() > 0) std::memcpy(t.mutable_raw_data(), d.pinned_out[i], t.byte_size());
    outs.emplace_back(std::move(t));
  }
  return outs;
}

bool UsesCudaGraph(const Plan& plan) { return plan.device != nullptr && plan.device->exec != nullptr; }

absl::StatusOr<std::vector<double>> TimeRuns(Plan& plan,
                                             const std::vector<std::map<std::string, RuntimeValue>>& feed_sets,
                                             int warmup, int iters) {
  if (feed_sets.empty()) return absl::InvalidArgumentError("TimeRuns needs at least one set of inputs");
  AIC_RETURN_IF_ERROR(Run(plan, feed_sets[0]).status());  // instantiates and captures
  DeviceState& d = *plan.device;
  std::vector<double> ms;
  for (int i = 0; i < warmup + iters; ++i) {
    AIC_RETURN_IF_ERROR(CopyFeedsToPinned(plan, d, feed_sets[static_cast<size_t>(i) % feed_sets.size()]));
    AIC_CUDA_CHECK(cudaEventRecord(d.start, d.stream));
    AIC_RETURN_IF_ERROR(LaunchOnce(plan, d));
    AIC_CUDA_CHECK(cudaEventRecord(d.stop, d.stream));
    AIC_CUDA_CHECK(cudaEventSynchronize(d.stop));
    float elapsed = 0;
    AIC_CUDA_CHECK(cudaEventElapsedTime(&elapsed, d.start, d.stop));
    if (i >= warmup) ms.push_back(elapsed);
  }
  return ms;
}

}  // namespace aic::cuda

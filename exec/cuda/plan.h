// The CUDA executor. Compile() turns a model plus concrete input shapes into
// a Plan in two stages: a host-only stage (shape-specialized clone, constant
// folding, one step per node or fused group: cuBLASLt matmuls with bias /
// ReLU / GELU-tanh / residual epilogues, fused elementwise programs over one
// broadcast driver, our row and data-movement kernels, cuDNN convolutions,
// host fallbacks; one static arena plan) that needs no GPU and is unit-tested
// on the CPU, and a device stage (arena, weights upload, pinned I/O buffers,
// cuBLASLt/cuDNN descriptors). Run() replays the whole plan as one CUDA Graph
// captured on its first run (plans with host fallbacks run eagerly).
// CudaExecutor caches one Plan per input-shape signature. See docs/CUDA.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/common/plan_cache.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::cuda {

struct CudaOptions {
  bool fuse_epilogues = true;  // bias/activation/residual into cuBLASLt; elementwise chains into one kernel
  bool use_cuda_graph = true;  // capture and replay the whole plan when it allows
  bool allow_tf32 = false;     // TF32 tensor cores for fp32 GEMM/conv (off: full fp32, like the reference)
  bool use_cudnn = true;       // cuDNN convolutions when built with cuDNN
};

struct PlanStats {
  int steps = 0;
  int gemm_steps = 0;       // cuBLASLt
  int conv_steps = 0;       // cuDNN or the implicit-GEMM kernel
  int kernel_steps = 0;     // our kernels (elementwise, softmax, layer norm, copies, ...)
  int fallback_steps = 0;   // reference kernels on the host
  int view_steps = 0;       // zero-copy reshapes (no step is emitted; counted only)
  int fused_nodes = 0;      // nodes folded into another step (epilogues, programs, BN into conv)
  int folded_nodes = 0;     // computed at compile time
  size_t arena_bytes = 0;   // device activations, feeds and outputs
  size_t weight_bytes = 0;  // device constants
  std::vector<std::string> fallback_ops;
  std::string graph_blocker;  // why the plan cannot be one CUDA Graph ("" when it can)
};

class Plan;

// Host stage only: needs no GPU. input_shapes: graph input -> dims.
absl::StatusOr<std::unique_ptr<Plan>> BuildPlan(const Model& model,
                                                const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                const CudaOptions& options = {});

// BuildPlan plus the device stage; FailedPrecondition "no CUDA device: ..." without one.
absl::StatusOr<std::unique_ptr<Plan>> Compile(const Model& model,
                                              const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                              const CudaOptions& options = {});

// Runs on the device; feeds must match the compiled shapes. Outputs are fresh host tensors.
absl::StatusOr<std::vector<RuntimeValue>> Run(Plan& plan, const std::map<std::string, RuntimeValue>& feeds);

// Runs the same steps on the CPU with host versions of every kernel over a
// host arena laid out exactly as the device one (tests the lowering, the
// descriptors and the memory plan without a GPU; slow).
absl::StatusOr<std::vector<RuntimeValue>> Emulate(const Plan& plan, const std::map<std::string, RuntimeValue>& feeds);

const PlanStats& StatsOf(const Plan& plan);
// One line per step ("gemm  MatMul 'fc1' [RELU_BIAS] + bias,relu -> ..."), then totals.
std::string DescribePlan(const Plan& plan);
// The same for the host stage alone (needs no GPU): what each node would run as.
absl::StatusOr<std::string> DescribeBuild(const Model& model,
                                          const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                          const CudaOptions& options = {});
bool UsesCudaGraph(const Plan& plan);  // after a Run: whether it replayed a graph

// Device time of `iters` runs after `warmup`, each timed with CUDA events on
// the plan's stream (host-to-device input copy, the steps or the graph, and
// the output copy back; milliseconds per run, in order). Run i reads
// feed_sets[i % size], copied into the pinned input buffers before its timing
// starts, so successive runs see fresh inputs.
absl::StatusOr<std::vector<double>> TimeRuns(Plan& plan,
                                             const std::vector<std::map<std::string, RuntimeValue>>& feed_sets,
                                             int warmup, int iters);

class CudaExecutor {
 public:
  explicit CudaExecutor(const Model& model, CudaOptions options = {});
  ~CudaExecutor();
  absl::StatusOr<std::vector<RuntimeValue>> Run(const std::map<std::string, RuntimeValue>& feeds);
  absl::StatusOr<Plan*> PlanFor(const std::map<std::string, RuntimeValue>& feeds);

 private:
  exec::PlanCache<Plan> plans_;
};

}  // namespace aic::cuda

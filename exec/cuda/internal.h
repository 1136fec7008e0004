// Internals shared by the CUDA executor's files: slots (where a value's bytes
// live: the arena or the weights blob), steps (one device call each, with a
// host emulation of the same descriptor), and the Plan owning them.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "exec/cuda/kernels.h"
#include "exec/cuda/plan.h"
#include "graph/model.h"
#include "graph/tensor.h"

namespace aic::cuda {

struct Slot {
  enum class Storage : uint8_t { kArena, kWeight };
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  Storage storage = Storage::kArena;
  int buffer = -1;    // kArena: index into Plan::buffers (views share their source's buffer)
  size_t offset = 0;  // kWeight: byte offset into Plan::weights
  size_t bytes() const { return ByteSizeOf(dtype, NumElements(dims)); }
};

struct ArenaBuffer {
  size_t size = 0;
  int first = -1;  // first and last step touching it (feeds: -1 → 0, outputs: one past the end)
  int last = -1;
  size_t offset = 0;
};

// Base addresses of one execution: device memory, or host memory when emulated.
struct Memory {
  uint8_t* arena = nullptr;
  const uint8_t* weights = nullptr;
};

// What a step launches with on the device (handles as void* to keep CUDA headers out).
struct DeviceContext {
  Stream stream = nullptr;
  void* cublaslt = nullptr;  // cublasLtHandle_t
  void* cudnn = nullptr;     // cudnnHandle_t (null without cuDNN)
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  Memory mem;
  bool allow_tf32 = false;
};

class Plan;

class Step {
 public:
  virtual ~Step() = default;
  // Device-side descriptors once (cuBLASLt layouts and algorithm, cuDNN descriptors).
  virtual absl::Status Prepare(const Plan& plan, DeviceContext& ctx) { return absl::OkStatus(); }
  virtual absl::Status Launch(const Plan& plan, DeviceContext& ctx) = 0;
  virtual absl::Status Emulate(const Plan& plan, const Memory& mem) = 0;
  // Workspace this step needs (after Prepare).
  virtual size_t WorkspaceBytes() const { return 0; }

  std::vector<int> reads;
  std::vector<int> writes;
  std::string kind;        // "gemm", "eltwise", "softmax", "fallback", ...
  std::string label;       // the nodes it computes
  bool host_sync = false;  // leaves the stream for the host: the plan cannot be one CUDA Graph
};

struct DeviceState;  // device.cc

class Plan {
 public:
  Plan();
  ~Plan();
  void* Ptr(int slot, const Memory& mem) const;
  template <typename T>
  T* Ptr(int slot, const Memory& mem) const {
    return static_cast<T*>(Ptr(slot, mem));
  }

  CudaOptions options;
  std::unique_ptr<Model> model;  // shape-specialized clone (fallback nodes point into it)
  std::deque<Tensor> constants;  // folded values, host side
  std::vector<uint8_t> weights;  // every constant a step reads, 64-byte aligned offsets
  std::vector<Slot> slots;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<ArenaBuffer> buffers;
  size_t arena_bytes = 0;
  std::vector<std::pair<std::string, int>> feeds;  // graph input -> slot (arena)
  std::vector<std::string> output_names;
  std::vector<int> outputs;  // slot per graph output
  PlanStats stats;
  std::unique_ptr<DeviceState> device;  // set by the device stage
};

// Lowering (lowering.cc) and the arena plan (memory.cc).
absl::Status LowerModel(Plan& plan);
absl::Status PlanArena(Plan& plan);
// Why the plan cannot be captured as one CUDA Graph, or "" (memory.cc).
std::string GraphBlocker(const Plan& plan);
// Feeds match the plan's inputs (plan.cc).
absl::Status CheckFeeds(const Plan& plan, const std::map<std::string, RuntimeValue>& feeds);
// The device stage (device.cc).
absl::Status Instantiate(Plan& plan);

}  // namespace aic::cuda

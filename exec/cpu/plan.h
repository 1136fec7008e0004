// The fast CPU executor. Compile() turns a model plus concrete input shapes
// into a Plan: shapes inferred with concrete dims, constants folded, one
// kernel chosen per node (oneDNN primitives with fused post-ops where they
// apply, the reference kernel otherwise), weights packed once into the
// layout the primitive prefers, activations kept in oneDNN's blocked layouts
// between oneDNN steps, and one arena holding every intermediate at offsets
// chosen by the static memory planner. Run() walks a flat array of steps over
// precomputed slots. CpuExecutor caches one Plan per input-shape signature.
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

namespace aic::cpu {

struct CpuOptions {
  int threads = 0;             // the most the plan uses (0: the core count); small models take 1
  bool fuse_post_ops = true;   // fold activations/scales/BN/residual adds into primitives
  bool blocked_layouts = true; // let oneDNN pick activation layouts (format_tag::any)
  bool compute_half_in_float = true;  // float16/bfloat16 values computed in f32 (widen_half.h)
  // Convolutions and matmuls whose input and weights the model declares
  // bfloat16 read them as bfloat16 (AVX512-BF16 dot products, f32
  // accumulation and output) where oneDNN has a fast bf16 kernel; else f32.
  bool bf16_kernels = true;
};

struct PlanStats {
  int steps = 0;
  int dnnl_steps = 0;
  int native_steps = 0;        // our own kernels (exec/cpu/kernels)
  int reorder_steps = 0;
  int fallback_steps = 0;     // reference kernels
  int view_steps = 0;
  int fused_nodes = 0;        // nodes folded into another step's post-ops or weights
  int folded_nodes = 0;       // nodes computed at compile time
  size_t arena_bytes = 0;
  size_t weight_bytes = 0;    // packed constants owned by the plan
  // Plain weight bytes freed once packed (Lowerer::PackedConstSlot): the
  // model's copy of a weight only this plan reads.
  size_t released_weight_bytes = 0;
  size_t activation_bytes = 0;  // all f32 node outputs, as if none were reused
  int64_t macs = 0;             // multiply-accumulates of one run (ops with a known cost)
  int threads = 0;            // what the plan runs on (1 for tiny models)
  std::vector<std::string> fallback_ops;  // "OpType" for each fallback step
  // oneDNN primitives that run a reference or plain-loop implementation
  // (IsSlowImplementation): "pool simple_nchw:any" for each such step.
  int slow_impl_steps = 0;
  std::vector<std::string> slow_impls;
};

class Plan;

// input_shapes: graph input name -> dims (inputs not listed must have static shapes).
absl::StatusOr<std::unique_ptr<Plan>> Compile(const Model& model,
                                              const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                              const CpuOptions& options = {});

// Wall time per step, summed over the runs it was handed to (bench --profile).
struct RunProfile {
  std::vector<double> step_seconds;  // indexed like the plan's steps
  int runs = 0;
};

// Runs the plan; feeds must match the compiled shapes. Outputs are fresh
// tensors. With `profile`, each step is timed (nothing is timed without it).
absl::StatusOr<std::vector<RuntimeValue>> Run(Plan& plan, const std::map<std::string, RuntimeValue>& feeds,
                                              RunProfile* profile = nullptr);

// The profile as a table: time per (step kind, op type), sorted, with its
// share of the total, then the slowest single steps.
std::string FormatProfile(const Plan& plan, const RunProfile& profile, int top_steps = 10);

const PlanStats& StatsOf(const Plan& plan);
// Whether oneDNN's implementation `impl` of a `kind` step is one of its
// reference or naive loops ("ref:any", pooling's "simple_nchw:any"), which
// run one to three orders of magnitude below its JIT kernels.
bool IsSlowImplementation(const std::string& kind, const std::string& impl);
int ThreadsOf(const Plan& plan);
// One line per step ("conv  Conv 'x' [post: hardswish,linear]"), for --explain style dumps.
std::string DescribePlan(const Plan& plan);

// Compiles on first use of each input-shape signature and keeps the plans.
class CpuExecutor {
 public:
  CpuExecutor(const Model& model, CpuOptions options = {});
  ~CpuExecutor();
  absl::StatusOr<std::vector<RuntimeValue>> Run(const std::map<std::string, RuntimeValue>& feeds);
  // The plan for the signature of `feeds` (compiling it if needed).
  absl::StatusOr<Plan*> PlanFor(const std::map<std::string, RuntimeValue>& feeds);

 private:
  exec::PlanCache<Plan> plans_;
};

// Sets the thread count of oneDNN's OpenMP runtime (0: core count); returns it.
int SetCpuThreads(int threads);

// Re-executes the process with a bounded OpenMP spin (OMP_WAIT_POLICY=PASSIVE,
// GOMP_SPINCOUNT=3000000, ~30 ms) unless the environment sets either (see
// threading.cc); call first thing in a command that runs plans.
void ConfigureOpenMpWait();

}  // namespace aic::cpu

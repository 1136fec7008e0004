// `--device cuda` for `run` and `bench`, kept apart from their files: in a
// build without the CUDA backend these return "not available in this build".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/inputs.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::cli {

// The CUDA backend lives in a companion executable, aic-onnx-cuda, built
// beside aic-onnx: linking cuBLASLt and cuDNN costs every process ~150 MB
// of resident memory at start-up, which CPU-only commands should not pay.
// In aic-onnx, this replaces the process with the companion on the same
// arguments (if it was built); in the companion, and when it is missing, it
// returns and the caller goes on (to "not available in this build").
void HandOffToCudaCompanion();

struct CudaBenchOptions {
  int64_t iters = 50;
  int64_t warmup = 5;
  bool json = false;
  bool show_plan = false;
  int input_sets = 8;  // distinct random inputs cycled through the runs
};

// `bench --device cuda`: times runs with CUDA events (inputs copied in and
// outputs out included, like a caller would see), prints like the CPU bench;
// returns the exit code. `model` is the graph a "cuda" session runs (after
// the rewriter); `run --device cuda` goes through the session itself.
int BenchOnCuda(const std::string& path, const Model& model, const InputOptions& inputs,
                const CudaBenchOptions& options);

}  // namespace aic::cli

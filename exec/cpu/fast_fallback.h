// Kernels for steps the backend cannot lower at compile time (shapes known
// only at run time: after NonZero, a data-dependent TopK; or an op never
// lowered), where one is much faster than the reference kernel on the same
// inputs: the f32 GEMM family (dynamic_gemm.h), RoiAlign (kernels/
// roi_align.h), and the backend's own Expand, ScatterElements and fill
// kernels called on this run's shapes. A detector's box stage is all of
// these (torchvision's Faster R-CNN: 2.7 s a run on reference kernels, ORT
// 0.1 s). A fallback step of such an op calls it each run and runs the
// reference kernel only where it declines (another dtype, a shape or index it
// does not take: the reference then reports what is wrong).
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/runtime_value.h"
#include "graph/tensor.h"

namespace aic::cpu {

using FastFallbackFn = absl::StatusOr<std::optional<Tensor>> (*)(const Node& node, int64_t opset,
                                                                 const std::vector<const RuntimeValue*>& inputs);

struct FastFallback {
  const char* kind;  // the step's kind in plans and profiles
  FastFallbackFn run;
};

// Null where `node`'s op has no such kernel.
const FastFallback* FindFastFallback(const Node& node);

}  // namespace aic::cpu

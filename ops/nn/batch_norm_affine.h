// Inference BatchNormalization as a per-channel affine map,
// y = x·scale + shift with scale = γ/√(var+ε) and shift = β − mean·scale,
// computed in double. The one place that decodes it: the Conv+BN and
// Gemm+BN rules fold it into weights, the CPU backend makes it a post-op, the
// CUDA backend an elementwise program.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/tensor.h"

namespace aic {

struct ChannelAffine {
  std::vector<double> scale;
  std::vector<double> shift;
  // Both as float32 vectors [C], for kernels that take them as operands.
  Tensor ScaleF32() const;
  Tensor ShiftF32() const;
};

// nullopt unless `bn` is in inference mode (training_mode 0, no running
// statistics requested as outputs) and γ, β, mean and var are known float
// tensors of one length each (`channels` of them when channels >= 0).
std::optional<ChannelAffine> BatchNormAsAffine(const Node& bn, const Tensor* gamma, const Tensor* beta,
                                               const Tensor* mean, const Tensor* var, int64_t channels = -1);

}  // namespace aic

// Shared by the normalization family's files: the per-group moments core
// (mean and 1/sqrt(var + eps) over a set of axes), the common traits of
// normalizers, and the registration entry points RegisterNormalizationOps
// calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_context.h"
#include "ops/registry.h"
#include "ops/traits.h"

namespace aic {

struct Moments {
  std::vector<int64_t> reduced_dims;  // input dims with reduced axes set to 1
  std::vector<double> mean;           // one per group (reduced_dims elements)
  std::vector<double> var;            // population variance
};

// Mean and variance of x over the axes where reduce[k] is true.
Moments ComputeMoments(const std::vector<double>& x, const std::vector<int64_t>& dims,
                       const std::vector<bool>& reduce);

// For element i of a tensor of `dims`, the index of its group in `reduced_dims`.
std::vector<int64_t> GroupIndex(const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& reduced_dims);

// Traits of a normalizer that removes each group's mean and scale: nonlinear,
// irreversible (x and a·x + c give the same output), trainable when its
// scale input is a constant.
Traits NormalizerTraits(const OpContext& ctx, std::string name, std::string meaning,
                        std::string groups, size_t scale_input);

void RegisterMomentNormOps(OpRegistry& r);  // LayerNorm, InstanceNorm, GroupNorm, MVN
void RegisterLocalNormOps(OpRegistry& r);   // LRN, LpNormalization

}  // namespace aic

// Pieces shared by the Conv family's files (conv.cc, conv_transpose.cc):
// the direct-loop convolution core in double, shape inference for any
// Conv-shaped op (data input, weight input), and the "Conv" traits.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ops/nn/conv_geometry.h"
#include "ops/op_context.h"
#include "ops/registry.h"
#include "ops/traits.h"

namespace aic {

// y[n, m, o...] = b[m] + sum_{c in group(m), k...} x[n, c, o·s - p + k·d] · w[m, c', k...]
// x: [N, C, in...], w: [M, C/group, kernel...]; `w_` must be resolved for `in`.
// Returns y with dims [N, M, out...].
std::vector<double> ConvForward(const std::vector<double>& x, const std::vector<int64_t>& x_dims,
                                const std::vector<double>& w, const std::vector<int64_t>& w_dims,
                                const std::vector<double>* bias, int64_t group, Window& win,
                                std::vector<int64_t>* y_dims);

// Checks a Conv-like node's data/weight shapes at run time and builds its window.
absl::StatusOr<Window> ConvWindowFor(const Node& node, const std::vector<int64_t>& x_dims,
                                     const std::vector<int64_t>& w_dims, int64_t group);

// Output type of Conv/ConvInteger/QLinearConv: [N, M, out...].
absl::Status InferConvLike(OpContext& ctx, size_t x_i, size_t w_i, DType out_dtype);

// "Conv" traits: an affine layer by channel count when the weight is constant.
Traits ConvTraits(const OpContext& ctx, size_t w_i, size_t b_i, bool transpose);

// MACs of a convolution from static shapes (out elements × C/group × kernel
// volume; for ConvTranspose: input elements × M/group × kernel volume).
Cost ConvCost(const OpContext& ctx, size_t x_i, size_t w_i, size_t b_i, bool transpose,
              std::initializer_list<size_t> param_inputs);

void RegisterConvTransposeOp(OpRegistry& r);
void RegisterDeformConvOp(OpRegistry& r);  // deform_conv.cc

}  // namespace aic

// Small numeric helpers shared by the misc and rnn op families' reference
// kernels. These kernels are oracles, not fast paths: they read every input
// as double, compute in double, and convert once to the output dtype, so one
// body serves float, double, float16 and bfloat16 alike.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "graph/tensor.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"

namespace aic {

// Every element of a numeric tensor as double.
std::vector<double> ToDoubles(const Tensor& t);
// Every element of an integer tensor as int64.
std::vector<int64_t> ToInt64s(const Tensor& t);
// A tensor of `dtype` (any numeric type) holding `values`.
Tensor FromDoubles(const std::vector<double>& values, std::vector<int64_t> dims, DType dtype);

// OK when every `required` input is present, and every present `optional`
// one too, as a numeric (or bool) tensor: the readers above then never meet a
// missing, string or sequence input.
absl::Status RequireNumericInputs(const KernelContext& ctx, std::initializer_list<size_t> required,
                                  std::initializer_list<size_t> optional = {});

// True for float, double, float16 and bfloat16.
bool IsRealFloat(DType t);

// OK when input i is absent, untyped, or a real-float tensor; otherwise an
// InvalidArgument naming the node and `what`.
absl::Status ExpectFloatInput(const OpContext& ctx, size_t i, const char* what);

}  // namespace aic

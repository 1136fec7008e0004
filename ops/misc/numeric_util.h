// Small numeric helpers shared by the misc and rnn op families' reference
// kernels. These kernels are oracles, not fast paths: they read every input
// as double, compute in double, and convert once to the output dtype, so one
// body serves float, double, float16 and bfloat16 alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace aic {

// Every element of a numeric tensor as double.
std::vector<double> ToDoubles(const Tensor& t);
// Every element of an integer tensor as int64.
std::vector<int64_t> ToInt64s(const Tensor& t);
// A tensor of `dtype` (any numeric type) holding `values`.
Tensor FromDoubles(const std::vector<double>& values, std::vector<int64_t> dims, DType dtype);

// True for float, double, float16 and bfloat16.
bool IsRealFloat(DType t);

// Returns OK when input i of ctx is either absent/untyped or a tensor with a
// dtype that passes `ok`; else an error naming the input.
absl::Status ExpectFloatInput(const OpContext& ctx, size_t i, const char* what);

// "[2, 3, 4]" for static shapes and symbols alike.
std::string ShapeText(const Shape& s);

}  // namespace aic

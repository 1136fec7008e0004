// Shared by the MatMul and neural-network op families (MatMul, Gemm, Einsum,
// Conv, pooling, normalization): reading a tensor into a wide accumulator type
// (double for real types, int64 for integers, so the reference kernels are
// accurate oracles for every dtype with one body), writing results back to the
// requested dtype, quantization arithmetic, and the "Linear" trait shape that
// Gemm, MatMul and Conv with a constant weight share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "ops/op_context.h"
#include "ops/traits.h"

namespace aic {

// Every element of a numeric tensor (fp16/bf16 included) as double.
std::vector<double> TensorToDoubles(const Tensor& t);
// Every element of a numeric tensor as int64 (exact for integers).
std::vector<int64_t> TensorToInt64(const Tensor& t);
// A tensor of `dtype` holding `values` (C++ cast semantics; fp16/bf16 round to nearest even).
Tensor DoublesToTensor(const std::vector<double>& values, std::vector<int64_t> dims, DType dtype);
Tensor Int64ToTensor(const std::vector<int64_t>& values, std::vector<int64_t> dims, DType dtype);

// True for float, double, float16, bfloat16.
bool IsRealDType(DType t);
// int8/uint8 (the 8-bit quantized types).
bool IsQuant8DType(DType t);

// Quantizes a real value to int8/uint8 (or int32 when `dtype` is int32): round
// half to even, add the zero point, saturate.
int64_t QuantizeValue(double v, int64_t zero_point, DType dtype);

// Row-major multi-index iteration: advances `idx` within `dims`; false at the end.
bool NextMultiIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims);

// "Linear" traits of a layer with a constant weight mapping `in_features` to
// `out_features` (Gemm/MatMul with an initializer weight, Conv by channels):
// affine with a bias, linear without, trainable, representation effect from
// the feature counts ("10 → 20").
Traits LinearLayerTraits(std::string semantic_name, std::string meaning, int64_t in_features,
                         int64_t out_features, bool has_bias);

}  // namespace aic

// What flows along an edge at run time (lives in graph/ so that onnx_io can
// load test values and the CLI can write them without depending on ops/): a tensor, a sequence of tensors, or
// nothing (an empty optional). Most kernels only see tensors.
#pragma once

#include <vector>

#include "graph/tensor.h"

namespace aic {

struct RuntimeValue {
  enum class Kind : uint8_t { kNone, kTensor, kSequence };

  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  DType sequence_dtype = DType::kUndefined;  // element type, known even when empty

  RuntimeValue() = default;
  RuntimeValue(Tensor t) : kind(Kind::kTensor), tensor(std::move(t)) {}  // NOLINT
  static RuntimeValue Sequence(std::vector<Tensor> items, DType dtype) {
    RuntimeValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(items);
    v.sequence_dtype = dtype;
    return v;
  }
  static RuntimeValue None() { return RuntimeValue(); }

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone; }
};

}  // namespace aic

// What flows along an edge at run time (lives in graph/ so that onnx_io can
// load test values and the CLI can write them without depending on ops/): a tensor, a sequence of tensors, or
// nothing (an empty optional). Most kernels only see tensors.
//
// One map form exists, what ai.onnx.ml's ZipMap makes: a sequence of maps
// that share one key set, seq(map(K, V)), held as map_keys [C] (int64 or
// string) and map_values [N, C]; map n is {map_keys[c]: map_values[n, c]}.
#pragma once

#include <vector>

#include "graph/tensor.h"

namespace aic {

struct RuntimeValue {
  enum class Kind : uint8_t { kNone, kTensor, kSequence, kMapSequence };

  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  DType sequence_dtype = DType::kUndefined;  // element type, known even when empty
  Tensor map_keys;    // kMapSequence: [C]
  Tensor map_values;  // kMapSequence: [N, C]

  RuntimeValue() = default;
  RuntimeValue(Tensor t) : kind(Kind::kTensor), tensor(std::move(t)) {}  // NOLINT
  static RuntimeValue Sequence(std::vector<Tensor> items, DType dtype) {
    RuntimeValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(items);
    v.sequence_dtype = dtype;
    return v;
  }
  static RuntimeValue MapSequence(Tensor keys, Tensor values) {
    RuntimeValue v;
    v.kind = Kind::kMapSequence;
    v.map_keys = std::move(keys);
    v.map_values = std::move(values);
    return v;
  }
  static RuntimeValue None() { return RuntimeValue(); }

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_map_sequence() const { return kind == Kind::kMapSequence; }
  bool is_none() const { return kind == Kind::kNone; }
};

}  // namespace aic

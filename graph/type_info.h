// The static type of a graph value, as ONNX's TypeProto describes it: a tensor
// (dtype + Shape), a sparse tensor, or a sequence / optional / map of other
// types. Values with no type information have kind kNone.
#pragma once

#include <memory>
#include <string>

#include "graph/dtype.h"
#include "graph/shape.h"

namespace aic {

struct TypeInfo {
  enum class Kind : uint8_t { kNone, kTensor, kSparseTensor, kSequence, kOptional, kMap };

  Kind kind = Kind::kNone;
  DType dtype = DType::kUndefined;  // tensor / sparse element type; map key type
  Shape shape;                      // tensor / sparse shape (may be unknown rank)
  std::shared_ptr<const TypeInfo> element;  // sequence/optional element, map value
  std::string denotation;

  static TypeInfo Tensor(DType dtype, Shape shape) {
    TypeInfo t;
    t.kind = Kind::kTensor;
    t.dtype = dtype;
    t.shape = std::move(shape);
    return t;
  }
  static TypeInfo SequenceOf(TypeInfo element) {
    TypeInfo t;
    t.kind = Kind::kSequence;
    t.element = std::make_shared<const TypeInfo>(std::move(element));
    return t;
  }
  static TypeInfo OptionalOf(TypeInfo element) {
    TypeInfo t;
    t.kind = Kind::kOptional;
    t.element = std::make_shared<const TypeInfo>(std::move(element));
    return t;
  }

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool known() const { return kind != Kind::kNone; }
  bool operator==(const TypeInfo& other) const;
  std::string ToString() const;  // "float[1, 10]", "seq(float[?])", "?"
};

}  // namespace aic

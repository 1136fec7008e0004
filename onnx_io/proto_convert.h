// Internal to onnx_io: conversion between ONNX protobuf messages and our IR.
// This folder is the only one that includes ONNX protobuf headers.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/external_data.h"

namespace aic::onnx_io {

// TensorProto -> Tensor. `raw_data` bytes are moved, not copied (the proto is
// consumed). External data is resolved through `external` (may be null: then
// external tensors are an error).
absl::StatusOr<Tensor> TensorFromProto(onnx::TensorProto& proto, ExternalDataResolver* external);

// TypeProto <-> TypeInfo.
TypeInfo TypeFromProto(const onnx::TypeProto& proto);
void TypeToProto(const TypeInfo& type, onnx::TypeProto* proto);

// Whole model (the proto is consumed: initializer bytes move into the model).
absl::StatusOr<std::unique_ptr<Model>> ModelFromProto(onnx::ModelProto& proto,
                                                      ExternalDataResolver* external);

// How tensors are written.
struct TensorWriter {
  virtual ~TensorWriter() = default;
  // Fills `proto` with the tensor's data (inline or as an external reference).
  virtual absl::Status Write(const Tensor& t, onnx::TensorProto* proto) = 0;
};

// Inline raw_data for numbers, string_data for strings.
absl::Status TensorToProtoInline(const Tensor& t, onnx::TensorProto* proto);

absl::Status ModelToProto(const Model& model, TensorWriter& initializer_writer,
                          onnx::ModelProto* proto);

// Sequence/optional/tensor value files of the backend test suite.
absl::StatusOr<RuntimeValue> ValueFromSequenceProto(onnx::SequenceProto& proto);
absl::StatusOr<RuntimeValue> ValueFromOptionalProto(onnx::OptionalProto& proto);

}  // namespace aic::onnx_io

// Reads a serialized onnx.TypeProto (how a `type` attribute, e.g. Optional's,
// is kept in Attribute::opaque_protos) into a TypeInfo. ops/ may not include
// protobuf headers (only onnx_io does), and the few fields needed here are
// simple to decode from the wire format directly.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "graph/type_info.h"

namespace aic {

// Tensor, sequence and optional types (with dtype and shape); other kinds give
// TypeInfo kNone. Fails on malformed bytes.
absl::StatusOr<TypeInfo> DecodeTypeProto(std::string_view bytes);

}  // namespace aic

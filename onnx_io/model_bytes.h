// A model's serialized ModelProto, planned so that every top-level
// initializer's data is copied once, from the tensor's buffer to where the
// bytes end up (a Python bytes object, a file, a string). Going through a
// ModelProto copies each weight into the proto, then into a string, then into
// the destination: on PP-OCR rec (10 MB of weights) the binding's
// serialization took 3.6-8.4 ms of a 55-70 ms verified `aic_onnx.optimize`
// (the fresh pages the copies touch vary with the heap's state); the plan
// takes 1 ms, then one copy.
//
// The bytes are those of ModelProto::SerializeToString (fields in number
// order, each initializer's raw_data in its place), so readers see nothing
// new: tests compare the two byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/model.h"

namespace aic {

class ModelBytes {
 public:
  // Every tensor inline, as SerializeModel. ResourceExhausted past protobuf's
  // 2 GB limit (what a reader would refuse). The plan shares the tensors'
  // buffers: the model may change or go after it is made.
  static absl::StatusOr<ModelBytes> Of(const Model& model);

  uint64_t size() const { return size_; }

  // Writes all size() bytes at `dst`.
  void CopyTo(char* dst) const;

  // Hands the bytes over in order, in pieces (a file's writes); stops at the
  // first error the sink returns.
  absl::Status WriteTo(const std::function<absl::Status(const void* data, size_t size)>& sink) const;

 private:
  // Bytes this plan owns (proto metadata, framing), or a tensor's data.
  struct Piece {
    std::string owned;
    Tensor borrowed;
    const void* data() const { return borrowed.defined() ? borrowed.raw_data() : owned.data(); }
    size_t size() const { return borrowed.defined() ? borrowed.byte_size() : owned.size(); }
  };
  std::vector<Piece> pieces_;
  uint64_t size_ = 0;
};

}  // namespace aic

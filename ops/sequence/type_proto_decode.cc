#include "ops/sequence/type_proto_decode.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aic {

namespace {

// Field numbers from onnx.proto.
constexpr uint32_t kTypeTensor = 1, kTypeSequence = 4, kTypeOptional = 9;
constexpr uint32_t kTensorElemType = 1, kTensorShape = 2;
constexpr uint32_t kShapeDim = 1;
constexpr uint32_t kDimValue = 1, kDimParam = 2;
constexpr uint32_t kContainerElemType = 1;  // Sequence.elem_type, Optional.elem_type

// One field of a message: its number and either a varint or a byte payload.
struct Field {
  uint32_t number = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  bool Next(Field& f) {
    uint64_t key;
    if (!Varint(key)) return false;
    f.number = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0: return Varint(f.varint);
      case 1: return Skip(8);
      case 5: return Skip(4);
      case 2: {
        uint64_t len;
        if (!Varint(len) || len > data_.size() - pos_) return false;
        f.bytes = data_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        return true;
      }
      default: return false;
    }
  }

 private:
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Skip(size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

absl::Status Malformed() { return absl::InvalidArgumentError("malformed TypeProto"); }

absl::StatusOr<Dim> DecodeDim(std::string_view bytes) {
  Reader r(bytes);
  Dim d;
  Field f;
  while (!r.done()) {
    if (!r.Next(f)) return Malformed();
    if (f.number == kDimValue) d = Dim(static_cast<int64_t>(f.varint));
    if (f.number == kDimParam) d = Dim::Symbol(std::string(f.bytes));
  }
  return d;
}

absl::StatusOr<TypeInfo> DecodeTensor(std::string_view bytes) {
  Reader r(bytes);
  DType dtype = DType::kUndefined;
  Shape shape = Shape::UnknownRank();
  Field f;
  while (!r.done()) {
    if (!r.Next(f)) return Malformed();
    if (f.number == kTensorElemType) dtype = static_cast<DType>(f.varint);
    if (f.number == kTensorShape) {
      std::vector<Dim> dims;
      Reader sr(f.bytes);
      Field df;
      while (!sr.done()) {
        if (!sr.Next(df)) return Malformed();
        if (df.number != kShapeDim) continue;
        absl::StatusOr<Dim> d = DecodeDim(df.bytes);
        if (!d.ok()) return d.status();
        dims.push_back(*d);
      }
      shape = Shape(std::move(dims));
    }
  }
  return TypeInfo::Tensor(dtype, std::move(shape));
}

absl::StatusOr<TypeInfo> DecodeElement(std::string_view bytes) {
  Reader r(bytes);
  Field f;
  TypeInfo element;
  while (!r.done()) {
    if (!r.Next(f)) return Malformed();
    if (f.number == kContainerElemType) {
      absl::StatusOr<TypeInfo> t = DecodeTypeProto(f.bytes);
      if (!t.ok()) return t.status();
      element = *t;
    }
  }
  return element;
}

}  // namespace

absl::StatusOr<TypeInfo> DecodeTypeProto(std::string_view bytes) {
  Reader r(bytes);
  Field f;
  TypeInfo out;
  while (!r.done()) {
    if (!r.Next(f)) return Malformed();
    if (f.number == kTypeTensor) {
      absl::StatusOr<TypeInfo> t = DecodeTensor(f.bytes);
      if (!t.ok()) return t.status();
      out = *t;
    } else if (f.number == kTypeSequence || f.number == kTypeOptional) {
      absl::StatusOr<TypeInfo> e = DecodeElement(f.bytes);
      if (!e.ok()) return e.status();
      out = f.number == kTypeSequence ? TypeInfo::SequenceOf(*e) : TypeInfo::OptionalOf(*e);
    }
  }
  return out;
}

}  // namespace aic

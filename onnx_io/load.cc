#include "onnx_io/load.h"

#include <climits>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "onnx_io/proto_convert.h"
#include "support/mapped_file.h"

namespace aic {

namespace {

// Parses with the 2 GiB limit raised to what protobuf allows (INT_MAX).
template <typename Message>
bool ParseMessage(const void* data, size_t size, Message* message) {
  if (size > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data),
                                                static_cast<int>(size));
  stream.SetTotalBytesLimit(INT_MAX);
  stream.SetRecursionLimit(256);
  return message->ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

absl::Status WithFile(const std::string& path, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> LoadModelFromBytes(const void* data, size_t size,
                                                          const std::string& base_dir) {
  if (size == 0) return absl::InvalidArgumentError("empty file, not an ONNX model");
  onnx::ModelProto proto;
  if (!ParseMessage(data, size, &proto)) {
    return absl::InvalidArgumentError("not an ONNX model (protobuf parse failed: truncated or corrupt)");
  }
  if (!proto.has_graph()) {
    return absl::InvalidArgumentError("not an ONNX model (no graph)");
  }
  if (proto.ir_version() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an ONNX model (ir_version ", proto.ir_version(), ")"));
  }
  if (proto.ir_version() >= 3 && proto.opset_import_size() == 0) {
    return absl::InvalidArgumentError("model has no opset_import");
  }
  std::unique_ptr<onnx_io::ExternalDataResolver> resolver;
  if (!base_dir.empty()) resolver = std::make_unique<onnx_io::ExternalDataResolver>(base_dir);
  return onnx_io::ModelFromProto(proto, resolver.get());
}

absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  auto model = LoadModelFromBytes((*file)->data(), (*file)->size(), dir);
  if (!model.ok()) return WithFile(path, model.status());
  return model;
}

absl::StatusOr<Tensor> LoadTensorProtoFile(const std::string& path) {
  AIC_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::Open(path));
  onnx::TensorProto proto;
  if (!ParseMessage(file->data(), file->size(), &proto)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a TensorProto"));
  }
  auto t = onnx_io::TensorFromProto(proto, nullptr);
  if (!t.ok()) return WithFile(path, t.status());
  return t;
}

absl::StatusOr<RuntimeValue> LoadValueProtoFile(const std::string& path, const TypeInfo& type) {
  AIC_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::Open(path));
  absl::StatusOr<RuntimeValue> value;
  if (type.kind == TypeInfo::Kind::kSequence) {
    onnx::SequenceProto proto;
    if (!ParseMessage(file->data(), file->size(), &proto)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a SequenceProto"));
    }
    value = onnx_io::ValueFromSequenceProto(proto);
  } else if (type.kind == TypeInfo::Kind::kOptional) {
    onnx::OptionalProto proto;
    if (!ParseMessage(file->data(), file->size(), &proto)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not an OptionalProto"));
    }
    value = onnx_io::ValueFromOptionalProto(proto);
  } else {
    onnx::TensorProto proto;
    if (!ParseMessage(file->data(), file->size(), &proto)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a TensorProto"));
    }
    auto t = onnx_io::TensorFromProto(proto, nullptr);
    if (!t.ok()) return WithFile(path, t.status());
    value = RuntimeValue(*std::move(t));
  }
  if (!value.ok()) return WithFile(path, value.status());
  return value;
}

}  // namespace aic

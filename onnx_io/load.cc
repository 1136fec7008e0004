#include "onnx_io/load.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "onnx_io/proto_convert.h"
#include "support/mapped_file.h"

namespace aic {

namespace {

// Parses with the 2 GiB limit raised to what protobuf allows (INT_MAX).
template <typename Message>
bool ParseFromStream(google::protobuf::io::CodedInputStream& stream, Message* message) {
  stream.SetTotalBytesLimit(INT_MAX);
  stream.SetRecursionLimit(256);
  return message->ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

template <typename Message>
bool ParseMessage(const void* data, size_t size, Message* message) {
  if (size > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(size));
  return ParseFromStream(stream, message);
}

absl::StatusOr<std::unique_ptr<Model>> ModelFromParsed(onnx::ModelProto& proto, const std::string& base_dir);

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
  return ModelFromParsed(proto, base_dir);
}

namespace {

absl::StatusOr<std::unique_ptr<Model>> ModelFromParsed(onnx::ModelProto& proto, const std::string& base_dir) {
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

}  // namespace

// Streams the file through read() rather than mapping it: a mapping's pages
// count in the process's resident set while the parser copies the tensors
// out of them, so a mapped load peaks at twice the weights.
absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  onnx::ModelProto proto;
  bool parsed = false;
  if (regular && st.st_size > 0) {
    google::protobuf::io::FileInputStream file(fd, 1 << 20);
    file.SetCloseOnDelete(true);
    google::protobuf::io::CodedInputStream stream(&file);
    parsed = static_cast<uint64_t>(st.st_size) <= static_cast<uint64_t>(INT_MAX) && ParseFromStream(stream, &proto);
  } else {
    ::close(fd);
  }
  if (!regular) return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  if (st.st_size == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file, not an ONNX model"));
  if (!parsed) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not an ONNX model (protobuf parse failed: truncated or corrupt)"));
  }
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  auto model = ModelFromParsed(proto, parent.empty() ? std::string(".") : parent.string());
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

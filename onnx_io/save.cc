#include "onnx_io/save.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "onnx_io/model_bytes.h"
#include "onnx_io/proto_convert.h"

namespace aic {

namespace {

namespace fs = std::filesystem;

// protobuf refuses messages of 2 GiB or more; leave room for the graph itself.
constexpr uint64_t kInlineLimitBytes = (2ull << 30) - (64ull << 20);
constexpr uint64_t kExternalAlignment = 64;

// A file written under a temporary name and renamed into place on Commit().
class AtomicFile {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path) {
    std::string tmpl = path + ".tmp-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = ::mkstemp(buf.data());
    if (fd < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot create a file there: ", std::strerror(errno)));
    }
    ::fchmod(fd, 0644);
    return std::unique_ptr<AtomicFile>(new AtomicFile(path, buf.data(), fd));
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  absl::Status Append(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_, p, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        return absl::DataLossError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
      }
      p += n;
      size -= static_cast<size_t>(n);
      written_ += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }
  uint64_t written() const { return written_; }
  absl::Status Commit() {
    if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
      fd_ = -1;
      return absl::DataLossError(absl::StrCat(path_, ": cannot flush: ", std::strerror(errno)));
    }
    fd_ = -1;
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
      return absl::DataLossError(absl::StrCat(path_, ": cannot rename into place: ",
                                              std::strerror(errno)));
    }
    committed_ = true;
    return absl::OkStatus();
  }

 private:
  AtomicFile(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  std::string path_, tmp_;
  int fd_;
  bool committed_ = false;
  uint64_t written_ = 0;
};

// Appends large tensors to one data file next to the model.
class ExternalWriter : public onnx_io::TensorWriter {
 public:
  ExternalWriter(AtomicFile& data, std::string location, size_t min_bytes)
      : data_(data), location_(std::move(location)), min_bytes_(min_bytes) {}

  absl::Status Write(const Tensor& t, onnx::TensorProto* proto) override {
    if (t.dtype() == DType::kString || t.byte_size() < min_bytes_) {
      return onnx_io::TensorToProtoInline(t, proto);
    }
    static const char kZeros[kExternalAlignment] = {};
    uint64_t pad = (kExternalAlignment - data_.written() % kExternalAlignment) % kExternalAlignment;
    AIC_RETURN_IF_ERROR(data_.Append(kZeros, pad));
    uint64_t offset = data_.written();
    AIC_RETURN_IF_ERROR(data_.Append(t.raw_data(), t.byte_size()));
    proto->set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) proto->add_dims(d);
    proto->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* kv = proto->add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    };
    add("location", location_);
    add("offset", std::to_string(offset));
    add("length", std::to_string(t.byte_size()));
    return absl::OkStatus();
  }

 private:
  AtomicFile& data_;
  std::string location_;
  size_t min_bytes_;
};

uint64_t InitializerBytes(const Graph& g) {
  uint64_t total = 0;
  for (const Value* v : g.initializers()) total += v->initializer()->byte_size();
  for (const auto& n : g.nodes()) {
    for (const Attribute& a : n->attributes) {
      if (a.type == AttrType::kTensor) total += a.t.byte_size();
    }
    for (Graph* sub : n->Subgraphs()) total += InitializerBytes(*sub);
  }
  return total;
}

absl::Status WriteProto(const onnx::ModelProto& proto, const std::string& path) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": model too large to serialize inline (use --external-data)"));
  }
  AIC_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path));
  AIC_RETURN_IF_ERROR(file->Append(bytes.data(), bytes.size()));
  return file->Commit();
}

}  // namespace

absl::Status SaveTensorProto(const Tensor& t, const std::string& name, const std::string& path) {
  onnx::TensorProto proto;
  AIC_RETURN_IF_ERROR(onnx_io::TensorToProtoInline(t, &proto));
  proto.set_name(name);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": tensor too large for a TensorProto file"));
  }
  AIC_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path));
  AIC_RETURN_IF_ERROR(file->Append(bytes.data(), bytes.size()));
  return file->Commit();
}

absl::StatusOr<std::string> SerializeModel(const Model& model) {
  AIC_ASSIGN_OR_RETURN(ModelBytes plan, ModelBytes::Of(model));
  std::string bytes(plan.size(), '\0');
  plan.CopyTo(bytes.data());
  return bytes;
}

absl::Status SaveModel(const Model& model, const std::string& path, const SaveOptions& options) {
  bool external = options.external_data == SaveOptions::ExternalData::kAlways ||
                  (options.external_data == SaveOptions::ExternalData::kAuto &&
                   InitializerBytes(*model.graph) > kInlineLimitBytes);
  if (!external) {
    // Each weight goes from its buffer to the file once (onnx_io/model_bytes.h).
    absl::StatusOr<ModelBytes> plan = ModelBytes::Of(model);
    if (absl::IsResourceExhausted(plan.status())) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": model too large to serialize inline (use --external-data)"));
    }
    AIC_RETURN_IF_ERROR(plan.status());
    AIC_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path));
    AIC_RETURN_IF_ERROR(plan->WriteTo([&file](const void* data, size_t size) { return file->Append(data, size); }));
    return file->Commit();
  }
  onnx::ModelProto proto;
  fs::path model_path(path);
  std::string location = options.external_file.empty()
                             ? model_path.filename().string() + ".data"
                             : options.external_file;
  fs::path data_path = model_path.parent_path() / location;
  AIC_ASSIGN_OR_RETURN(auto data, AtomicFile::Create(data_path.string()));
  ExternalWriter writer(*data, location, options.min_external_bytes);
  AIC_RETURN_IF_ERROR(onnx_io::ModelToProto(model, writer, &proto));
  AIC_RETURN_IF_ERROR(data->Commit());
  return WriteProto(proto, path);
}

}  // namespace aic

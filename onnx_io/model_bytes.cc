#include "onnx_io/model_bytes.h"

#include <climits>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "onnx_io/proto_convert.h"
#include "support/status.h"

namespace aic {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Field numbers of the messages the weights sit in (onnx.proto).
constexpr int kModelGraph = 7;
constexpr int kGraphInitializer = 5;
constexpr int kTensorRawData = 9;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void AppendVarint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}

// The key of a length-delimited field (wire type 2).
uint64_t LengthKey(int field) { return (static_cast<uint64_t>(field) << 3) | 2; }

// Moves the fields of `m` numbered above `n` into a new message of its type:
// `m` then serializes as the fields before field n (n itself left out by the
// caller), the result as those after it. Moving is a swap: nothing is copied.
std::unique_ptr<Message> TakeFieldsAbove(Message& m, int n) {
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> set, above;
  r->ListFields(m, &set);
  for (const FieldDescriptor* f : set) {
    if (f->number() > n) above.push_back(f);
  }
  std::unique_ptr<Message> hi(m.New());
  r->SwapFields(&m, hi.get(), above);
  return hi;
}

// Top-level initializers written as metadata (type and dims); their data is
// written later from the tensor itself. Strings are written whole.
class MetadataWriter : public onnx_io::TensorWriter {
 public:
  absl::Status Write(const Tensor& t, onnx::TensorProto* proto) override {
    if (t.dtype() == DType::kString) {
      deferred_.emplace_back();
      return onnx_io::TensorToProtoInline(t, proto);
    }
    proto->set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) proto->add_dims(d);
    deferred_.push_back(t);
    return absl::OkStatus();
  }
  // One per initializer, in the graph's order: undefined where written whole.
  const std::vector<Tensor>& deferred() const { return deferred_; }

 private:
  std::vector<Tensor> deferred_;
};

}  // namespace

absl::StatusOr<ModelBytes> ModelBytes::Of(const Model& model) {
  onnx::ModelProto proto;
  MetadataWriter writer;
  AIC_RETURN_IF_ERROR(onnx_io::ModelToProto(model, writer, &proto));
  std::unique_ptr<onnx::GraphProto> graph(proto.release_graph());
  if (graph == nullptr) return absl::InternalError("model without a graph");
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(graph->mutable_initializer());
  if (static_cast<size_t>(initializers.size()) != writer.deferred().size()) {
    return absl::InternalError("initializers and their tensors do not match");
  }
  std::unique_ptr<Message> model_after = TakeFieldsAbove(proto, kModelGraph);
  std::unique_ptr<Message> graph_after = TakeFieldsAbove(*graph, kGraphInitializer);

  ModelBytes out;
  auto own = [&out](std::string bytes) {
    if (bytes.empty()) return;
    if (!out.pieces_.empty() && !out.pieces_.back().borrowed.defined()) {
      out.pieces_.back().owned += bytes;
    } else {
      out.pieces_.push_back(Piece{std::move(bytes), Tensor()});
    }
  };
  // Each initializer: its bytes before raw_data, its data, its bytes after.
  struct Framed {
    std::string before, after;
    uint64_t size = 0;  // of the TensorProto
  };
  std::vector<Framed> framed(writer.deferred().size());
  uint64_t graph_size = graph->ByteSizeLong() + graph_after->ByteSizeLong();
  for (size_t i = 0; i < framed.size(); ++i) {
    onnx::TensorProto& tp = initializers[static_cast<int>(i)];
    const Tensor& data = writer.deferred()[i];
    Framed& f = framed[i];
    if (data.defined()) {
      std::unique_ptr<Message> after = TakeFieldsAbove(tp, kTensorRawData);
      f.before = tp.SerializeAsString();
      AppendVarint(f.before, LengthKey(kTensorRawData));
      AppendVarint(f.before, data.byte_size());
      f.after = after->SerializeAsString();
      f.size = f.before.size() + data.byte_size() + f.after.size();
    } else {
      f.before = tp.SerializeAsString();
      f.size = f.before.size();
    }
    graph_size += VarintSize(LengthKey(kGraphInitializer)) + VarintSize(f.size) + f.size;
  }

  std::string head = proto.SerializeAsString();
  AppendVarint(head, LengthKey(kModelGraph));
  AppendVarint(head, graph_size);
  own(std::move(head));
  own(graph->SerializeAsString());
  for (size_t i = 0; i < framed.size(); ++i) {
    std::string key;
    AppendVarint(key, LengthKey(kGraphInitializer));
    AppendVarint(key, framed[i].size);
    own(std::move(key));
    own(std::move(framed[i].before));
    const Tensor& data = writer.deferred()[i];
    if (data.defined() && data.byte_size() > 0) out.pieces_.push_back(Piece{std::string(), data});
    own(std::move(framed[i].after));
  }
  own(graph_after->SerializeAsString());
  own(model_after->SerializeAsString());
  for (const Piece& p : out.pieces_) out.size_ += p.size();
  // What protobuf itself refuses to write or read.
  if (out.size_ > static_cast<uint64_t>(INT_MAX)) {
    return absl::ResourceExhaustedError("model too large to serialize inline");
  }
  return out;
}

void ModelBytes::CopyTo(char* dst) const {
  for (const Piece& p : pieces_) {
    if (p.size() == 0) continue;
    std::memcpy(dst, p.data(), p.size());
    dst += p.size();
  }
}

absl::Status ModelBytes::WriteTo(const std::function<absl::Status(const void* data, size_t size)>& sink) const {
  for (const Piece& p : pieces_) {
    if (p.size() > 0) AIC_RETURN_IF_ERROR(sink(p.data(), p.size()));
  }
  return absl::OkStatus();
}

}  // namespace aic

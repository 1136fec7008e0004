#include "onnx_io/onnx_shape_fallback.h"

#include "absl/container/flat_hash_map.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx_io/proto_convert.h"

namespace aic {

namespace {

// Only small initializers travel with data (libonnx's data propagation reads
// them, e.g. Reshape targets); large ones become typed graph inputs, so the
// weights are never copied for inference.
constexpr int64_t kMaxInlineElements = 4096;

class TypesOnlyWriter : public onnx_io::TensorWriter {
 public:
  absl::Status Write(const Tensor& t, onnx::TensorProto* proto) override {
    if (t.num_elements() <= kMaxInlineElements) return onnx_io::TensorToProtoInline(t, proto);
    proto->set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) proto->add_dims(d);
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<int> FillTypesFromOnnxInference(Model& model) {
  onnx::ModelProto proto;
  TypesOnlyWriter writer;
  AIC_RETURN_IF_ERROR(onnx_io::ModelToProto(model, writer, &proto));
  auto* g = proto.mutable_graph();
  // Move the data-less initializers to typed inputs.
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (auto& init : *g->mutable_initializer()) {
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    if (n <= kMaxInlineElements) {  // written with its data
      *kept.Add() = init;
      continue;
    }
    auto* in = g->add_input();
    in->set_name(init.name());
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(init.data_type());
    for (int64_t d : init.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  g->mutable_initializer()->Swap(&kept);
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0,
                                        /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(std::string("onnx shape inference: ") + e.what());
  }
  absl::flat_hash_map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& vi : g->value_info()) inferred[vi.name()] = &vi.type();
  for (const auto& vi : g->output()) inferred.emplace(vi.name(), &vi.type());
  int filled = 0;
  for (const auto& v : model.graph->values()) {
    if (v->type().known()) continue;
    auto it = inferred.find(v->name());
    if (it == inferred.end()) continue;
    TypeInfo t = onnx_io::TypeFromProto(*it->second);
    if (!t.known()) continue;
    v->set_type(std::move(t));
    ++filled;
  }
  return filled;
}

}  // namespace aic

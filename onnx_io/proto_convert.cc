#include "onnx_io/proto_convert.h"

#include <cstring>
#include <limits>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace aic::onnx_io {

namespace {

using onnx::TensorProto;

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Element count of dims, refusing negatives and overflow (garbage files).
absl::StatusOr<int64_t> CheckedCount(const std::vector<int64_t>& dims, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return Invalid(absl::StrCat("tensor '", name, "' has a negative dim ", d));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 16 / d) {
      return Invalid(absl::StrCat("tensor '", name, "' is too large"));
    }
    n *= d;
  }
  return n;
}

template <typename Src, typename Dst>
absl::Status CopyTyped(const google::protobuf::RepeatedField<Src>& src, int64_t count, Tensor& t,
                       int per_element, const std::string& name) {
  if (src.size() != count * per_element) {
    return Invalid(absl::StrCat("initializer '", name, "' has ", src.size() / per_element,
                                " values but its shape ", DimsToString(t.dims()), " needs ", count));
  }
  Dst* out = t.mutable_data<Dst>();
  for (int i = 0; i < src.size(); ++i) out[i] = static_cast<Dst>(src.Get(i));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(TensorProto& proto, ExternalDataResolver* external) {
  const std::string name = proto.name();
  if (!IsKnownDType(proto.data_type())) {
    return Invalid(absl::StrCat("tensor '", name, "' has unknown data type ", proto.data_type()));
  }
  DType dtype = static_cast<DType>(proto.data_type());
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  AIC_ASSIGN_OR_RETURN(int64_t count, CheckedCount(dims, name));
  size_t expected_bytes = ByteSizeOf(dtype, count);

  if (proto.data_location() == TensorProto::EXTERNAL) {
    if (external == nullptr) {
      return Invalid(absl::StrCat("tensor '", name, "' has external data, not allowed here"));
    }
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : proto.external_data()) {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset" || kv.key() == "length") {
        char* end = nullptr;
        long long v = std::strtoll(kv.value().c_str(), &end, 10);
        if (end == kv.value().c_str() || *end != '\0' || v < 0) {
          return Invalid(absl::StrCat("tensor '", name, "' has a bad external ", kv.key(), " '",
                                      kv.value(), "'"));
        }
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    if (dtype == DType::kString) {
      return Invalid(absl::StrCat("tensor '", name, "': string tensors cannot be external"));
    }
    auto buffer = external->Resolve(location, offset, length);
    if (!buffer.ok()) {
      return Invalid(absl::StrCat("tensor '", name, "': ", buffer.status().message()));
    }
    if ((*buffer)->size() != expected_bytes) {
      return Invalid(absl::StrCat("tensor '", name, "' external data has ", (*buffer)->size(),
                                  " bytes but its shape ", DimsToString(dims), " of ",
                                  DTypeName(dtype), " needs ", expected_bytes));
    }
    return Tensor(dtype, std::move(dims), *buffer);
  }

  if (dtype == DType::kString) {
    if (proto.string_data_size() != count) {
      return Invalid(absl::StrCat("initializer '", name, "' has ", proto.string_data_size(),
                                  " strings but its shape needs ", count));
    }
    std::vector<std::string> strings(proto.string_data().begin(), proto.string_data().end());
    return Tensor::FromStrings(std::move(strings), std::move(dims));
  }

  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != expected_bytes) {
      return Invalid(absl::StrCat("initializer '", name, "' has ", proto.raw_data().size(),
                                  " bytes of data but its shape ", DimsToString(dims), " of ",
                                  DTypeName(dtype), " needs ", expected_bytes));
    }
    // Move the parsed bytes into our buffer: no second copy.
    std::unique_ptr<std::string> raw(proto.release_raw_data());
    return Tensor(dtype, std::move(dims), Buffer::FromString(std::move(*raw)));
  }

  // How many values the typed field holds, checked before allocating: a
  // corrupt file may claim huge dims with a handful of values.
  int64_t present = 0, per_element = 1;
  switch (dtype) {
    case DType::kFloat: present = proto.float_data_size(); break;
    case DType::kComplex64: present = proto.float_data_size(); per_element = 2; break;
    case DType::kDouble: present = proto.double_data_size(); break;
    case DType::kComplex128: present = proto.double_data_size(); per_element = 2; break;
    case DType::kInt64: present = proto.int64_data_size(); break;
    case DType::kUint32: case DType::kUint64: present = proto.uint64_data_size(); break;
    case DType::kUint4: case DType::kInt4: case DType::kFloat4E2M1:
    case DType::kUint2: case DType::kInt2:
      present = proto.int32_data_size();
      per_element = 0;  // packed: checked against the byte count below
      break;
    default: present = proto.int32_data_size(); break;
  }
  if (per_element > 0 ? present != count * per_element
                      : static_cast<size_t>(present) != ByteSizeOf(dtype, count)) {
    return Invalid(absl::StrCat("initializer '", name, "' has ", present,
                                " values but its shape ", DimsToString(dims), " needs ",
                                per_element > 0 ? count * per_element
                                                : static_cast<int64_t>(ByteSizeOf(dtype, count))));
  }
  Tensor t(dtype, dims);
  switch (dtype) {
    case DType::kFloat:
      AIC_RETURN_IF_ERROR((CopyTyped<float, float>(proto.float_data(), count, t, 1, name)));
      break;
    case DType::kComplex64:
      AIC_RETURN_IF_ERROR((CopyTyped<float, float>(proto.float_data(), count, t, 2, name)));
      break;
    case DType::kDouble:
      AIC_RETURN_IF_ERROR((CopyTyped<double, double>(proto.double_data(), count, t, 1, name)));
      break;
    case DType::kComplex128:
      AIC_RETURN_IF_ERROR((CopyTyped<double, double>(proto.double_data(), count, t, 2, name)));
      break;
    case DType::kInt64:
      AIC_RETURN_IF_ERROR((CopyTyped<int64_t, int64_t>(proto.int64_data(), count, t, 1, name)));
      break;
    case DType::kUint32:
      AIC_RETURN_IF_ERROR((CopyTyped<uint64_t, uint32_t>(proto.uint64_data(), count, t, 1, name)));
      break;
    case DType::kUint64:
      AIC_RETURN_IF_ERROR((CopyTyped<uint64_t, uint64_t>(proto.uint64_data(), count, t, 1, name)));
      break;
    case DType::kInt32:
      AIC_RETURN_IF_ERROR((CopyTyped<int32_t, int32_t>(proto.int32_data(), count, t, 1, name)));
      break;
    case DType::kInt16:
      AIC_RETURN_IF_ERROR((CopyTyped<int32_t, int16_t>(proto.int32_data(), count, t, 1, name)));
      break;
    case DType::kInt8:
      AIC_RETURN_IF_ERROR((CopyTyped<int32_t, int8_t>(proto.int32_data(), count, t, 1, name)));
      break;
    case DType::kUint16:
    case DType::kFloat16:
    case DType::kBFloat16:  // stored as their bit patterns in int32_data
      AIC_RETURN_IF_ERROR((CopyTyped<int32_t, uint16_t>(proto.int32_data(), count, t, 1, name)));
      break;
    case DType::kUint8:
    case DType::kBool:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      AIC_RETURN_IF_ERROR((CopyTyped<int32_t, uint8_t>(proto.int32_data(), count, t, 1, name)));
      break;
    case DType::kUint4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kUint2:
    case DType::kInt2: {
      // One packed byte per int32 entry (two 4-bit or four 2-bit values, low
      // bits first), as onnx.helper.make_tensor writes them.
      size_t bytes = ByteSizeOf(dtype, count);
      if (static_cast<size_t>(proto.int32_data_size()) != bytes) {
        return Invalid(absl::StrCat("initializer '", name, "' has the wrong amount of data"));
      }
      uint8_t* out = t.mutable_data<uint8_t>();
      for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(proto.int32_data(static_cast<int>(i)));
      break;
    }
    default:
      return Invalid(absl::StrCat("tensor '", name, "' has unsupported data type ", DTypeName(dtype)));
  }
  return t;
}

absl::Status TensorToProtoInline(const Tensor& t, TensorProto* proto) {
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  proto->clear_dims();
  for (int64_t d : t.dims()) proto->add_dims(d);
  if (t.dtype() == DType::kString) {
    for (const std::string& s : t.strings()) proto->add_string_data(s);
    return absl::OkStatus();
  }
  proto->set_raw_data(t.raw_data(), t.byte_size());
  return absl::OkStatus();
}

// ---- Types ------------------------------------------------------------------

TypeInfo TypeFromProto(const onnx::TypeProto& proto) {
  TypeInfo t;
  t.denotation = proto.denotation();
  auto shape_of = [](bool has_shape, const onnx::TensorShapeProto& sp) {
    if (!has_shape) return Shape::UnknownRank();
    std::vector<Dim> dims;
    for (const auto& d : sp.dim()) {
      if (d.has_dim_value()) {
        dims.emplace_back(d.dim_value());
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        dims.push_back(Dim::Symbol(d.dim_param()));
      } else {
        dims.push_back(Dim::Unknown());
      }
    }
    return Shape(std::move(dims));
  };
  switch (proto.value_case()) {
    case onnx::TypeProto::kTensorType:
      t.kind = TypeInfo::Kind::kTensor;
      t.dtype = IsKnownDType(proto.tensor_type().elem_type())
                    ? static_cast<DType>(proto.tensor_type().elem_type())
                    : DType::kUndefined;
      t.shape = shape_of(proto.tensor_type().has_shape(), proto.tensor_type().shape());
      break;
    case onnx::TypeProto::kSparseTensorType:
      t.kind = TypeInfo::Kind::kSparseTensor;
      t.dtype = IsKnownDType(proto.sparse_tensor_type().elem_type())
                    ? static_cast<DType>(proto.sparse_tensor_type().elem_type())
                    : DType::kUndefined;
      t.shape = shape_of(proto.sparse_tensor_type().has_shape(), proto.sparse_tensor_type().shape());
      break;
    case onnx::TypeProto::kSequenceType:
      t.kind = TypeInfo::Kind::kSequence;
      t.element = std::make_shared<const TypeInfo>(TypeFromProto(proto.sequence_type().elem_type()));
      break;
    case onnx::TypeProto::kOptionalType:
      t.kind = TypeInfo::Kind::kOptional;
      t.element = std::make_shared<const TypeInfo>(TypeFromProto(proto.optional_type().elem_type()));
      break;
    case onnx::TypeProto::kMapType:
      t.kind = TypeInfo::Kind::kMap;
      t.dtype = IsKnownDType(proto.map_type().key_type())
                    ? static_cast<DType>(proto.map_type().key_type())
                    : DType::kUndefined;
      t.element = std::make_shared<const TypeInfo>(TypeFromProto(proto.map_type().value_type()));
      break;
    default:
      break;
  }
  return t;
}

void TypeToProto(const TypeInfo& type, onnx::TypeProto* proto) {
  if (!type.denotation.empty()) proto->set_denotation(type.denotation);
  auto write_shape = [](const Shape& shape, onnx::TensorShapeProto* sp) {
    for (const Dim& d : shape.dims()) {
      auto* dim = sp->add_dim();
      if (d.is_value()) dim->set_dim_value(d.value());
      if (d.is_symbol()) dim->set_dim_param(d.symbol());
    }
  };
  switch (type.kind) {
    case TypeInfo::Kind::kNone: break;
    case TypeInfo::Kind::kTensor: {
      auto* tt = proto->mutable_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(type.dtype));
      if (type.shape.has_rank()) write_shape(type.shape, tt->mutable_shape());
      break;
    }
    case TypeInfo::Kind::kSparseTensor: {
      auto* st = proto->mutable_sparse_tensor_type();
      st->set_elem_type(static_cast<int32_t>(type.dtype));
      if (type.shape.has_rank()) write_shape(type.shape, st->mutable_shape());
      break;
    }
    case TypeInfo::Kind::kSequence:
      TypeToProto(type.element ? *type.element : TypeInfo(),
                  proto->mutable_sequence_type()->mutable_elem_type());
      break;
    case TypeInfo::Kind::kOptional:
      TypeToProto(type.element ? *type.element : TypeInfo(),
                  proto->mutable_optional_type()->mutable_elem_type());
      break;
    case TypeInfo::Kind::kMap:
      proto->mutable_map_type()->set_key_type(static_cast<int32_t>(type.dtype));
      TypeToProto(type.element ? *type.element : TypeInfo(),
                  proto->mutable_map_type()->mutable_value_type());
      break;
  }
}

// ---- Graphs -----------------------------------------------------------------

namespace {

class GraphReader {
 public:
  explicit GraphReader(ExternalDataResolver* external) : external_(external) {}

  // Converts `proto` into `graph` (whose parent, if any, is already converted
  // and has its scope registered).
  absl::Status Read(onnx::GraphProto& proto, Graph& graph) {
    graph.name = proto.name();
    graph.doc_string = proto.doc_string();
    auto& scope = scopes_[&graph];

    auto define = [&](const std::string& name) -> Value* {
      auto it = scope.find(name);
      if (it != scope.end()) return it->second;
      Value* v = graph.AddValue(name);
      scope[name] = v;
      return v;
    };

    // Pass 1: every name this graph defines, so that forward references and
    // subgraphs (which may read any of them) resolve.
    for (auto& tp : *proto.mutable_initializer()) {
      Value* v = define(tp.name());
      if (v->is_initializer()) {
        return Invalid(absl::StrCat("initializer '", tp.name(), "' is defined twice"));
      }
      auto t = TensorFromProto(tp, external_);
      if (!t.ok()) return t.status();
      if (!v->type().known()) {
        v->set_type(TypeInfo::Tensor(t->dtype(), Shape::FromValues(t->dims())));
      }
      graph.SetInitializer(v, *std::move(t));
    }
    for (const auto& vi : proto.input()) {
      Value* v = define(vi.name());
      if (vi.has_type()) v->set_type(TypeFromProto(vi.type()));
      v->doc_string = vi.doc_string();
      graph.AddInput(v);
    }
    for (const auto& np : proto.node()) {
      for (const std::string& out : np.output()) {
        if (!out.empty()) define(out);
      }
    }
    for (const auto& vi : proto.value_info()) {
      auto local = scope.find(vi.name());
      // value_info about an enclosing graph's value describes that value; leave it.
      if (local == scope.end() && Lookup(graph, vi.name()) != nullptr) continue;
      Value* v = define(vi.name());
      if (!v->type().known() && vi.has_type()) v->set_type(TypeFromProto(vi.type()));
      if (v->doc_string.empty()) v->doc_string = vi.doc_string();
      v->in_value_info = true;
    }
    for (auto& sp : proto.sparse_initializer()) {
      graph.opaque_sparse_initializers.push_back(sp.SerializeAsString());
    }
    for (auto& qa : proto.quantization_annotation()) {
      graph.opaque_quantization_annotations.push_back(qa.SerializeAsString());
    }

    // Pass 2: nodes.
    for (auto& np : *proto.mutable_node()) {
      std::vector<Value*> inputs;
      for (const std::string& in : np.input()) {
        inputs.push_back(in.empty() ? nullptr : Resolve(graph, in));
      }
      std::vector<Value*> outputs;
      for (const std::string& out : np.output()) {
        outputs.push_back(out.empty() ? nullptr : scope[out]);
      }
      Node* node = graph.AddNode(np.op_type(), std::move(inputs), {}, np.name(),
                                 NormalizeDomain(np.domain()));
      for (size_t i = 0; i < outputs.size(); ++i) node->set_output(i, outputs[i]);
      node->doc_string = np.doc_string();
      for (auto& ap : *np.mutable_attribute()) {
        AIC_ASSIGN_OR_RETURN(Attribute a, ReadAttribute(ap, graph));
        node->attributes.push_back(std::move(a));
      }
    }

    for (const auto& vi : proto.output()) {
      Value* v = Resolve(graph, vi.name());
      // The declared output type is what the file says about this value.
      if (vi.has_type() && v->owner() == &graph && !v->is_graph_input()) {
        v->set_type(TypeFromProto(vi.type()));
      }
      if (v->doc_string.empty()) v->doc_string = vi.doc_string();
      graph.AddOutput(v);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Attribute> ReadAttribute(onnx::AttributeProto& ap, Graph& owner) {
    Attribute a;
    a.name = ap.name();
    a.ref_attr_name = ap.ref_attr_name();
    a.doc_string = ap.doc_string();
    int type = ap.type();
    if (type == onnx::AttributeProto::UNDEFINED) {
      // Old models leave the type out; the field that is set tells it.
      if (ap.has_f()) type = onnx::AttributeProto::FLOAT;
      else if (ap.has_i()) type = onnx::AttributeProto::INT;
      else if (ap.has_s()) type = onnx::AttributeProto::STRING;
      else if (ap.has_t()) type = onnx::AttributeProto::TENSOR;
      else if (ap.has_g()) type = onnx::AttributeProto::GRAPH;
      else if (ap.floats_size()) type = onnx::AttributeProto::FLOATS;
      else if (ap.ints_size()) type = onnx::AttributeProto::INTS;
      else if (ap.strings_size()) type = onnx::AttributeProto::STRINGS;
      else if (ap.tensors_size()) type = onnx::AttributeProto::TENSORS;
      else if (ap.graphs_size()) type = onnx::AttributeProto::GRAPHS;
    }
    a.type = static_cast<AttrType>(type);
    switch (type) {
      case onnx::AttributeProto::FLOAT: a.f = ap.f(); break;
      case onnx::AttributeProto::INT: a.i = ap.i(); break;
      case onnx::AttributeProto::STRING: a.s = ap.s(); break;
      case onnx::AttributeProto::TENSOR: {
        AIC_ASSIGN_OR_RETURN(a.t, TensorFromProto(*ap.mutable_t(), external_));
        break;
      }
      case onnx::AttributeProto::GRAPH: {
        a.g = std::make_shared<Graph>(&owner);
        AIC_RETURN_IF_ERROR(Read(*ap.mutable_g(), *a.g));
        break;
      }
      case onnx::AttributeProto::FLOATS: a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
      case onnx::AttributeProto::INTS: a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
      case onnx::AttributeProto::STRINGS: a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
      case onnx::AttributeProto::TENSORS:
        for (auto& tp : *ap.mutable_tensors()) {
          AIC_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(tp, external_));
          a.tensors.push_back(std::move(t));
        }
        break;
      case onnx::AttributeProto::GRAPHS:
        for (auto& gp : *ap.mutable_graphs()) {
          auto g = std::make_shared<Graph>(&owner);
          AIC_RETURN_IF_ERROR(Read(gp, *g));
          a.graphs.push_back(std::move(g));
        }
        break;
      case onnx::AttributeProto::SPARSE_TENSOR:
        a.opaque_protos.push_back(ap.sparse_tensor().SerializeAsString());
        break;
      case onnx::AttributeProto::SPARSE_TENSORS:
        for (const auto& st : ap.sparse_tensors()) a.opaque_protos.push_back(st.SerializeAsString());
        break;
      case onnx::AttributeProto::TYPE_PROTO:
        a.opaque_protos.push_back(ap.tp().SerializeAsString());
        break;
      case onnx::AttributeProto::TYPE_PROTOS:
        for (const auto& tp : ap.type_protos()) a.opaque_protos.push_back(tp.SerializeAsString());
        break;
      default:
        if (a.ref_attr_name.empty()) {
          return Invalid(absl::StrCat("attribute '", ap.name(), "' has unknown type ", type));
        }
    }
    return a;
  }

 private:
  Value* Lookup(const Graph& graph, const std::string& name) {
    for (const Graph* g = &graph; g != nullptr; g = g->parent()) {
      auto sit = scopes_.find(g);
      if (sit == scopes_.end()) continue;
      auto it = sit->second.find(name);
      if (it != sit->second.end()) return it->second;
    }
    return nullptr;
  }

  // A name read by a node: this graph's, an enclosing graph's, or an undefined
  // value (Verify() reports it).
  Value* Resolve(Graph& graph, const std::string& name) {
    if (Value* v = Lookup(graph, name)) return v;
    Value* v = graph.AddValue(name);
    scopes_[&graph][name] = v;
    return v;
  }

  ExternalDataResolver* external_;
  // Node-based map: Read() holds a reference to its graph's scope while nested
  // subgraphs add theirs, so entries must not move on rehash.
  std::unordered_map<const Graph*, absl::flat_hash_map<std::string, Value*>> scopes_;
};

void WriteValueInfo(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name());
  if (!v.doc_string.empty()) vi->set_doc_string(v.doc_string);
  if (v.type().known()) TypeToProto(v.type(), vi->mutable_type());
}

class GraphWriter {
 public:
  explicit GraphWriter(TensorWriter& writer) : writer_(writer) {}

  absl::Status Write(const Graph& graph, onnx::GraphProto* proto, bool top_level) {
    proto->set_name(graph.name);
    if (!graph.doc_string.empty()) proto->set_doc_string(graph.doc_string);
    for (const Value* v : graph.initializers()) {
      auto* tp = proto->add_initializer();
      tp->set_name(v->name());
      AIC_RETURN_IF_ERROR(top_level ? writer_.Write(*v->initializer(), tp)
                                    : TensorToProtoInline(*v->initializer(), tp));
    }
    for (const Value* v : graph.inputs()) WriteValueInfo(*v, proto->add_input());
    for (const Value* v : graph.outputs()) WriteValueInfo(*v, proto->add_output());
    for (const auto& v : graph.values()) {
      if (v->in_value_info) WriteValueInfo(*v, proto->add_value_info());
    }
    for (const auto& n : graph.nodes()) {
      auto* np = proto->add_node();
      for (const Value* v : n->inputs()) np->add_input(v ? v->name() : "");
      for (const Value* v : n->outputs()) np->add_output(v ? v->name() : "");
      if (!n->name.empty()) np->set_name(n->name);
      np->set_op_type(n->op_type);
      if (!n->domain.empty()) np->set_domain(n->domain);
      if (!n->doc_string.empty()) np->set_doc_string(n->doc_string);
      for (const Attribute& a : n->attributes) {
        AIC_RETURN_IF_ERROR(WriteAttribute(a, np->add_attribute()));
      }
    }
    for (const std::string& s : graph.opaque_sparse_initializers) {
      if (!proto->add_sparse_initializer()->ParseFromString(s)) {
        return absl::InternalError("cannot re-encode a sparse initializer");
      }
    }
    for (const std::string& s : graph.opaque_quantization_annotations) {
      if (!proto->add_quantization_annotation()->ParseFromString(s)) {
        return absl::InternalError("cannot re-encode a quantization annotation");
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteAttribute(const Attribute& a, onnx::AttributeProto* ap) {
    ap->set_name(a.name);
    if (!a.ref_attr_name.empty()) ap->set_ref_attr_name(a.ref_attr_name);
    if (!a.doc_string.empty()) ap->set_doc_string(a.doc_string);
    ap->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
    switch (a.type) {
      case AttrType::kFloat: ap->set_f(a.f); break;
      case AttrType::kInt: ap->set_i(a.i); break;
      case AttrType::kString: ap->set_s(a.s); break;
      case AttrType::kTensor: AIC_RETURN_IF_ERROR(TensorToProtoInline(a.t, ap->mutable_t())); break;
      case AttrType::kGraph: AIC_RETURN_IF_ERROR(Write(*a.g, ap->mutable_g(), false)); break;
      case AttrType::kFloats: for (float f : a.floats) ap->add_floats(f); break;
      case AttrType::kInts: for (int64_t i : a.ints) ap->add_ints(i); break;
      case AttrType::kStrings: for (const auto& s : a.strings) ap->add_strings(s); break;
      case AttrType::kTensors:
        for (const Tensor& t : a.tensors) AIC_RETURN_IF_ERROR(TensorToProtoInline(t, ap->add_tensors()));
        break;
      case AttrType::kGraphs:
        for (const auto& g : a.graphs) AIC_RETURN_IF_ERROR(Write(*g, ap->add_graphs(), false));
        break;
      case AttrType::kSparseTensor:
        if (!a.opaque_protos.empty()) ap->mutable_sparse_tensor()->ParseFromString(a.opaque_protos[0]);
        break;
      case AttrType::kSparseTensors:
        for (const auto& s : a.opaque_protos) ap->add_sparse_tensors()->ParseFromString(s);
        break;
      case AttrType::kTypeProto:
        if (!a.opaque_protos.empty()) ap->mutable_tp()->ParseFromString(a.opaque_protos[0]);
        break;
      case AttrType::kTypeProtos:
        for (const auto& s : a.opaque_protos) ap->add_type_protos()->ParseFromString(s);
        break;
      case AttrType::kUndefined: break;
    }
    return absl::OkStatus();
  }

 private:
  TensorWriter& writer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> ModelFromProto(onnx::ModelProto& proto,
                                                      ExternalDataResolver* external) {
  if (!proto.has_graph()) return Invalid("model has no graph");
  auto model = std::make_unique<Model>();
  model->ir_version = proto.ir_version();
  for (const auto& op : proto.opset_import()) {
    model->opset_imports.push_back({op.domain(), op.version()});
  }
  model->producer_name = proto.producer_name();
  model->producer_version = proto.producer_version();
  model->domain = proto.domain();
  model->model_version = proto.model_version();
  model->doc_string = proto.doc_string();
  for (const auto& kv : proto.metadata_props()) {
    model->metadata_props.emplace_back(kv.key(), kv.value());
  }
  for (const auto& ti : proto.training_info()) {
    model->opaque_training_info.push_back(ti.SerializeAsString());
  }
  GraphReader reader(external);
  AIC_RETURN_IF_ERROR(reader.Read(*proto.mutable_graph(), *model->graph));

  for (auto& fp : *proto.mutable_functions()) {
    Function fn;
    fn.name = fp.name();
    fn.domain = fp.domain();
    fn.doc_string = fp.doc_string();
    fn.attribute_names.assign(fp.attribute().begin(), fp.attribute().end());
    for (const auto& op : fp.opset_import()) fn.opset_imports.push_back({op.domain(), op.version()});
    // The body is read as a graph: formal inputs are its inputs, nodes its nodes.
    onnx::GraphProto body;
    body.set_name(fp.name());
    for (const std::string& in : fp.input()) body.add_input()->set_name(in);
    for (const std::string& out : fp.output()) body.add_output()->set_name(out);
    body.mutable_node()->Swap(fp.mutable_node());
    fn.body = std::make_shared<Graph>();
    GraphReader fn_reader(external);
    AIC_RETURN_IF_ERROR(fn_reader.Read(body, *fn.body));
    model->functions.push_back(std::move(fn));
  }
  return model;
}

absl::Status ModelToProto(const Model& model, TensorWriter& initializer_writer,
                          onnx::ModelProto* proto) {
  proto->set_ir_version(model.ir_version);
  for (const OpsetImport& o : model.opset_imports) {
    auto* op = proto->add_opset_import();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!model.producer_name.empty()) proto->set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto->set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto->set_domain(model.domain);
  if (model.model_version != 0) proto->set_model_version(model.model_version);
  if (!model.doc_string.empty()) proto->set_doc_string(model.doc_string);
  for (const auto& [k, v] : model.metadata_props) {
    auto* kv = proto->add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const std::string& s : model.opaque_training_info) {
    if (!proto->add_training_info()->ParseFromString(s)) {
      return absl::InternalError("cannot re-encode training info");
    }
  }
  GraphWriter writer(initializer_writer);
  AIC_RETURN_IF_ERROR(writer.Write(*model.graph, proto->mutable_graph(), true));
  for (const Function& fn : model.functions) {
    auto* fp = proto->add_functions();
    fp->set_name(fn.name);
    fp->set_domain(fn.domain);
    if (!fn.doc_string.empty()) fp->set_doc_string(fn.doc_string);
    for (const std::string& a : fn.attribute_names) fp->add_attribute(a);
    for (const OpsetImport& o : fn.opset_imports) {
      auto* op = fp->add_opset_import();
      op->set_domain(o.domain);
      op->set_version(o.version);
    }
    onnx::GraphProto body;
    AIC_RETURN_IF_ERROR(writer.Write(*fn.body, &body, false));
    for (const auto& in : body.input()) fp->add_input(in.name());
    for (const auto& out : body.output()) fp->add_output(out.name());
    fp->mutable_node()->Swap(body.mutable_node());
  }
  return absl::OkStatus();
}

absl::StatusOr<RuntimeValue> ValueFromSequenceProto(onnx::SequenceProto& proto) {
  std::vector<Tensor> items;
  DType dtype = DType::kUndefined;
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return absl::UnimplementedError("only sequences of tensors are supported");
  }
  for (auto& tp : *proto.mutable_tensor_values()) {
    AIC_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(tp, nullptr));
    dtype = t.dtype();
    items.push_back(std::move(t));
  }
  return RuntimeValue::Sequence(std::move(items), dtype);
}

absl::StatusOr<RuntimeValue> ValueFromOptionalProto(onnx::OptionalProto& proto) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::TENSOR: {
      if (!proto.has_tensor_value()) return RuntimeValue::None();
      AIC_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(*proto.mutable_tensor_value(), nullptr));
      return RuntimeValue(std::move(t));
    }
    case onnx::OptionalProto::SEQUENCE:
      if (!proto.has_sequence_value()) return RuntimeValue::None();
      return ValueFromSequenceProto(*proto.mutable_sequence_value());
    case onnx::OptionalProto::UNDEFINED:
      return RuntimeValue::None();
    default:
      return absl::UnimplementedError("unsupported optional element type");
  }
}

}  // namespace aic::onnx_io

#include "graph/attribute.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace aic {

const char* AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kUndefined: return "undefined";
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
    case AttrType::kSparseTensor: return "sparse_tensor";
    case AttrType::kSparseTensors: return "sparse_tensors";
    case AttrType::kTypeProto: return "type_proto";
    case AttrType::kTypeProtos: return "type_protos";
  }
  return "unknown";
}

Attribute Attribute::Int(std::string name, int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}
Attribute Attribute::Float(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}
Attribute Attribute::String(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kString;
  a.s = std::move(v);
  return a;
}
Attribute Attribute::Ints(std::string name, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute Attribute::Floats(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}
Attribute Attribute::Strings(std::string name, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}
Attribute Attribute::TensorValue(std::string name, Tensor v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kTensor;
  a.t = std::move(v);
  return a;
}
Attribute Attribute::GraphValue(std::string name, std::shared_ptr<Graph> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kGraph;
  a.g = std::move(v);
  return a;
}

std::string Attribute::ToString() const {
  std::string v;
  switch (type) {
    case AttrType::kFloat: v = absl::StrCat(f); break;
    case AttrType::kInt: v = absl::StrCat(i); break;
    case AttrType::kString: v = absl::StrCat("\"", s, "\""); break;
    case AttrType::kTensor: v = absl::StrCat("<", DTypeName(t.dtype()), DimsToString(t.dims()), ">"); break;
    case AttrType::kGraph: v = "<graph>"; break;
    case AttrType::kFloats: v = absl::StrCat("[", absl::StrJoin(floats, ", "), "]"); break;
    case AttrType::kInts: v = absl::StrCat("[", absl::StrJoin(ints, ", "), "]"); break;
    case AttrType::kStrings: v = absl::StrCat("[", absl::StrJoin(strings, ", "), "]"); break;
    case AttrType::kTensors: v = absl::StrCat("<", tensors.size(), " tensors>"); break;
    case AttrType::kGraphs: v = absl::StrCat("<", graphs.size(), " graphs>"); break;
    default: v = absl::StrCat("<", AttrTypeName(type), ">"); break;
  }
  if (!ref_attr_name.empty()) v = absl::StrCat("@", ref_attr_name);
  return absl::StrCat(name, "=", v);
}

}  // namespace aic

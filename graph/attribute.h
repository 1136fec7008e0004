// A node attribute, typed as ONNX types it. Tensor and graph attributes hold
// our own Tensor and Graph; sparse-tensor and type-proto attributes, which no
// op we implement reads, are kept as serialized protobuf bytes so that they
// survive a load/save round trip unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace aic {

class Graph;

// Values equal ONNX's AttributeProto.AttributeType.
enum class AttrType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

const char* AttrTypeName(AttrType t);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  std::string ref_attr_name;  // inside functions: value comes from the caller's attribute
  std::string doc_string;

  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  // Serialized SparseTensorProto / TypeProto payloads (one for the singular kinds).
  std::vector<std::string> opaque_protos;

  static Attribute Int(std::string name, int64_t v);
  static Attribute Float(std::string name, float v);
  static Attribute String(std::string name, std::string v);
  static Attribute Ints(std::string name, std::vector<int64_t> v);
  static Attribute Floats(std::string name, std::vector<float> v);
  static Attribute Strings(std::string name, std::vector<std::string> v);
  static Attribute TensorValue(std::string name, Tensor v);
  static Attribute GraphValue(std::string name, std::shared_ptr<Graph> v);

  // Short rendering for printers: "axis=1", "perm=[0, 2, 1]", "value=<float[3]>".
  std::string ToString() const;
};

}  // namespace aic

// Model: a Graph plus what the ONNX ModelProto says around it (IR version,
// opset imports, producer, metadata, model-local functions). Everything a file
// carries is kept, so load → save → load is lossless.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace aic {

struct OpsetImport {
  std::string domain;  // "" for the default ONNX domain
  int64_t version = 0;
  bool operator==(const OpsetImport&) const = default;
};

// A model-local function (FunctionProto). Its body is a Graph whose inputs and
// outputs are the function's formal parameters (untyped).
struct Function {
  std::string name;
  std::string domain;
  std::string doc_string;
  std::vector<std::string> attribute_names;    // attributes without defaults
  std::vector<Attribute> attribute_defaults;   // attribute_proto: with defaults
  std::vector<OpsetImport> opset_imports;
  std::shared_ptr<Graph> body;
};

struct Model {
  int64_t ir_version = 8;
  std::vector<OpsetImport> opset_imports;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<Function> functions;
  // Serialized TrainingInfoProto entries, kept verbatim.
  std::vector<std::string> opaque_training_info;
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();

  // Opset version imported for `domain` ("" and "ai.onnx" are the same), or -1.
  int64_t OpsetFor(std::string_view domain) const;
  const Function* FindFunction(std::string_view domain, std::string_view name) const;
};

// "" for the default domain, whatever spelling the file used.
std::string NormalizeDomain(std::string_view domain);

}  // namespace aic

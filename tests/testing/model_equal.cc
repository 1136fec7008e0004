#include "tests/testing/model_equal.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace aic::testing {

namespace {

std::string Names(const std::vector<Value*>& values) {
  std::string s;
  for (const Value* v : values) absl::StrAppend(&s, v ? v->name() : "", ",");
  return s;
}

bool FloatsBitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::string DiffAttributes(const Attribute& x, const Attribute& y, const std::string& where) {
  std::string at = absl::StrCat(where, " attribute '", x.name, "'");
  if (x.name != y.name || x.type != y.type || x.ref_attr_name != y.ref_attr_name) {
    return absl::StrCat(at, ": name/type differ");
  }
  uint32_t fx, fy;
  std::memcpy(&fx, &x.f, 4);
  std::memcpy(&fy, &y.f, 4);
  if (fx != fy || x.i != y.i || x.s != y.s || x.ints != y.ints || x.strings != y.strings ||
      !FloatsBitwiseEqual(x.floats, y.floats) || x.opaque_protos != y.opaque_protos) {
    return absl::StrCat(at, ": values differ");
  }
  if (x.type == AttrType::kTensor && !x.t.BitwiseEquals(y.t)) return absl::StrCat(at, ": tensor differs");
  if (x.tensors.size() != y.tensors.size()) return absl::StrCat(at, ": tensor count differs");
  for (size_t i = 0; i < x.tensors.size(); ++i) {
    if (!x.tensors[i].BitwiseEquals(y.tensors[i])) return absl::StrCat(at, ": tensor ", i, " differs");
  }
  if ((x.g == nullptr) != (y.g == nullptr)) return absl::StrCat(at, ": graph presence differs");
  if (x.g) {
    std::string d = DiffGraphs(*x.g, *y.g, at);
    if (!d.empty()) return d;
  }
  if (x.graphs.size() != y.graphs.size()) return absl::StrCat(at, ": graph count differs");
  for (size_t i = 0; i < x.graphs.size(); ++i) {
    std::string d = DiffGraphs(*x.graphs[i], *y.graphs[i], at);
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace

std::string DiffGraphs(const Graph& a, const Graph& b, const std::string& where) {
  std::string at = absl::StrCat(where, " graph '", a.name, "'");
  if (a.name != b.name || a.doc_string != b.doc_string) return absl::StrCat(at, ": name/doc differ");
  if (Names(a.inputs()) != Names(b.inputs())) return absl::StrCat(at, ": inputs differ");
  if (Names(a.outputs()) != Names(b.outputs())) return absl::StrCat(at, ": outputs differ");
  if (Names(a.initializers()) != Names(b.initializers())) return absl::StrCat(at, ": initializers differ");
  for (size_t i = 0; i < a.initializers().size(); ++i) {
    if (!a.initializers()[i]->initializer()->BitwiseEquals(*b.initializers()[i]->initializer())) {
      return absl::StrCat(at, ": initializer '", a.initializers()[i]->name(), "' differs");
    }
  }
  auto types_equal = [&](const std::vector<Value*>& x, const std::vector<Value*>& y) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (!(x[i]->type() == y[i]->type())) return false;
    }
    return true;
  };
  if (!types_equal(a.inputs(), b.inputs()) || !types_equal(a.outputs(), b.outputs())) {
    return absl::StrCat(at, ": input/output types differ");
  }
  std::vector<Value*> vi_a, vi_b;
  for (const auto& v : a.values()) if (v->in_value_info) vi_a.push_back(v.get());
  for (const auto& v : b.values()) if (v->in_value_info) vi_b.push_back(v.get());
  if (vi_a.size() != vi_b.size()) return absl::StrCat(at, ": value_info count differs");
  if (a.opaque_sparse_initializers != b.opaque_sparse_initializers ||
      a.opaque_quantization_annotations != b.opaque_quantization_annotations) {
    return absl::StrCat(at, ": sparse initializers/annotations differ");
  }
  if (a.num_nodes() != b.num_nodes()) return absl::StrCat(at, ": node count differs");
  for (size_t i = 0; i < a.num_nodes(); ++i) {
    const Node& x = *a.nodes()[i];
    const Node& y = *b.nodes()[i];
    std::string nat = absl::StrCat(at, " node ", i, " (", x.op_type, ")");
    if (x.op_type != y.op_type || x.domain != y.domain || x.name != y.name ||
        x.doc_string != y.doc_string) {
      return absl::StrCat(nat, ": op/domain/name differ");
    }
    if (Names(x.inputs()) != Names(y.inputs()) || Names(x.outputs()) != Names(y.outputs())) {
      return absl::StrCat(nat, ": connections differ");
    }
    if (x.attributes.size() != y.attributes.size()) return absl::StrCat(nat, ": attribute count differs");
    for (size_t k = 0; k < x.attributes.size(); ++k) {
      std::string d = DiffAttributes(x.attributes[k], y.attributes[k], nat);
      if (!d.empty()) return d;
    }
  }
  return "";
}

std::string DiffModels(const Model& a, const Model& b) {
  if (a.ir_version != b.ir_version) return "ir_version differs";
  if (a.opset_imports != b.opset_imports) return "opset imports differ";
  if (a.producer_name != b.producer_name || a.producer_version != b.producer_version ||
      a.domain != b.domain || a.model_version != b.model_version || a.doc_string != b.doc_string) {
    return "model header differs";
  }
  if (a.metadata_props != b.metadata_props) return "metadata_props differ";
  if (a.opaque_training_info != b.opaque_training_info) return "training_info differs";
  if (a.functions.size() != b.functions.size()) return "function count differs";
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const Function& x = a.functions[i];
    const Function& y = b.functions[i];
    if (x.name != y.name || x.domain != y.domain || x.attribute_names != y.attribute_names ||
        x.opset_imports != y.opset_imports || x.doc_string != y.doc_string) {
      return absl::StrCat("function ", x.name, " header differs");
    }
    std::string d = DiffGraphs(*x.body, *y.body, absl::StrCat("function ", x.name));
    if (!d.empty()) return d;
  }
  return DiffGraphs(*a.graph, *b.graph, "main");
}

}  // namespace aic::testing

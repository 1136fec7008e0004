#include "tests/conformance/conformance.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/verify.h"
#include "onnx_io/load.h"
#include "ops/infer_shapes.h"
#include "ops/util/small_float.h"
#include "tests/conformance/devices.h"

namespace aic::conformance {

namespace {

namespace fs = std::filesystem;

TestResult Fail(std::string category, std::string reason) {
  TestResult r;
  r.status = TestResult::Status::kFailed;
  r.category = std::move(category);
  r.reason = std::move(reason);
  return r;
}

std::string Category(const absl::Status& s) {
  std::string msg(s.message());
  if (s.code() == absl::StatusCode::kUnimplemented) {
    // The reference executor says "no reference kernel for op X", exec/cpu "no kernel for op X".
    size_t p = msg.find("kernel for op ");
    if (p != std::string::npos) {
      std::string rest = msg.substr(p + 14);
      return "no kernel: " + rest.substr(0, rest.find(' '));
    }
    return "unimplemented";
  }
  return "run error";
}

// "" when equal by the ONNX rule (onnx.backend.test.runner's
// assert_similar_outputs: numpy's assert_allclose, rtol 1e-3, atol 1e-7, NaN
// equal to NaN; bfloat16 with rtol 2^-6, two of its ulps), else what differs.
std::string CompareTensors(const Tensor& got_stored, const Tensor& want_stored) {
  Tensor got = got_stored, want = want_stored;
  if (got.dtype() != want.dtype()) {
    return absl::StrCat("dtype ", DTypeName(got.dtype()), " != expected ", DTypeName(want.dtype()));
  }
  if (got.dims() != want.dims()) {
    return absl::StrCat("shape ", DimsToString(got.dims()), " != expected ", DimsToString(want.dims()));
  }
  if (got.dtype() == DType::kString) return got.strings() == want.strings() ? "" : "strings differ";
  if (got.dtype() == DType::kComplex64 || got.dtype() == DType::kComplex128) {
    return got.BitwiseEquals(want) ? "" : "bytes differ";
  }
  // float8/float4/4- and 2-bit values compare as the values they decode to
  // (exactly: their steps are far wider than the tolerance), so any NaN
  // matches any NaN, as ONNX's runner has it, whatever its sign or code.
  if (IsOpaqueStorageOnly(got.dtype())) {
    got = WidenSmall(got);
    want = WidenSmall(want);
  }
  const double rtol = got.dtype() == DType::kBFloat16 ? 1.0 / 64 : 1e-3;
  int64_t n = got.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) && std::isnan(b)) continue;
      return absl::StrCat("element ", i, ": ", a, " != expected ", b);
    }
    if (a == b) continue;  // includes equal infinities
    if (!(std::fabs(a - b) <= 1e-7 + rtol * std::fabs(b))) {
      return absl::StrCat("element ", i, ": ", a, " != expected ", b);
    }
  }
  return "";
}

std::string CompareValues(const RuntimeValue& got, const RuntimeValue& want) {
  if (got.kind != want.kind) return "value kind differs (tensor/sequence/none)";
  if (got.is_tensor()) return CompareTensors(got.tensor, want.tensor);
  if (got.is_sequence()) {
    if (got.sequence.size() != want.sequence.size()) {
      return absl::StrCat("sequence length ", got.sequence.size(), " != expected ", want.sequence.size());
    }
    for (size_t i = 0; i < got.sequence.size(); ++i) {
      std::string d = CompareTensors(got.sequence[i], want.sequence[i]);
      if (!d.empty()) return absl::StrCat("sequence item ", i, ": ", d);
    }
  }
  return "";
}

std::vector<fs::path> DataSets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

// ONNX 1.12's suite stores bfloat16 test data as uint16 tensors (same bits):
// read them as the bfloat16 the model declares.
RuntimeValue AsDeclaredBFloat16(RuntimeValue v, const TypeInfo& declared) {
  if (v.is_tensor() && declared.is_tensor() && declared.dtype == DType::kBFloat16 &&
      v.tensor.dtype() == DType::kUint16) {
    v.tensor = Tensor(DType::kBFloat16, v.tensor.dims(), v.tensor.buffer(), v.tensor.byte_offset());
  }
  return v;
}

// Forgets the types of every node output (recursively), so that shape
// inference is checked on its own, not echoing what the file declared.
void ForgetInferredTypes(Graph& g) {
  for (const auto& n : g.nodes()) {
    for (Value* v : n->outputs()) {
      if (v != nullptr) v->set_type(TypeInfo());
    }
    for (Graph* sub : n->Subgraphs()) ForgetInferredTypes(*sub);
  }
}

// The first random generator without a `seed` (recursively), or null. Its
// outputs differ on every run, so no stored expected output can be compared:
// such a test would pass or fail by chance (Bernoulli's 0/1 outputs do
// match numpy's now and then), which an allow-list must never hold.
const Node* UnseededRandomNode(const Graph& g) {
  static const std::set<std::string> kRandomOps = {"Bernoulli",         "Multinomial",      "RandomNormal",
                                                   "RandomNormalLike",  "RandomUniform",    "RandomUniformLike"};
  for (const auto& n : g.nodes()) {
    if (n->domain.empty() && kRandomOps.count(n->op_type) && !n->HasAttr("seed")) return n.get();
    for (Graph* sub : n->Subgraphs()) {
      if (const Node* found = UnseededRandomNode(*sub)) return found;
    }
  }
  return nullptr;
}

}  // namespace

TestResult RunBackendTest(const std::string& test_dir, const std::string& device) {
  fs::path dir(test_dir);
  auto model = LoadModel((dir / "model.onnx").string());
  if (!model.ok()) return Fail("load", std::string(model.status().message()));
  if (absl::Status s = Verify(*(*model)->graph); !s.ok()) {
    return Fail("verify", std::string(s.message()));
  }
  // Expected outputs are read with the declared output types (sequence vs
  // tensor), taken before inference runs on a blank slate.
  const Graph& g = *(*model)->graph;
  if (const Node* random = UnseededRandomNode(g)) {
    TestResult r;
    r.status = TestResult::Status::kSkipped;
    r.category = "nondeterministic";
    r.reason = absl::StrCat("unseeded ", random->op_type, " draws new values on every run");
    return r;
  }
  std::vector<TypeInfo> declared_output_types;
  for (const Value* v : g.outputs()) declared_output_types.push_back(v->type());
  ForgetInferredTypes(*(*model)->graph);
  InferStats stats;
  InferShapes(**model, InferOptions(), &stats).IgnoreError();

  std::vector<const Value*> feeds_order;
  for (const Value* v : g.inputs()) {
    if (!v->is_initializer()) feeds_order.push_back(v);
  }
  std::vector<fs::path> sets = DataSets(dir);
  if (sets.empty()) {
    TestResult r;
    r.status = TestResult::Status::kSkipped;
    r.category = "no data";
    r.reason = "no test_data_set";
    return r;
  }
  TestResult result;
  result.status = TestResult::Status::kPassed;
  bool shapes_all_static = true, shapes_match = true;
  for (const fs::path& set : sets) {
    std::map<std::string, RuntimeValue> feeds;
    for (size_t i = 0; i < feeds_order.size(); ++i) {
      fs::path file = set / absl::StrCat("input_", i, ".pb");
      if (!fs::exists(file)) continue;  // an omitted optional input
      auto v = LoadValueProtoFile(file.string(), feeds_order[i]->type());
      if (!v.ok()) return Fail("load", std::string(v.status().message()));
      feeds[feeds_order[i]->name()] = AsDeclaredBFloat16(*std::move(v), feeds_order[i]->type());
    }
    auto outputs = RunOnDevice(device, **model, feeds, &result.coverage);
    if (!outputs.ok()) return Fail(Category(outputs.status()), std::string(outputs.status().message()));
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      fs::path file = set / absl::StrCat("output_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto want = LoadValueProtoFile(file.string(), declared_output_types[i]);
      if (!want.ok()) return Fail("load", std::string(want.status().message()));
      std::string diff = CompareValues((*outputs)[i], AsDeclaredBFloat16(*want, declared_output_types[i]));
      if (!diff.empty()) {
        return Fail("mismatch", absl::StrCat("output '", g.outputs()[i]->name(), "': ", diff));
      }
      const TypeInfo& inferred = g.outputs()[i]->type();
      if (want->is_tensor() && inferred.is_tensor() && inferred.shape.IsStatic()) {
        if (inferred.shape.Values() != want->tensor.dims()) shapes_match = false;
      } else if (want->is_tensor()) {
        shapes_all_static = false;
      }
    }
  }
  result.shape_check = !shapes_match ? "mismatch" : shapes_all_static ? "match" : "unknown";
  return result;
}

}  // namespace aic::conformance

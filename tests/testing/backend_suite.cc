#include "tests/testing/backend_suite.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "onnx_io/load.h"

namespace aic::testing {

namespace fs = std::filesystem;

std::vector<fs::path> SuiteTestsMatching(const std::regex& pattern) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kBackendNodeSuite)) {
    if (std::regex_match(e.path().filename().string(), pattern)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string OnnxMismatch(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    return absl::StrCat("dtype/shape ", DTypeName(got.dtype()), DimsToString(got.dims()), " vs ",
                        DTypeName(want.dtype()), DimsToString(want.dims()));
  }
  if (got.dtype() == DType::kString || got.dtype() == DType::kBool) {
    return got.BitwiseEquals(want) ? "" : "values differ";
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    if (!(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b))) return absl::StrCat("element ", i, ": ", a, " vs ", b);
  }
  return "";
}

std::string RunSuiteTestWithConstantOperands(const fs::path& dir, const RunModelFn& run) {
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    auto loaded = LoadModel((dir / "model.onnx").string());
    if (!loaded.ok()) return "load";
    Model& model = **loaded;
    Graph& g = *model.graph;
    std::vector<Value*> ins, still_fed;
    for (Value* v : g.inputs()) {
      if (!v->is_initializer()) ins.push_back(v);
    }
    std::map<std::string, RuntimeValue> feeds;
    for (size_t i = 0; i < ins.size(); ++i) {
      fs::path file = set.path() / absl::StrCat("input_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto v = LoadValueProtoFile(file.string(), ins[i]->type());
      if (!v.ok()) return "load";
      if (i > 0 && v->is_tensor()) {
        g.SetInitializer(ins[i], v->tensor);
        continue;
      }
      still_fed.push_back(ins[i]);
      feeds[ins[i]->name()] = *v;
    }
    // Inputs that were initializers already stay listed as inputs.
    for (Value* v : g.inputs()) {
      if (v->is_initializer() && std::find(ins.begin(), ins.end(), v) == ins.end()) still_fed.push_back(v);
    }
    g.set_inputs(still_fed);
    std::vector<TypeInfo> out_types;
    for (const Value* v : g.outputs()) out_types.push_back(v->type());
    absl::StatusOr<std::vector<RuntimeValue>> outs = run(model, feeds);
    if (!outs.ok()) return std::string(outs.status().message());
    for (size_t i = 0; i < out_types.size(); ++i) {
      fs::path file = set.path() / absl::StrCat("output_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto want = LoadValueProtoFile(file.string(), out_types[i]);
      if (!want.ok() || !want->is_tensor() || !(*outs)[i].is_tensor()) return "non-tensor";
      std::string why = OnnxMismatch((*outs)[i].tensor, want->tensor);
      if (!why.empty()) return absl::StrCat("output ", i, ": ", why);
    }
  }
  return "";
}

}  // namespace aic::testing

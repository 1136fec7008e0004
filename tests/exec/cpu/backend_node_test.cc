// The ONNX backend node tests of the ops the fast executor accelerates, with
// their operands beyond the first made constants (weights, biases, shapes,
// slice bounds, scales: what a real model stores as initializers). The suite
// feeds every operand, so on `aic_conformance --device cpu` most of these
// models cannot be lowered (a Conv with fed weights, a Reshape to a fed shape)
// and run on reference kernels; here the lowerings themselves meet the
// expected outputs (the ONNX rule |a-b| <= 1e-7 + 1e-3|b|) wherever the
// reference executor does, and a floor on how many plans need no reference
// kernel at all catches a lowering that silently stops applying. Skips when
// the suite (Debian's libonnx-testdata) is not installed.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "absl/strings/str_cat.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"

namespace aic::cpu {
namespace {

namespace fs = std::filesystem;
constexpr char kSuite[] = "/usr/share/libonnx-testdata/data/node";

// Test-name prefixes of the ops with fast kernels (see exec/cpu/lowering.cc).
const std::regex kAccelerated(
    "test_(conv|convtranspose|relu|leakyrelu|sigmoid|tanh|exp|log|sqrt|abs|elu|hardsigmoid|hardswish|clip|neg|pow|"
    "add|sub|mul|div|max|min|maxpool|averagepool|globalaveragepool|globalmaxpool|matmul|gemm|batchnorm|softmax|"
    "logsoftmax|concat|reduce_mean|reduce_sum|reduce_max|reduce_min|transpose|slice|resize|reshape|flatten|"
    "squeeze|unsqueeze|identity|dropout|"
    // our own kernels (exec/cpu/ops_native*.cc)
    "erf|reciprocal|floor|ceil|round|sin|cos|softplus|softsign|sign|gelu|prelu|where|equal|less|greater|"
    "less_equal|greater_equal|and|or|xor|layer_normalization|gather|pad|constant_pad|edge_pad|reflect_pad|cast|"
    "upsample)(_.*)?");

bool OnnxClose(const Tensor& got, const Tensor& want, std::string* why) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    *why = absl::StrCat("dtype/shape ", DTypeName(got.dtype()), DimsToString(got.dims()), " vs ",
                        DTypeName(want.dtype()), DimsToString(want.dims()));
    return false;
  }
  if (got.dtype() == DType::kString || got.dtype() == DType::kBool) return got.BitwiseEquals(want);
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b))) {
      *why = absl::StrCat("element ", i, ": ", a, " vs ", b);
      return false;
    }
  }
  return true;
}

std::vector<Value*> FedInputs(const Graph& g) {
  std::vector<Value*> ins;
  for (Value* v : g.inputs()) {
    if (!v->is_initializer()) ins.push_back(v);
  }
  return ins;
}

// Runs every data set of the test in `dir` with the fed inputs beyond the
// first made constants; "" when every output matches. `fast_plans` counts the
// data sets whose plan ran no reference kernel.
std::string RunWithConstantOperands(const fs::path& model_file, const fs::path& dir, bool fast, int* fast_plans) {
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    auto loaded = LoadModel(model_file.string());
    if (!loaded.ok()) return "load";
    Model& model = **loaded;
    Graph& g = *model.graph;
    std::vector<Value*> ins = FedInputs(g);
    std::vector<Value*> still_fed;
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
    for (Value* v : g.inputs()) {
      if (v->is_initializer() && std::find(ins.begin(), ins.end(), v) == ins.end()) still_fed.push_back(v);
    }
    g.set_inputs(still_fed);
    std::vector<TypeInfo> out_types;
    for (const Value* v : g.outputs()) out_types.push_back(v->type());
    absl::StatusOr<std::vector<RuntimeValue>> outs;
    CpuExecutor cpu(model);
    if (fast) {
      outs = cpu.Run(feeds);
      if (outs.ok()) {
        auto plan = cpu.PlanFor(feeds);
        if (plan.ok() && StatsOf(**plan).fallback_steps == 0) ++*fast_plans;
      }
    } else {
      outs = ReferenceExecutor(model).Run(feeds);
    }
    if (!outs.ok()) return std::string(outs.status().message());
    for (size_t i = 0; i < out_types.size(); ++i) {
      fs::path file = set.path() / absl::StrCat("output_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto want = LoadValueProtoFile(file.string(), out_types[i]);
      if (!want.ok() || !want->is_tensor() || !(*outs)[i].is_tensor()) return "non-tensor";
      std::string why;
      if (!OnnxClose((*outs)[i].tensor, want->tensor, &why)) return absl::StrCat("output ", i, ": ", why);
    }
  }
  return "";
}

TEST(BackendNodeTest, LoweringsMeetTheSuiteWithConstantOperands) {
  if (!fs::exists(kSuite)) GTEST_SKIP() << kSuite << " is absent";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kSuite)) {
    if (std::regex_match(e.path().filename().string(), kAccelerated)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, reference_fails = 0, fast_plans = 0, unused = 0;
  for (const fs::path& dir : dirs) {
    fs::path model = dir / "model.onnx";
    if (!RunWithConstantOperands(model, dir, /*fast=*/false, &unused).empty()) {
      ++reference_fails;
      continue;
    }
    std::string why = RunWithConstantOperands(model, dir, /*fast=*/true, &fast_plans);
    EXPECT_EQ(why, "") << dir.filename();
    passed += why.empty();
  }
  std::printf("fast executor: %d passed, %d plans without a reference kernel; %zu tests selected, %d not passed "
              "by the reference executor\n",
              passed, fast_plans, dirs.size(), reference_fails);
  EXPECT_GT(passed, 250);
  EXPECT_GE(fast_plans, 220);  // 233 when written; native kernels only add to it
}

}  // namespace
}  // namespace aic::cpu

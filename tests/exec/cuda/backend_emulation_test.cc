// The ONNX backend node tests of the ops the CUDA backend lowers, through the
// host stage and the host emulation of its kernels (no GPU needed): with the
// operands beyond the first made constants (as real models store weights,
// shapes and slice bounds), every test the reference executor passes must
// pass here too (|a-b| <= 1e-7 + 1e-3|b|), and a floor on the plans that need
// no host fallback catches a lowering that silently stops applying. Skips
// when the suite (Debian's libonnx-testdata) is not installed.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "absl/strings/str_cat.h"
#include "exec/cuda/internal.h"
#include "exec/cuda/plan.h"
#include "exec/reference/executor.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"

namespace aic::cuda {
namespace {

namespace fs = std::filesystem;
constexpr char kSuite[] = "/usr/share/libonnx-testdata/data/node";

// Test-name prefixes of the ops exec/cuda lowers (lowering.cc, lower_eltwise.cc).
const std::regex kLowered(
    "test_(conv|relu|leakyrelu|sigmoid|tanh|exp|log|sqrt|abs|elu|hardsigmoid|hardswish|clip|neg|pow|erf|"
    "reciprocal|floor|ceil|softplus|gelu|prelu|add|sub|mul|div|max|min|maxpool|averagepool|globalaveragepool|"
    "globalmaxpool|matmul|gemm|batchnorm|softmax|logsoftmax|layer_normalization|concat|reduce_mean|reduce_sum|"
    "reduce_max|reduce_min|transpose|slice|gather|expand|reshape|flatten|squeeze|unsqueeze|identity|dropout)(_.*)?");

bool OnnxClose(const Tensor& got, const Tensor& want, std::string* why) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    *why = absl::StrCat("dtype/shape ", DTypeName(got.dtype()), DimsToString(got.dims()), " vs ",
                        DTypeName(want.dtype()), DimsToString(want.dims()));
    return false;
  }
  if (got.dtype() == DType::kString || got.dtype() == DType::kBool) return got.BitwiseEquals(want);
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    if (!(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b))) {
      *why = absl::StrCat("element ", i, ": ", a, " vs ", b);
      return false;
    }
  }
  return true;
}

// Runs every data set in `dir` with fed operands beyond the first made
// constants, on the reference executor or (emulated) the CUDA plan; "" when
// every output matches. `device_plans` counts plans without a host fallback.
std::string RunTest(const fs::path& dir, bool cuda, int* device_plans) {
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
    g.set_inputs(still_fed);
    std::vector<TypeInfo> out_types;
    for (const Value* v : g.outputs()) out_types.push_back(v->type());
    absl::StatusOr<std::vector<RuntimeValue>> outs;
    if (cuda) {
      std::map<std::string, std::vector<int64_t>> shapes;
      for (const auto& [name, v] : feeds) {
        if (!v.is_tensor()) return "non-tensor input";
        shapes[name] = v.tensor.dims();
      }
      auto plan = BuildPlan(model, shapes);
      if (!plan.ok()) return std::string(plan.status().message());
      if (StatsOf(**plan).fallback_steps == 0) ++*device_plans;
      outs = Emulate(**plan, feeds);
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

TEST(CudaBackendEmulationTest, LoweringsMeetTheSuite) {
  if (!fs::exists(kSuite)) GTEST_SKIP() << kSuite << " is absent";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kSuite)) {
    if (std::regex_match(e.path().filename().string(), kLowered)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, reference_fails = 0, device_plans = 0, unused = 0;
  for (const fs::path& dir : dirs) {
    if (!RunTest(dir, /*cuda=*/false, &unused).empty()) {
      ++reference_fails;
      continue;
    }
    std::string why = RunTest(dir, /*cuda=*/true, &device_plans);
    EXPECT_EQ(why, "") << dir.filename();
    passed += why.empty();
  }
  std::printf(
      "cuda plans (emulated): %d passed, %d without a host fallback; %zu tests selected, %d not passed "
      "by the reference executor\n",
      passed, device_plans, dirs.size(), reference_fails);
  EXPECT_GT(passed, 250);
  EXPECT_GE(device_plans, 150);
}

}  // namespace
}  // namespace aic::cuda

// The ONNX backend node tests of the ops the fast executor accelerates, run
// through both executors: wherever the reference executor meets the ONNX
// rule (|a-b| <= 1e-7 + 1e-3|b|), the fast one must too. Skips when the
// suite (Debian's libonnx-testdata) is not installed.
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
    "squeeze|unsqueeze|identity|dropout)(_.*)?");

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

// "" when every output of every data set matches.
std::string RunWith(const Model& model, const fs::path& dir, bool fast) {
  const Graph& g = *model.graph;
  std::vector<const Value*> ins;
  for (const Value* v : g.inputs()) {
    if (!v->is_initializer()) ins.push_back(v);
  }
  ReferenceExecutor reference(model);
  CpuExecutor cpu(model);
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    std::map<std::string, RuntimeValue> feeds;
    for (size_t i = 0; i < ins.size(); ++i) {
      fs::path file = set.path() / absl::StrCat("input_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto v = LoadValueProtoFile(file.string(), ins[i]->type());
      if (!v.ok()) return "load";
      feeds[ins[i]->name()] = *v;
    }
    auto outs = fast ? cpu.Run(feeds) : reference.Run(feeds);
    if (!outs.ok()) return std::string(outs.status().message());
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      fs::path file = set.path() / absl::StrCat("output_", i, ".pb");
      if (!fs::exists(file)) continue;
      auto want = LoadValueProtoFile(file.string(), g.outputs()[i]->type());
      if (!want.ok() || !want->is_tensor() || !(*outs)[i].is_tensor()) return "non-tensor";
      std::string why;
      if (!OnnxClose((*outs)[i].tensor, want->tensor, &why)) return absl::StrCat("output ", i, ": ", why);
    }
  }
  return "";
}

TEST(BackendNodeTest, FastExecutorPassesWhereReferenceDoes) {
  if (!fs::exists(kSuite)) GTEST_SKIP() << kSuite << " is absent";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kSuite)) {
    if (std::regex_match(e.path().filename().string(), kAccelerated)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, reference_fails = 0;
  for (const fs::path& dir : dirs) {
    auto model = LoadModel((dir / "model.onnx").string());
    if (!model.ok()) continue;
    if (!RunWith(**model, dir, /*fast=*/false).empty()) {
      ++reference_fails;
      continue;
    }
    std::string why = RunWith(**model, dir, /*fast=*/true);
    EXPECT_EQ(why, "") << dir.filename();
    passed += why.empty();
  }
  std::printf("fast executor: %d passed; %zu tests selected, %d not passed by the reference executor\n", passed,
              dirs.size(), reference_fails);
  EXPECT_GT(passed, 100);
}

}  // namespace
}  // namespace aic::cpu

// The ONNX backend node tests of the ops the CUDA backend lowers, through the
// host stage and the host emulation of its kernels (no GPU needed): with the
// operands beyond the first made constants (as real models store weights,
// shapes and slice bounds), every test the reference executor passes must
// pass here too (|a-b| <= 1e-7 + 1e-3|b|), and a floor on the plans that need
// no host fallback catches a lowering that silently stops applying. Skips
// when the suite (Debian's libonnx-testdata) is not installed.
#include <filesystem>
#include <regex>

#include "exec/cuda/internal.h"
#include "exec/cuda/plan.h"
#include "exec/reference/executor.h"
#include "gtest/gtest.h"
#include "tests/testing/backend_suite.h"

namespace aic::cuda {
namespace {

namespace fs = std::filesystem;

// Test-name prefixes of the ops exec/cuda lowers (lowering.cc, lower_eltwise.cc).
const std::regex kLowered(
    "test_(conv|relu|leakyrelu|sigmoid|tanh|exp|log|sqrt|abs|elu|hardsigmoid|hardswish|clip|neg|pow|erf|"
    "reciprocal|floor|ceil|softplus|gelu|prelu|add|sub|mul|div|max|min|maxpool|averagepool|globalaveragepool|"
    "globalmaxpool|matmul|gemm|batchnorm|softmax|logsoftmax|layer_normalization|concat|reduce_mean|reduce_sum|"
    "reduce_max|reduce_min|transpose|slice|gather|expand|reshape|flatten|squeeze|unsqueeze|identity|dropout)(_.*)?");

TEST(CudaBackendEmulationTest, LoweringsMeetTheSuite) {
  if (!fs::exists(testing::kBackendNodeSuite)) GTEST_SKIP() << testing::kBackendNodeSuite << " is absent";
  std::vector<fs::path> dirs = testing::SuiteTestsMatching(kLowered);
  int passed = 0, reference_fails = 0, device_plans = 0;
  testing::RunModelFn reference = [](const Model& model, const std::map<std::string, RuntimeValue>& feeds) {
    return ReferenceExecutor(model).Run(feeds);
  };
  testing::RunModelFn emulated = [&](const Model& model, const std::map<std::string, RuntimeValue>& feeds)
      -> absl::StatusOr<std::vector<RuntimeValue>> {
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& [name, v] : feeds) {
      if (!v.is_tensor()) return absl::UnimplementedError("non-tensor input");
      shapes[name] = v.tensor.dims();
    }
    AIC_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, BuildPlan(model, shapes));
    if (StatsOf(*plan).fallback_steps == 0) ++device_plans;
    return Emulate(*plan, feeds);
  };
  for (const fs::path& dir : dirs) {
    if (!testing::RunSuiteTestWithConstantOperands(dir, reference).empty()) {
      ++reference_fails;
      continue;
    }
    std::string why = testing::RunSuiteTestWithConstantOperands(dir, emulated);
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

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
#include <filesystem>
#include <regex>

#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "gtest/gtest.h"
#include "tests/testing/backend_suite.h"

namespace aic::cpu {
namespace {

namespace fs = std::filesystem;

// Test-name prefixes of the ops with fast kernels (see exec/cpu/lowering.cc).
const std::regex kAccelerated(
    "test_(conv|convtranspose|relu|leakyrelu|sigmoid|tanh|exp|log|sqrt|abs|elu|hardsigmoid|hardswish|clip|neg|pow|"
    "add|sub|mul|div|max|min|maxpool|averagepool|globalaveragepool|globalmaxpool|matmul|gemm|batchnorm|softmax|"
    "logsoftmax|concat|reduce_mean|reduce_sum|reduce_max|reduce_min|transpose|slice|resize|reshape|flatten|"
    "squeeze|unsqueeze|identity|dropout|"
    // our own kernels (exec/cpu/ops_native*.cc)
    "erf|reciprocal|floor|ceil|round|sin|cos|softplus|softsign|sign|gelu|prelu|where|equal|less|greater|"
    "less_equal|greater_equal|and|or|xor|layer_normalization|gather|pad|constant_pad|edge_pad|reflect_pad|cast|"
    "upsample|lstm|gru|rnn|simple_rnn)(_.*)?");

TEST(BackendNodeTest, LoweringsMeetTheSuiteWithConstantOperands) {
  if (!fs::exists(testing::kBackendNodeSuite)) GTEST_SKIP() << testing::kBackendNodeSuite << " is absent";
  std::vector<fs::path> dirs = testing::SuiteTestsMatching(kAccelerated);
  int passed = 0, reference_fails = 0, fast_plans = 0;
  testing::RunModelFn reference = [](const Model& model, const std::map<std::string, RuntimeValue>& feeds) {
    return ReferenceExecutor(model).Run(feeds);
  };
  testing::RunModelFn fast = [&](const Model& model, const std::map<std::string, RuntimeValue>& feeds) {
    CpuExecutor cpu(model);
    auto outs = cpu.Run(feeds);
    if (outs.ok()) {
      auto plan = cpu.PlanFor(feeds);
      if (plan.ok() && StatsOf(**plan).fallback_steps == 0) ++fast_plans;
    }
    return outs;
  };
  for (const fs::path& dir : dirs) {
    if (!testing::RunSuiteTestWithConstantOperands(dir, reference).empty()) {
      ++reference_fails;
      continue;
    }
    std::string why = testing::RunSuiteTestWithConstantOperands(dir, fast);
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

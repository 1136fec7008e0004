// The CUDA executor on a device: every small graph and the testdata models
// against the reference executor on fresh random inputs, CUDA Graph replay
// picking up new inputs, the host fallback inside a device plan, and event
// timing. Each test skips with the reason when no CUDA device is usable.
#include <filesystem>

#include "exec/cuda/cuda_status.h"
#include "exec/cuda/plan.h"
#include "exec/reference/executor.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"
#include "tests/exec/cuda/test_models.h"

namespace aic::cuda {
namespace {

using testing::Close;
using testing::RandomTensor;

#define SKIP_WITHOUT_GPU()                            \
  do {                                                \
    absl::Status probe = ProbeDevice();               \
    if (!probe.ok()) GTEST_SKIP() << probe.message(); \
  } while (0)

// Runs `feeds` through the executor and the reference; true when all outputs agree.
void ExpectMatchesReference(CudaExecutor& exec, const Model& model, const std::map<std::string, RuntimeValue>& feeds,
                            double tol) {
  auto want = ReferenceExecutor(model).Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = exec.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_TRUE(Close((*got)[i].tensor, (*want)[i].tensor, tol, tol)) << "output " << i;
  }
}

std::map<std::string, RuntimeValue> Refresh(const std::map<std::string, RuntimeValue>& feeds, uint32_t seed) {
  std::map<std::string, RuntimeValue> out;
  for (const auto& [name, v] : feeds) out[name] = RuntimeValue(RandomTensor(v.tensor.dims(), seed++));
  return out;
}

TEST(CudaGpuTest, SmallGraphsMatchReferenceAndReplay) {
  SKIP_WITHOUT_GPU();
  for (auto& c : testing::SmallCases(11)) {
    SCOPED_TRACE(c.name);
    CudaExecutor exec(*c.model);
    ExpectMatchesReference(exec, *c.model, c.feeds, c.tol);
    // Second run: replays the captured graph with new inputs.
    ExpectMatchesReference(exec, *c.model, Refresh(c.feeds, 77), c.tol);
    auto plan = exec.PlanFor(c.feeds);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(UsesCudaGraph(**plan), c.name != "fallback") << StatsOf(**plan).graph_blocker;
  }
}

TEST(CudaGpuTest, WithoutGraphsOrFusionOrCudnnToo) {
  SKIP_WITHOUT_GPU();
  for (int variant = 0; variant < 3; ++variant) {
    CudaOptions options;
    options.use_cuda_graph = variant != 0;
    options.fuse_epilogues = variant != 1;
    options.use_cudnn = variant != 2;
    for (auto& c : testing::SmallCases(21)) {
      SCOPED_TRACE(c.name + " variant " + std::to_string(variant));
      CudaExecutor exec(*c.model, options);
      ExpectMatchesReference(exec, *c.model, c.feeds, c.tol);
    }
  }
}

std::unique_ptr<Model> Load(const std::string& name) {
  auto m = LoadModel(std::string(AIC_SOURCE_DIR) + "/testdata/" + name);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(CudaGpuTest, TestdataModelsMatchReference) {
  SKIP_WITHOUT_GPU();
  struct M {
    const char* file;
    const char* input;
    std::vector<int64_t> dims;
  };
  for (const M& m : {M{"seed_mlp.onnx", "input", {1, 10}}, M{"encoder.onnx", "x", {1, 128, 256}},
                     M{"encoder.onnx", "x", {3, 128, 256}}, M{"resnet_cnn.onnx", "x", {1, 3, 224, 224}}}) {
    SCOPED_TRACE(std::string(m.file) + DimsToString(m.dims));
    auto model = Load(m.file);
    ASSERT_NE(model, nullptr);
    CudaExecutor exec(*model);
    for (uint32_t seed : {1u, 2u}) {
      ExpectMatchesReference(exec, *model, {{m.input, RuntimeValue(RandomTensor(m.dims, seed))}}, 2e-3);
    }
    auto plan = exec.PlanFor({{m.input, RuntimeValue(RandomTensor(m.dims, 1))}});
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(UsesCudaGraph(**plan)) << StatsOf(**plan).graph_blocker;
  }
}

TEST(CudaGpuTest, TimeRunsGivesOnePositiveTimePerRun) {
  SKIP_WITHOUT_GPU();
  auto model = Load("seed_mlp.onnx");
  ASSERT_NE(model, nullptr);
  auto plan = Compile(*model, {{"input", {1, 10}}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::map<std::string, RuntimeValue>> sets;
  for (uint32_t s = 0; s < 3; ++s) sets.push_back({{"input", RuntimeValue(RandomTensor({1, 10}, s))}});
  auto ms = TimeRuns(**plan, sets, 2, 5);
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_EQ(ms->size(), 5u);
  for (double v : *ms) EXPECT_GT(v, 0.0);
}

TEST(CudaNoGpuTest, CompileWithoutADeviceIsACleanError) {
  absl::Status probe = ProbeDevice();
  if (probe.ok()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(probe.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(probe.message()).rfind("no CUDA device: ", 0), 0u) << probe.message();
  auto model = Load("seed_mlp.onnx");
  ASSERT_NE(model, nullptr);
  auto plan = Compile(*model, {{"input", {1, 10}}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  CudaExecutor exec(*model);
  EXPECT_FALSE(exec.Run({{"input", RuntimeValue(RandomTensor({1, 10}, 1))}}).ok());
}

}  // namespace
}  // namespace aic::cuda

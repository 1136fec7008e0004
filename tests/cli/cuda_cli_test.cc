// `--device cuda` at the command line: without a GPU (or in a build without
// the CUDA backend) `run` and `bench` fail with one line and exit code 2;
// with a GPU they run. Which case applies is decided by what the binary says.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/testing/run_cli.h"

namespace {

using Result = aic::testing::CliResult;

Result RunCli(const std::string& args) { return aic::testing::RunAicOnnx(args); }

std::string SeedMlp() { return std::string(AIC_SOURCE_DIR) + "/testdata/seed_mlp.onnx"; }

TEST(CudaCliTest, RunWithoutAGpuFailsWithOneLine) {
  std::string out_dir = (std::filesystem::temp_directory_path() / "aic_cuda_cli_test").string();
  Result r = RunCli("run " + SeedMlp() + " --random --device cuda --out " + out_dir);
  if (r.code == 0) GTEST_SKIP() << "a CUDA device is present: run succeeded";
  EXPECT_EQ(r.code, 2) << r.out;
#ifdef AIC_HAVE_CUDA
  EXPECT_NE(r.out.find("no CUDA device: "), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("not available in this build"), std::string::npos) << r.out;
#endif
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CudaCliTest, BenchWithoutAGpuFailsWithOneLine) {
  Result r = RunCli("bench " + SeedMlp() + " --device cuda --iters 3");
  if (r.code == 0) GTEST_SKIP() << "a CUDA device is present: bench succeeded";
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CudaCliTest, UnknownDeviceIsUsageError) {
  EXPECT_EQ(RunCli("run " + SeedMlp() + " --random --device tpu").code, 2);
  EXPECT_EQ(RunCli("bench " + SeedMlp() + " --device tpu").code, 2);
}

}  // namespace

// `opt --apply`: the approximate transformations through the command line:
// what is printed and written, --stats, refusal past the budget, and bad
// usage (exit 2, one line, nothing written).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>

#include "onnx_io/load.h"
#include "tests/testing/run_cli.h"

namespace {

using aic::testing::RunAicOnnx;

std::string Testdata(const std::string& name) { return std::string(AIC_SOURCE_DIR) + "/testdata/" + name; }

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("aic_opt_apply_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int64_t ParamCount(const std::string& path) {
  auto m = aic::LoadModel(path);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return -1;
  int64_t n = 0;
  for (const aic::Value* v : (*m)->graph->initializers()) n += v->initializer()->num_elements();
  return n;
}

TEST(OptApplyCli, LowRankKeptWithinTheBudgetIsWrittenAndReported) {
  std::string dir = TempDir("kept");
  auto r = RunAicOnnx("opt " + Testdata("resnet_cnn.onnx") + " " + dir + "/out.onnx --apply low-rank=0.9 " +
                      "--max-error 10 --calib random:2 --no-latency --stats " + dir + "/stats.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("approximations: on 2 random samples at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(generated, not real data)"), std::string::npos);
  EXPECT_NE(r.out.find("kept    low-rank Conv"), std::string::npos) << r.out;
  std::string stats = ReadAll(dir + "/stats.json");
  EXPECT_NE(stats.find("\"approximations\""), std::string::npos);
  EXPECT_NE(stats.find("\"kind\": \"low-rank\""), std::string::npos) << stats;
  auto plain = RunAicOnnx("opt " + Testdata("resnet_cnn.onnx") + " " + dir + "/plain.onnx --no-verify");
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_LT(ParamCount(dir + "/out.onnx"), ParamCount(dir + "/plain.onnx"));
  // The written model is standard ONNX that runs.
  auto run = RunAicOnnx("run " + dir + "/out.onnx --random --out " + dir + "/y");
  EXPECT_EQ(run.code, 0) << run.out;
}

TEST(OptApplyCli, RefusedPastTheBudgetWritesTheExactOptimization) {
  std::string dir = TempDir("refused");
  auto r = RunAicOnnx("opt " + Testdata("resnet_cnn.onnx") + " " + dir + "/out.onnx --apply low-rank=1 " +
                      "--max-error 1e-6 --calib random:2 --no-latency");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("refused low-rank"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 kept of"), std::string::npos) << r.out;
  auto plain = RunAicOnnx("opt " + Testdata("resnet_cnn.onnx") + " " + dir + "/plain.onnx --no-verify");
  ASSERT_EQ(plain.code, 0);
  EXPECT_EQ(ParamCount(dir + "/out.onnx"), ParamCount(dir + "/plain.onnx"));
}

// --html shows what the rewriter changed (traced before --apply replaced the
// graph): its new nodes are marked, not the whole graph shown as unchanged.
TEST(OptApplyCli, HtmlPageIsTheRewritersWithApply) {
  std::string dir = TempDir("html");
  auto r = RunAicOnnx("opt " + Testdata("resnet_cnn.onnx") + " " + dir + "/out.onnx --apply low-rank=0.9 " +
                      "--max-error 10 --calib random:2 --no-latency --html " + dir + "/changes.html");
  ASSERT_EQ(r.code, 0) << r.out;
  std::string page = ReadAll(dir + "/changes.html");
  EXPECT_NE(page.find("\"n k-new\""), std::string::npos);  // a node the rewriter made (not the legend's CSS)
}

TEST(OptApplyCli, BadUsageIsOneLineExitTwoAndWritesNothing) {
  std::string dir = TempDir("usage");
  const std::string model = Testdata("seed_mlp.onnx");
  for (const std::string& flags :
       {std::string("--apply shrink"), std::string("--apply low-rank=1.5"), std::string("--apply low-rank=0"),
        std::string("--max-error 0.1"), std::string("--apply prune-dead --max-error much"),
        std::string("--apply prune-dead --min-activation 1"), std::string("--apply merge-linear --calib random:0"),
        "--apply merge-linear --calib " + dir + "/no_such_dir"}) {
    auto r = RunAicOnnx("opt " + model + " " + dir + "/out.onnx " + flags);
    EXPECT_EQ(r.code, 2) << flags << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << flags << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.onnx")) << flags;
  }
}

}  // namespace

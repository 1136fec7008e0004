// The command-line contract: exit codes and one-line errors naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graph/builder.h"
#include "onnx_io/save.h"

namespace {

struct Result {
  int code;
  std::string out;  // stdout and stderr
};

Result RunCli(const std::string& args) {
  std::string cmd = std::string(AIC_BINARY_DIR) + "/aic-onnx " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

std::string Testdata(const std::string& name) {
  return std::string(AIC_SOURCE_DIR) + "/testdata/" + name;
}

TEST(CliTest, HelpExitsZero) {
  EXPECT_EQ(RunCli("--help").code, 0);
  EXPECT_EQ(RunCli("info --help").code, 0);
  EXPECT_EQ(RunCli("run --help").code, 0);
}

TEST(CliTest, BadUsageExitsTwo) {
  Result r = RunCli("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("unknown command"), std::string::npos);
  EXPECT_EQ(RunCli("info").code, 2);
  EXPECT_EQ(RunCli("info " + Testdata("seed_mlp.onnx") + " --bogus").code, 2);
}

TEST(CliTest, InfoShowsTheSeedMlp) {
  Result r = RunCli("info " + Testdata("seed_mlp.onnx"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("input: float[1, 10]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Gemm"), std::string::npos) << r.out;
}

TEST(CliTest, BadModelIsOneLineNamingTheFile) {
  std::string path = ::testing::TempDir() + "/garbage.onnx";
  std::ofstream(path) << "this is not a model";
  Result r = RunCli("info " + path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(path), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CliTest, RunWritesOutputsAsNpy) {
  std::string dir = ::testing::TempDir() + "/run_out";
  std::filesystem::remove_all(dir);
  Result r = RunCli("run " + Testdata("seed_mlp.onnx") + " --random --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/output.npy"));
  Result missing = RunCli("run " + Testdata("seed_mlp.onnx"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.out.find("not given"), std::string::npos) << missing.out;
}

TEST(CliTest, RunDumpsIntermediates) {
  std::string dir = ::testing::TempDir() + "/dump";
  std::filesystem::remove_all(dir);
  Result r = RunCli("run " + Testdata("seed_mlp_matmul.onnx") + " --random --out " + dir +
                 "/o --dump-intermediates " + dir + "/i");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/i/relu_out.npy"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/i/fc1_mm.npy"));
}

// `run --device cpu` executes what the rewriter makes: the encoder's GELUs,
// written out with Erf in the file, run as post-ops of their MatMuls; with
// --no-opt the same command runs the graph as loaded (Erf steps).
TEST(CliTest, RunOnCpuExecutesTheFusedGraph) {
  std::string dir = ::testing::TempDir() + "/run_fused";
  Result fused = RunCli("run " + Testdata("encoder.onnx") + " --random --shape x=1,128,256 --device cpu --plan --out " +
                        dir);
  ASSERT_EQ(fused.code, 0) << fused.out;
  EXPECT_NE(fused.out.find("graph: cpu, -O2: "), std::string::npos) << fused.out;
  EXPECT_NE(fused.out.find("fuse_gelu 6"), std::string::npos) << fused.out;
  EXPECT_NE(fused.out.find(",gelu]"), std::string::npos) << fused.out;  // a MatMul's post-op
  EXPECT_EQ(fused.out.find("Erf"), std::string::npos) << fused.out;
  Result as_loaded = RunCli("run " + Testdata("encoder.onnx") + " --random --shape x=1,128,256 --device cpu --no-opt "
                            "--plan --out " + dir);
  ASSERT_EQ(as_loaded.code, 0) << as_loaded.out;
  EXPECT_NE(as_loaded.out.find("graph: cpu, -O0: "), std::string::npos) << as_loaded.out;
  EXPECT_NE(as_loaded.out.find("Erf"), std::string::npos) << as_loaded.out;
}

// A feed that contradicts the declared input is refused before anything runs,
// naming the input, what the model declares and what was given.
TEST(CliTest, RunRefusesAFeedOfTheWrongShape) {
  Result r = RunCli("run " + Testdata("encoder.onnx") + " --random --shape x=1,64,256 --device cpu --out " +
                    ::testing::TempDir() + "/run_bad");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("input 'x': expected float[batch, 128, 256], got float[1, 64, 256]"), std::string::npos)
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace

// Two models that part at one node: verify --bisect names it and the inputs
// that still agree.
TEST(CliTest, VerifyBisectNamesTheFirstDivergingNode) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/bisect_test";
  std::filesystem::create_directories(dir);
  auto build = [&](float scale, const std::string& file) {
    aic::GraphBuilder b;
    aic::Value* x = b.Input("x", aic::DType::kFloat, {2, 3});
    aic::Value* r = b.Op("Relu", {x}, {}, "r");
    aic::Value* c = b.Constant("c", aic::Tensor::Scalar<float>(scale));
    aic::Value* scaled = b.Op("Mul", {r, c}, {}, "scaled");
    aic::Value* one = b.Constant("one", aic::Tensor::Scalar<float>(1));
    b.Output(b.Op("Add", {scaled, one}, {}, "y"));
    ASSERT_TRUE(aic::SaveModel(*b.Build(17), dir + "/" + file).ok());
  };
  build(2, "a.onnx");
  build(3, "b.onnx");
  Result parted = RunCli("verify " + dir + "/a.onnx " + dir + "/b.onnx --bisect");
  EXPECT_EQ(parted.code, 1) << parted.out;
  EXPECT_NE(parted.out.find("first divergence: Mul"), std::string::npos) << parted.out;
  EXPECT_NE(parted.out.find("-> 'scaled'"), std::string::npos) << parted.out;
  EXPECT_NE(parted.out.find("its inputs that agree: 'r'\n"), std::string::npos) << parted.out;
  EXPECT_NE(parted.out.find("differ already (constants or graph inputs): 'c'"), std::string::npos) << parted.out;
  Result same = RunCli("verify " + dir + "/a.onnx " + dir + "/a.onnx --bisect");
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("3 values in common"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("no value in common differs"), std::string::npos) << same.out;
}

// `aic-onnx bench --profile`: after the timing, a per-step table (kind, op,
// steps, ms/run, share) over the timed runs and the slowest steps; nothing
// extra without the flag.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

std::string RunCli(const std::string& args, int* code) {
  std::string cmd = std::string(AIC_BINARY_DIR) + "/aic-onnx " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  *code = WEXITSTATUS(pclose(p));
  return out;
}

std::string Testdata(const std::string& name) { return std::string(AIC_SOURCE_DIR) + "/testdata/" + name; }

TEST(BenchProfileTest, PrintsATableByStepKindAndOp) {
  int code = -1;
  std::string out = RunCli("bench " + Testdata("encoder.onnx") + " --shape x=1,128,256 --iters 3 --warmup 1 "
                           "--threads 1 --profile", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("profile over 3 runs"), std::string::npos) << out;
  EXPECT_NE(out.find("ms/run"), std::string::npos) << out;
  // The encoder's heavy kinds appear as rows, and its slowest step is named.
  EXPECT_NE(out.find("matmul       MatMul"), std::string::npos) << out;
  EXPECT_NE(out.find("layernorm    LayerNormalization"), std::string::npos) << out;
  EXPECT_NE(out.find("slowest steps:"), std::string::npos) << out;
  EXPECT_NE(out.find("%"), std::string::npos) << out;
}

TEST(BenchProfileTest, NoTableWithoutTheFlagOrWithJson) {
  int code = -1;
  std::string plain = RunCli("bench " + Testdata("seed_mlp.onnx") + " --iters 2 --warmup 0", &code);
  ASSERT_EQ(code, 0) << plain;
  EXPECT_EQ(plain.find("profile over"), std::string::npos) << plain;
  std::string json = RunCli("bench " + Testdata("seed_mlp.onnx") + " --iters 2 --warmup 0 --json --profile", &code);
  ASSERT_EQ(code, 0) << json;
  EXPECT_EQ(json.find("profile over"), std::string::npos) << json;
  EXPECT_EQ(json.front(), '{') << json;
}

TEST(BenchProfileTest, ProfilesTheReferenceDeviceNot) {
  int code = -1;
  std::string out = RunCli("bench " + Testdata("seed_mlp.onnx") + " --iters 2 --warmup 0 --device reference --profile",
                           &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out.find("profile over"), std::string::npos) << out;
}

}  // namespace

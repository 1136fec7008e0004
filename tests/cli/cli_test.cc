// The command-line contract: exit codes and one-line errors naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/testing/run_cli.h"
#include "graph/builder.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "onnx_io/save.h"

namespace {

using Result = aic::testing::CliResult;

Result RunCli(const std::string& args) { return aic::testing::RunAicOnnx(args); }

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

// Every output kind gets a file numpy reads: strings as <U arrays, bfloat16
// (no numpy dtype) as an exact TensorProto .pb plus a float32 .npy, a
// sequence as a folder of numbered files.
TEST(CliTest, RunWritesStringsBfloat16AndSequences) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/run_kinds_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  aic::GraphBuilder b;
  aic::Value* x = b.Input("x", aic::DType::kFloat, {2, 3});
  b.Output(b.Op("Cast", {x}, {aic::Attribute::Int("to", 8)}, "text"));
  b.Output(b.Op("Cast", {x}, {aic::Attribute::Int("to", 16)}, "half"));
  b.Output(b.Op("SplitToSequence", {x}, {aic::Attribute::Int("axis", 0)}, "rows"));
  auto m = b.Build(17);
  ASSERT_TRUE(aic::SaveModel(*m, dir + "/kinds.onnx").ok());
  aic::Tensor feed = aic::Tensor::FromVector<float>({1.5f, -2.f, 0.25f, 3.f, 100.f, -0.5f}, {2, 3});
  ASSERT_TRUE(aic::WriteNpy(feed, dir + "/x.npy").ok());
  Result r = RunCli("run " + dir + "/kinds.onnx --input x=" + dir + "/x.npy --out " + dir + "/out");
  ASSERT_EQ(r.code, 0) << r.out;

  auto text = aic::ReadNpy(dir + "/out/text.npy");
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_EQ(text->dtype(), aic::DType::kString);
  EXPECT_EQ(text->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(text->strings()[0], "1.5");
  EXPECT_EQ(text->strings()[4], "100.0");

  auto exact = aic::LoadValueProtoFile(dir + "/out/half.pb", aic::TypeInfo::Tensor(aic::DType::kBFloat16, aic::Shape::FromValues({2, 3})));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->tensor.dtype(), aic::DType::kBFloat16);
  auto widened = aic::ReadNpy(dir + "/out/half.npy");
  ASSERT_TRUE(widened.ok()) << widened.status();
  ASSERT_EQ(widened->dtype(), aic::DType::kFloat);
  EXPECT_EQ(widened->data<float>()[1], -2.f);  // exact in bfloat16

  for (int k = 0; k < 2; ++k) {
    auto row = aic::ReadNpy(dir + "/out/rows/" + std::to_string(k) + ".npy");
    ASSERT_TRUE(row.ok()) << row.status();
    EXPECT_EQ(row->dims(), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(row->data<float>()[0], k == 0 ? 1.5f : 3.f);
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/rows/2.npy"));
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
  EXPECT_NE(fused.out.find("+ bias + [gelu]"), std::string::npos) << fused.out;  // the MatMul's bias and post-op
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

// An index past its table stops the run with one line naming the node, the
// index's value and where it is among the indices (the CPU Gather kernel
// reports the position; the message had printed it as the value).
TEST(CliTest, RunNamesAGatherIndexOutOfRange) {
  std::string dir = ::testing::TempDir() + "/gather_bad";
  std::filesystem::create_directories(dir);
  aic::GraphBuilder b;
  aic::Value* ids = b.Input("ids", aic::DType::kInt64, {3});
  aic::Value* table = b.Constant("table", aic::Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  b.Output(b.Op("Gather", {table, ids}, {}, "rows"));
  b.last_node()->name = "lookup";
  ASSERT_TRUE(aic::SaveModel(*b.Build(17), dir + "/gather.onnx").ok());
  ASSERT_TRUE(aic::WriteNpy(aic::Tensor::FromVector<int64_t>({0, 1, 7}, {3}), dir + "/ids.npy").ok());
  Result r = RunCli("run " + dir + "/gather.onnx --input ids=" + dir + "/ids.npy --device cpu --out " + dir + "/out");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("Gather 'lookup': index 7 (element 2 of the indices) is out of range for axis of 2"),
            std::string::npos)
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

// x: [batch, 3, 8] -> Relu -> y, for the --fix-shape / --fix-dim / output path tests.
std::string SymbolicBatchModel(const std::string& dir) {
  std::filesystem::create_directories(dir);
  aic::GraphBuilder b;
  aic::Value* x = b.Input("x", aic::DType::kFloat, {aic::Dim::Symbol("batch"), 3, 8});
  aic::Value* y = b.Op("Relu", {x}, {}, "y");
  y->set_type(aic::TypeInfo::Tensor(aic::DType::kFloat, aic::Shape({aic::Dim::Symbol("batch"), 3, 8})));
  b.Output(y);
  std::string path = dir + "/relu.onnx";
  EXPECT_TRUE(aic::SaveModel(*b.Build(17), path).ok());
  return path;
}

std::string DimsOf(const aic::Value* v) { return v->type().shape.ToString(); }

TEST(CliTest, OptFixShapeIsCheckedAndFixesTheOutputs) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/fix_shape_test";
  std::filesystem::remove_all(dir);
  std::string model = SymbolicBatchModel(dir);
  std::string out = dir + "/out.onnx";
  Result rank = RunCli("opt " + model + " " + out + " --fix-shape x=1,3");
  EXPECT_EQ(rank.code, 2);
  EXPECT_NE(rank.out.find("input 'x' has rank 3 ([batch, 3, 8]), 2 dims given"), std::string::npos) << rank.out;
  Result fixed_dim = RunCli("opt " + model + " " + out + " --fix-shape x=1,4,8");
  EXPECT_EQ(fixed_dim.code, 2);
  EXPECT_NE(fixed_dim.out.find("input 'x' dim 1 is 3 in the model"), std::string::npos) << fixed_dim.out;
  EXPECT_FALSE(std::filesystem::exists(out));

  Result keep = RunCli("opt " + model + " " + out + " --fix-shape x=2,?,-1");
  ASSERT_EQ(keep.code, 0) << keep.out;
  auto m = aic::LoadModel(out);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(DimsOf((*m)->graph->inputs()[0]), "[2, 3, 8]");
  EXPECT_EQ(DimsOf((*m)->graph->outputs()[0]), "[2, 3, 8]");  // no longer [batch, 3, 8]

  Result by_name = RunCli("opt " + model + " " + out + " --fix-dim batch=5");
  ASSERT_EQ(by_name.code, 0) << by_name.out;
  m = aic::LoadModel(out);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(DimsOf((*m)->graph->inputs()[0]), "[5, 3, 8]");
  EXPECT_EQ(DimsOf((*m)->graph->outputs()[0]), "[5, 3, 8]");
  Result unknown = RunCli("opt " + model + " " + out + " --fix-dim seq=5");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.out.find("no graph input has a dim named 'seq'"), std::string::npos) << unknown.out;
}

TEST(CliTest, OptOutputPaths) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/output_path_test";
  std::filesystem::remove_all(dir);
  std::string model = SymbolicBatchModel(dir);
  // `-`: the model on stdout, the summary on stderr, no file named "-".
  std::string piped = dir + "/piped.onnx";
  std::string cmd = "cd " + dir + " && " + std::string(AIC_BINARY_DIR) + "/aic-onnx opt " + model + " - > " + piped +
                    " 2> " + dir + "/summary.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(dir + "/-"));
  EXPECT_TRUE(aic::LoadModel(piped).ok());
  std::ifstream summary(dir + "/summary.txt");
  std::string first;
  std::getline(summary, first);
  EXPECT_NE(first.find("-> -"), std::string::npos) << first;
  // A symlink stays one; its target gets the model.
  std::string target = dir + "/target.onnx", link = dir + "/link.onnx";
  std::ofstream(target) << "old";
  std::filesystem::create_symlink(target, link);
  Result via_link = RunCli("opt " + model + " " + link);
  ASSERT_EQ(via_link.code, 0) << via_link.out;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(aic::LoadModel(target).ok());
  // A device is written, not replaced.
  EXPECT_EQ(RunCli("opt " + model + " /dev/null").code, 0);
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  // A missing folder fails before any work, naming the path once.
  std::string missing = dir + "/no/such/out.onnx";
  Result r = RunCli("opt " + model + " " + missing);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(missing + ": no folder"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(missing, r.out.find(missing) + 1), std::string::npos) << r.out;
  Result folder = RunCli("opt " + model + " " + dir);
  EXPECT_EQ(folder.code, 2);
  EXPECT_NE(folder.out.find(dir + ": is a folder"), std::string::npos) << folder.out;
}

TEST(CliTest, VersionNamesTheReleaseAndTheTree) {
  Result r = RunCli("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("aic-onnx 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(git "), std::string::npos) << r.out;
  std::string dir = std::string(AIC_BINARY_DIR) + "/version_test";
  std::string model = SymbolicBatchModel(dir);
  ASSERT_EQ(RunCli("opt " + model + " " + dir + "/o.onnx --stats " + dir + "/stats.json").code, 0);
  std::ifstream f(dir + "/stats.json");
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"version\": \"0."), std::string::npos) << json;
}

// What downstream tools read survives opt: node names (a fused node its
// root's) and every inferred shape as value_info, unless --no-shapes.
TEST(CliTest, OptKeepsNodeNamesAndWritesShapes) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/names_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string out = dir + "/encoder.opt.onnx";
  ASSERT_EQ(RunCli("opt " + Testdata("encoder.onnx") + " " + out + " --no-verify").code, 0);
  auto original = aic::LoadModel(Testdata("encoder.onnx"));
  auto optimized = aic::LoadModel(out);
  ASSERT_TRUE(original.ok() && optimized.ok());
  std::set<std::string> names;
  for (const auto& n : (*original)->graph->nodes()) names.insert(n->name);
  int kept = 0, typed = 0;
  for (const auto& n : (*optimized)->graph->nodes()) kept += names.count(n->name) ? 1 : 0;
  for (const auto& v : (*optimized)->graph->values()) typed += v->in_value_info ? 1 : 0;
  EXPECT_EQ(kept, static_cast<int>((*optimized)->graph->num_nodes()));
  EXPECT_EQ(typed, static_cast<int>((*optimized)->graph->num_nodes()) - 1);  // all but the graph output
  ASSERT_EQ(RunCli("opt " + Testdata("encoder.onnx") + " " + out + " --no-verify --no-shapes").code, 0);
  optimized = aic::LoadModel(out);
  ASSERT_TRUE(optimized.ok());
  typed = 0;
  for (const auto& v : (*optimized)->graph->values()) typed += v->in_value_info ? 1 : 0;
  EXPECT_EQ(typed, 0);
}

// A value whose element type nothing knows (the output of a custom-domain op,
// reshaped) gets no value_info: elem_type 0 is invalid and ONNX Runtime refuses
// the model (found on skl2onnx's MLPClassifier: ai.onnx.ml's ArrayFeatureExtractor).
TEST(CliTest, OptWritesNoValueInfoWithoutAnElementType) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/untyped_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  aic::GraphBuilder b;
  aic::Value* x = b.Input("x", aic::DType::kFloat, {2, 3});
  aic::Value* custom = b.OpN("Mystery", {x}, 1, {}, "com.example")[0];
  aic::Value* flat = b.Op("Reshape", {custom, b.Constant("shape", aic::Tensor::FromVector<int64_t>({-1}, {1}))});
  b.Output(b.Op("Identity", {flat}, {}, "y"));
  auto m = b.Build(17);
  m->opset_imports.push_back({"com.example", 1});
  ASSERT_TRUE(aic::SaveModel(*m, dir + "/in.onnx").ok());
  Result r = RunCli("opt " + dir + "/in.onnx " + dir + "/out.onnx --no-verify");
  ASSERT_EQ(r.code, 0) << r.out;
  auto optimized = aic::LoadModel(dir + "/out.onnx");
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  for (const auto& v : (*optimized)->graph->values()) {
    if (v->in_value_info) {
      EXPECT_NE(v->dtype(), aic::DType::kUndefined) << v->name();
    }
  }
}

// opt's op-type table (counts before and after) and where the time went.
TEST(CliTest, OptPrintsTheOpTableAndPhases) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/op_table_test";
  std::filesystem::create_directories(dir);
  Result r = RunCli("opt " + Testdata("encoder.onnx") + " " + dir + "/o.onnx --no-verify --stats " + dir + "/s.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("op type"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total                             199      198"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(infer "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slowest rule matchers: "), std::string::npos) << r.out;
  std::ifstream f(dir + "/s.json");
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* key : {"\"op_types\"", "\"phase_seconds\"", "\"rule_seconds\"", "\"rewrite\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  }
}

// Verification feeds realistic sizes for symbolic dims (said in its line);
// when it cannot run, a warning on stderr, and exit 1 if --verify was asked.
TEST(CliTest, OptVerificationShapesAndSkips) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/verify_shapes_test";
  std::filesystem::remove_all(dir);
  std::string model = SymbolicBatchModel(dir);
  Result r = RunCli("opt " + model + " " + dir + "/o.onnx");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verify: 2 random input set(s) at x=1,3,8,"), std::string::npos) << r.out;
  Result given = RunCli("opt " + model + " " + dir + "/o.onnx --shape x=4,3,8");
  EXPECT_NE(given.out.find(" at x=4,3,8,"), std::string::npos) << given.out;
  // --inputs: the user's own feeds, read before any work.
  std::filesystem::create_directories(dir + "/feeds");
  ASSERT_TRUE(aic::WriteNpy(aic::Tensor::FromVector<float>(std::vector<float>(15, 0.5f), {5, 3, 1}),
                            dir + "/feeds/x.npy").ok());
  Result bad = RunCli("opt " + model + " " + dir + "/o.onnx --inputs " + dir + "/feeds");
  EXPECT_EQ(bad.code, 1) << bad.out;  // [5, 3, 1] is not [batch, 3, 8]: asked for, could not run
  EXPECT_NE(bad.out.find("warning: verify: skipped (input 'x'"), std::string::npos) << bad.out;
  ASSERT_TRUE(aic::WriteNpy(aic::Tensor::FromVector<float>(std::vector<float>(120, 0.5f), {5, 3, 8}),
                            dir + "/feeds/x.npy").ok());
  Result own = RunCli("opt " + model + " " + dir + "/o.onnx --inputs " + dir + "/feeds");
  EXPECT_EQ(own.code, 0) << own.out;
  EXPECT_NE(own.out.find("verify: 1 input set(s) from " + dir + "/feeds"), std::string::npos) << own.out;
  std::filesystem::remove(dir + "/o.onnx");
  EXPECT_EQ(RunCli("opt " + model + " " + dir + "/o.onnx --inputs " + dir + "/nowhere").code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.onnx"));

  aic::GraphBuilder b;  // an op no backend runs: verification cannot run
  aic::Value* x = b.Input("x", aic::DType::kFloat, {2, 3});
  aic::Value* y = b.OpN("Mystery", {b.Op("Relu", {x})}, 1, {}, "com.example")[0];
  y->set_type(aic::TypeInfo::Tensor(aic::DType::kFloat, aic::Shape({2, 3})));
  b.Output(y);
  std::unique_ptr<aic::Model> m = b.Build(17);
  m->opset_imports.push_back({"com.example", 1});
  ASSERT_TRUE(aic::SaveModel(*m, dir + "/mystery.onnx").ok());
  Result quiet = RunCli("opt " + dir + "/mystery.onnx " + dir + "/m.onnx");
  EXPECT_EQ(quiet.code, 0) << quiet.out;
  EXPECT_NE(quiet.out.find("warning: verify: skipped"), std::string::npos) << quiet.out;
  Result asked = RunCli("opt " + dir + "/mystery.onnx " + dir + "/m.onnx --verify");
  EXPECT_EQ(asked.code, 1) << asked.out;
}

// A KV cache: the mask spans past_length + 1 keys, so one size for both
// symbols cannot run; verification tries nearby sizes and says which ran.
TEST(CliTest, OptVerificationFindsSizesThatTieDims) {
  std::string dir = std::string(AIC_BINARY_DIR) + "/verify_tied_dims_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  aic::GraphBuilder b;
  aic::Value* past = b.Input("past", aic::DType::kFloat, {1, aic::Dim::Symbol("past_length"), 4});
  aic::Value* now = b.Input("now", aic::DType::kFloat, {1, 1, 4});
  aic::Value* mask = b.Input("mask", aic::DType::kFloat, {1, aic::Dim::Symbol("total_length"), 4});
  aic::Value* keys = b.Op("Concat", {past, now}, {aic::Attribute::Int("axis", 1)});
  b.Output(b.Op("Relu", {b.Op("Relu", {b.Op("Add", {keys, mask})})}));
  ASSERT_TRUE(aic::SaveModel(*b.Build(17), dir + "/kv.onnx").ok());
  Result r = RunCli("opt " + dir + "/kv.onnx " + dir + "/o.onnx");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verify: 2 random input set(s) at past=1,15,4 mask=1,16,4,"), std::string::npos) << r.out;
}

// Bad input never crashes the loader: each case gives a clear one-line error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "graph/verify.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/load.h"

namespace aic {
namespace {

namespace fs = std::filesystem;

// A small valid model: y = Relu(x + w), w an initializer.
onnx::ModelProto SmallModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  w->add_dims(4);
  for (int i = 0; i < 4; ++i) w->add_float_data(1.0f);
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("s");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("s");
  relu->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

std::string Serialize(const onnx::ModelProto& m) { return m.SerializeAsString(); }

absl::Status LoadAndVerify(const std::string& bytes, const std::string& dir = "") {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size(), dir);
  if (!model.ok()) return model.status();
  return Verify(*(*model)->graph);
}

void ExpectOneLineError(const absl::Status& s, const std::string& needle) {
  EXPECT_FALSE(s.ok());
  std::string msg(s.message());
  EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "error must be one line: " << msg;
}

TEST(BadInputTest, ValidModelLoads) { EXPECT_TRUE(LoadAndVerify(Serialize(SmallModel())).ok()); }

TEST(BadInputTest, EmptyFile) { ExpectOneLineError(LoadAndVerify(""), "empty file"); }

TEST(BadInputTest, MissingFileNamesThePath) {
  auto m = LoadModel("/nonexistent/model.onnx");
  ExpectOneLineError(m.status(), "/nonexistent/model.onnx");
}

TEST(BadInputTest, RandomBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(static_cast<size_t>(1 + rng() % 512), '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    absl::Status s = LoadAndVerify(bytes);  // must not crash; almost always an error
    if (!s.ok()) {
      EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
    }
  }
  ExpectOneLineError(LoadAndVerify(std::string("\x93\x01garbage\xff\xff\xff", 12)), "not an ONNX model");
}

TEST(BadInputTest, TruncatedFile) {
  std::string bytes = Serialize(SmallModel());
  for (size_t cut = 1; cut < bytes.size(); cut += 3) {
    absl::Status s = LoadAndVerify(bytes.substr(0, cut));
    EXPECT_FALSE(s.ok()) << "cut at " << cut;
  }
  ExpectOneLineError(LoadAndVerify(bytes.substr(0, bytes.size() / 2)), "not an ONNX model");
}

// LoadModel streams the file (read(), not a mapping): the same one-line
// errors, naming the file, for an empty file, a folder and a truncated file.
TEST(BadInputTest, StreamedFileErrorsNameThePath) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "aic_streamed_load";
  std::filesystem::create_directories(dir / "folder.onnx");
  std::string empty = (dir / "empty.onnx").string(), cut = (dir / "cut.onnx").string();
  std::ofstream(empty).close();
  std::string bytes = Serialize(SmallModel());
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  ExpectOneLineError(LoadModel(empty).status(), empty + ": empty file");
  ExpectOneLineError(LoadModel((dir / "folder.onnx").string()).status(), "folder.onnx: not a regular file");
  ExpectOneLineError(LoadModel(cut).status(), cut + ": not an ONNX model");
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_TRUE(LoadModel(cut).ok());
}

TEST(BadInputTest, Cycle) {
  onnx::ModelProto m = SmallModel();
  // add reads y (relu's output) instead of x: add -> relu -> add.
  m.mutable_graph()->mutable_node(0)->set_input(0, "y");
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "cycle");
}

TEST(BadInputTest, UndefinedInputNamesNode) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  absl::Status s = LoadAndVerify(Serialize(m));
  ExpectOneLineError(s, "'nowhere' is not defined");
  ExpectOneLineError(s, "relu");
}

TEST(BadInputTest, TwoProducers) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_node(1)->set_output(0, "s");
  m.mutable_graph()->mutable_output(0)->set_name("s");
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "two producers");
}

TEST(BadInputTest, OutputNothingProduces) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_output(0)->set_name("ghost");
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "'ghost' is not produced");
}

TEST(BadInputTest, InitializerSizeDisagreesWithShape) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_initializer(0)->add_dims(3);  // now [4, 3] with 4 values
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "'w'");
  onnx::ModelProto raw = SmallModel();
  auto* w = raw.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(15, '\0'));  // 15 bytes for 4 floats
  ExpectOneLineError(LoadAndVerify(Serialize(raw)), "needs 16");
}

TEST(BadInputTest, HugeDimsWithFewValuesAreRefusedBeforeAllocating) {
  onnx::ModelProto m = SmallModel();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, int64_t{1} << 40);  // 4 TiB of floats claimed, 4 values present
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "'w' has 4 values");
}

TEST(BadInputTest, NegativeDim) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
  ExpectOneLineError(LoadAndVerify(Serialize(m)), "negative dim");
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs the cases as parallel processes.
    root_ = fs::path(::testing::TempDir()) /
            (std::string("aic_extdata_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "model");
    std::ofstream(root_ / "model" / "w.bin", std::ios::binary).write(std::string(16, '\0').data(), 16);
    std::ofstream(root_ / "outside.bin", std::ios::binary).write(std::string(16, '\0').data(), 16);
  }
  absl::Status LoadWithLocation(const std::string& location, const std::string& offset = "0",
                                const std::string& length = "16") {
    onnx::ModelProto m = SmallModel();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", offset);
    add("length", length);
    return LoadAndVerify(Serialize(m), (root_ / "model").string());
  }
  fs::path root_;
};

TEST_F(ExternalDataTest, InsideFolderLoads) { EXPECT_TRUE(LoadWithLocation("w.bin").ok()); }

TEST_F(ExternalDataTest, AbsolutePathRefused) {
  ExpectOneLineError(LoadWithLocation((root_ / "outside.bin").string()), "relative");
}

TEST_F(ExternalDataTest, DotDotRefused) {
  ExpectOneLineError(LoadWithLocation("../outside.bin"), "escapes");
}

TEST_F(ExternalDataTest, SymlinkOutRefused) {
  fs::create_symlink(root_ / "outside.bin", root_ / "model" / "link.bin");
  ExpectOneLineError(LoadWithLocation("link.bin"), "outside");
}

TEST_F(ExternalDataTest, PastEndOfFileRefused) {
  ExpectOneLineError(LoadWithLocation("w.bin", "8", "16"), "past the end");
  ExpectOneLineError(LoadWithLocation("w.bin", "32", "0"), "past the end");
}

TEST_F(ExternalDataTest, LengthDisagreesWithShape) {
  ExpectOneLineError(LoadWithLocation("w.bin", "0", "8"), "needs 16");
}

TEST_F(ExternalDataTest, MissingFile) { ExpectOneLineError(LoadWithLocation("nope.bin"), "not found"); }

}  // namespace
}  // namespace aic

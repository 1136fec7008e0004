// Load → Verify → Save → Load must give the same model for every model of the
// ONNX backend suite and the PaddleOCR models; the saved file must pass
// libonnx's checker whenever the original does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "graph/verify.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/load.h"
#include "onnx_io/save.h"
#include "tests/testing/model_equal.h"

namespace aic {
namespace {

namespace fs = std::filesystem;

constexpr char kSuiteRoot[] = "/usr/share/libonnx-testdata/data";

bool PassesChecker(const std::string& bytes) {
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) return false;
  try {
    onnx::checker::check_model(proto);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Returns "" on success or a description of the failure.
std::string RoundTrip(const std::string& path) {
  auto a = LoadModel(path);
  if (!a.ok()) return "load: " + std::string(a.status().message());
  absl::Status verified = Verify(*(*a)->graph);
  if (!verified.ok()) return "verify: " + std::string(verified.message());
  auto bytes = SerializeModel(**a);
  if (!bytes.ok()) return "save: " + std::string(bytes.status().message());
  auto b = LoadModelFromBytes(bytes->data(), bytes->size());
  if (!b.ok()) return "reload: " + std::string(b.status().message());
  std::string diff = testing::DiffModels(**a, **b);
  if (!diff.empty()) return "differs: " + diff;
  if (PassesChecker(ReadFile(path)) && !PassesChecker(*bytes)) return "checker rejects saved model";
  return "";
}

TEST(RoundTripTest, EveryBackendSuiteModel) {
  if (!fs::exists(kSuiteRoot)) GTEST_SKIP() << "libonnx-testdata not installed";
  int count = 0;
  for (const char* set : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(kSuiteRoot) / set)) {
      fs::path model = entry.path() / "model.onnx";
      if (!fs::exists(model)) continue;
      ++count;
      EXPECT_EQ(RoundTrip(model.string()), "") << model;
    }
  }
  EXPECT_GT(count, 1000);
}

TEST(RoundTripTest, PaddleOcrModels) {
  fs::path dir = fs::path(AIC_SOURCE_DIR) / ".." / "shared" / "models";
  if (!fs::exists(dir / "ppocr_det.onnx")) GTEST_SKIP() << "../shared/models not present";
  for (const char* name : {"ppocr_det.onnx", "ppocr_rec.onnx", "ppocr_cls.onnx"}) {
    EXPECT_EQ(RoundTrip((dir / name).string()), "") << name;
  }
}

TEST(RoundTripTest, SaveToFileIsAtomicAndReloads) {
  fs::path dir = fs::path(::testing::TempDir()) / "aic_roundtrip_atomic";
  fs::create_directories(dir);
  std::string src = std::string(kSuiteRoot) + "/node/test_conv_with_strides_padding/model.onnx";
  if (!fs::exists(src)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto a = LoadModel(src);
  ASSERT_TRUE(a.ok()) << a.status();
  std::string out = (dir / "out.onnx").string();
  ASSERT_TRUE(SaveModel(**a, out).ok());
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "temporary file left: " << e.path();
  }
  auto b = LoadModel(out);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(testing::DiffModels(**a, **b), "");
}

TEST(RoundTripTest, ExternalDataIsWrittenAndMappedBack) {
  fs::path dir = fs::path(::testing::TempDir()) / "aic_roundtrip_external";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string src = std::string(kSuiteRoot) + "/node/test_conv_with_strides_padding/model.onnx";
  if (!fs::exists(src)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto a = LoadModel(src);
  ASSERT_TRUE(a.ok());
  // Give the model a big initializer so that it goes external.
  Graph& g = *(*a)->graph;
  Value* w = g.AddValue("big_weight");
  Tensor big(DType::kFloat, {64, 64});
  for (int64_t i = 0; i < big.num_elements(); ++i) big.mutable_data<float>()[i] = static_cast<float>(i);
  g.SetInitializer(w, big);
  SaveOptions options;
  options.external_data = SaveOptions::ExternalData::kAlways;
  std::string out = (dir / "m.onnx").string();
  ASSERT_TRUE(SaveModel(**a, out, options).ok());
  EXPECT_TRUE(fs::exists(dir / "m.onnx.data"));
  EXPECT_LT(fs::file_size(out), 4096u);  // the weight is not inline
  auto b = LoadModel(out);
  ASSERT_TRUE(b.ok()) << b.status();
  const Value* w2 = (*b)->graph->FindValue("big_weight");
  ASSERT_NE(w2, nullptr);
  EXPECT_TRUE(w2->initializer()->BitwiseEquals(big));
  EXPECT_TRUE(w2->initializer()->buffer()->borrowed()) << "external data must be mapped, not copied";
  EXPECT_EQ(testing::DiffModels(**a, **b), "");
}

}  // namespace
}  // namespace aic

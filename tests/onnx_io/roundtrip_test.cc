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
#include "onnx_io/model_bytes.h"
#include "onnx_io/proto_convert.h"
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

// What SerializeModel wrote before onnx_io/model_bytes.h: the whole model
// converted to a ModelProto, then protobuf's serializer.
std::string ProtobufBytes(const Model& m) {
  struct Inline : onnx_io::TensorWriter {
    absl::Status Write(const Tensor& t, onnx::TensorProto* proto) override {
      return onnx_io::TensorToProtoInline(t, proto);
    }
  } writer;
  onnx::ModelProto proto;
  absl::Status converted = onnx_io::ModelToProto(m, writer, &proto);
  EXPECT_TRUE(converted.ok()) << converted;
  return proto.SerializeAsString();
}

// "" when the planned bytes, the string and the saved file all equal protobuf's.
std::string BytesDiffer(const Model& m, const std::string& scratch) {
  std::string expected = ProtobufBytes(m);
  auto plan = ModelBytes::Of(m);
  if (!plan.ok()) return "plan: " + std::string(plan.status().message());
  std::string copied(plan->size(), '\0');
  plan->CopyTo(copied.data());
  if (copied != expected) return "CopyTo differs";
  auto serialized = SerializeModel(m);
  if (!serialized.ok() || *serialized != expected) return "SerializeModel differs";
  if (!SaveModel(m, scratch).ok() || ReadFile(scratch) != expected) return "SaveModel differs";
  return "";
}

TEST(ModelBytesTest, EqualProtobufsOwnSerializationOnEverySuiteModel) {
  if (!fs::exists(kSuiteRoot)) GTEST_SKIP() << "libonnx-testdata not installed";
  std::string scratch = (fs::path(::testing::TempDir()) / "aic_model_bytes.onnx").string();
  int count = 0;
  for (const char* set : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(kSuiteRoot) / set)) {
      fs::path model = entry.path() / "model.onnx";
      if (!fs::exists(model)) continue;
      auto m = LoadModel(model.string());
      if (!m.ok()) continue;  // RoundTripTest names any model that does not load
      ++count;
      EXPECT_EQ(BytesDiffer(**m, scratch), "") << model;
    }
  }
  EXPECT_GT(count, 1000);
  fs::path dir = fs::path(AIC_SOURCE_DIR) / ".." / "shared" / "models";
  for (const char* name : {"ppocr_det.onnx", "ppocr_rec.onnx", "ppocr_cls.onnx"}) {
    if (!fs::exists(dir / name)) continue;
    auto m = LoadModel((dir / name).string());
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(BytesDiffer(**m, scratch), "") << name;
  }
}

// Every field around the weights that the suite's models leave empty: the
// model's fields after its graph, the graph's after its initializers, string
// and empty initializers.
TEST(ModelBytesTest, FieldsAroundTheWeightsKeepTheirPlaces) {
  std::string src = std::string(kSuiteRoot) + "/node/test_conv_with_strides_padding/model.onnx";
  if (!fs::exists(src)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto m = LoadModel(src);
  ASSERT_TRUE(m.ok()) << m.status();
  Model& model = **m;
  model.doc_string = "a model";
  model.metadata_props.emplace_back("author", "test");
  model.graph->doc_string = "a graph";
  Graph& g = *model.graph;
  g.SetInitializer(g.AddValue("names"), Tensor::FromStrings({"a", "bc"}, {2}));
  g.SetInitializer(g.AddValue("empty"), Tensor(DType::kFloat, {0, 3}));
  Tensor w(DType::kFloat16, {300});
  for (int64_t i = 0; i < w.num_elements(); ++i) w.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(i * 7);
  g.SetInitializer(g.AddValue("half"), w);
  std::string scratch = (fs::path(::testing::TempDir()) / "aic_model_bytes_fields.onnx").string();
  EXPECT_EQ(BytesDiffer(model, scratch), "");
  auto again = LoadModelFromBytes(ReadFile(scratch).data(), ReadFile(scratch).size());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(testing::DiffModels(model, **again), "");
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

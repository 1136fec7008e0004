// Tests of the misc family's smaller ops: NonMaxSuppression, Det,
// GridSample, the training optimizers, StringNormalizer, TfIdfVectorizer and
// the random generators.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "exec/reference/executor.h"
#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::SingleNode;

SingleNode Spec(std::string op, std::vector<Attribute> attrs = {}, size_t outputs = 1,
                std::string domain = "") {
  SingleNode s;
  s.op_type = std::move(op);
  s.attributes = std::move(attrs);
  s.num_outputs = outputs;
  s.domain = std::move(domain);
  if (!s.domain.empty()) s.opset = 17;
  return s;
}

TypeInfo T(DType dt, Shape s) { return TypeInfo::Tensor(dt, std::move(s)); }

Tensor F(std::vector<float> v, std::vector<int64_t> dims) {
  return Tensor::FromVector<float>(v, std::move(dims));
}

// ---- NonMaxSuppression ----

TEST(NmsTest, SuppressesOverlapsAndRespectsLimits) {
  Tensor boxes = F({0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11}, {1, 3, 4});
  Tensor scores = F({0.9f, 0.95f, 0.5f}, {1, 1, 3});
  auto out = RunNode(Spec("NonMaxSuppression"),
                     {boxes, scores, Tensor::FromVector<int64_t>({3}, {1}),
                      F({0.5f}, {1}), F({0.0f}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Box 1 (0.95) wins and suppresses box 0 (IoU 0.82); box 2 is apart.
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*out)[0].data<int64_t>()[2], 1);
  EXPECT_EQ((*out)[0].data<int64_t>()[5], 2);
  auto limited = RunNode(Spec("NonMaxSuppression"),
                         {boxes, scores, Tensor::FromVector<int64_t>({1}, {1}), F({0.5f}, {1})});
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_EQ((*limited)[0].dims(), (std::vector<int64_t>{1, 3}));
}

TEST(NmsTest, CenterPointFormat) {
  // Same two boxes as centers: (0.5, 0.5, 1, 1) and (0.5, 0.6, 1, 1) overlap heavily.
  Tensor boxes = F({0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1}, {1, 2, 4});
  auto out = RunNode(Spec("NonMaxSuppression", {Attribute::Int("center_point_box", 1)}),
                     {boxes, F({0.9f, 0.8f}, {1, 1, 2}), Tensor::FromVector<int64_t>({5}, {1}),
                      F({0.5f}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 3}));
}

// Many overlapping boxes (an SSD head's few thousand candidates), against
// the greedy selection written out plainly: the kernel's block screen and
// its window over kept boxes sorted by y1 must not change which boxes are
// kept, at positive, zero and negative thresholds, with flipped corners and
// degenerate boxes and a NaN coordinate among them, all in one region or spread over 7 regions
// (torchvision's batched NMS offsets each class's boxes so).
TEST(NmsTest, ManyBoxesMatchGreedySelection) {
  for (float spread : {0.0f, 40.0f}) {
    SCOPED_TRACE(spread);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> pos(0.0f, 30.0f), size(0.0f, 4.0f), score(0.0f, 1.0f);
    const int64_t n = 1500;
    std::vector<float> b(static_cast<size_t>(n) * 4), sc(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      float y = pos(rng) + spread * static_cast<float>(i % 7), x = pos(rng) + spread * static_cast<float>(i % 7);
      float h = size(rng), w = i % 17 == 0 ? 0.0f : size(rng);
      bool flip = i % 5 == 0;
      b[i * 4 + 0] = flip ? y + h : y;
      b[i * 4 + 1] = x;
      b[i * 4 + 2] = flip ? y : y + h;
      b[i * 4 + 3] = x + w;
      sc[i] = std::round(score(rng) * 200) / 200;  // ties among scores
      if (i == 700) b[i * 4 + 1] = std::nanf("");  // a NaN coordinate: never overlaps, orders nothing
    }
    auto iou = [&](int64_t i, int64_t j) {
      auto c = [&](int64_t k, int d) { return static_cast<double>(b[k * 4 + d]); };
      double iy1 = std::min(c(i, 0), c(i, 2)), iy2 = std::max(c(i, 0), c(i, 2));
      double jy1 = std::min(c(j, 0), c(j, 2)), jy2 = std::max(c(j, 0), c(j, 2));
      double ih = std::min(iy2, jy2) - std::max(iy1, jy1);
      double iw = std::min(c(i, 3), c(j, 3)) - std::max(c(i, 1), c(j, 1));
      if (ih <= 0 || iw <= 0) return 0.0;
      double inter = ih * iw;
      double uni = (iy2 - iy1) * (c(i, 3) - c(i, 1)) + (jy2 - jy1) * (c(j, 3) - c(j, 1)) - inter;
      return uni <= 0 ? 0.0 : inter / uni;
    };
    for (float th : {0.5f, 0.2f, 0.0f, -0.1f}) {
      SCOPED_TRACE(th);
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sc[i] > sc[j]; });
      std::vector<int64_t> want;
      for (int64_t i : order) {
        bool keep = true;
        for (int64_t k : want) keep = keep && !(iou(i, k) > static_cast<double>(th));
        if (keep) want.push_back(i);
      }
      auto out = RunNode(Spec("NonMaxSuppression"), {F(b, {1, n, 4}), F(sc, {1, 1, n}),
                                                     Tensor::FromVector<int64_t>({n}, {1}), F({th}, {1})});
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& got = (*out)[0];
      ASSERT_EQ(got.dim(0), static_cast<int64_t>(want.size()));
      for (size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got.data<int64_t>()[k * 3 + 2], want[k]) << k;
    }
  }
}

TEST(NmsTest, InferAndError) {
  auto types = InferNode(Spec("NonMaxSuppression"),
                         {T(DType::kFloat, Shape({Dim::Symbol("B"), 10, 4})),
                          T(DType::kFloat, Shape({Dim::Symbol("B"), 2, 10}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kInt64);
  EXPECT_EQ((*types)[0].shape.rank(), 2);
  auto bad = InferNode(Spec("NonMaxSuppression"), {T(DType::kFloat, Shape({1, 10, 5})),
                                                   T(DType::kFloat, Shape({1, 2, 10}))});
  EXPECT_FALSE(bad.ok());
}

// ---- Det ----

TEST(DetTest, BatchOfMatrices) {
  auto out = RunNode(Spec("Det"), {F({1, 2, 3, 4, 0, 1, 1, 0}, {2, 2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], -2, 1e-6);
  EXPECT_NEAR((*out)[0].data<float>()[1], -1, 1e-6);  // a row swap
  auto three = RunNode(Spec("Det"), {F({2, 0, 0, 0, 3, 0, 1, 1, 4}, {3, 3})});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ((*three)[0].rank(), 0);
  EXPECT_NEAR((*three)[0].data<float>()[0], 24, 1e-5);
}

TEST(DetTest, InferAndError) {
  auto types = InferNode(Spec("Det"), {T(DType::kFloat, Shape({Dim::Symbol("N"), 3, 3}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N]");
  EXPECT_FALSE(InferNode(Spec("Det"), {T(DType::kFloat, Shape({2, 3}))}).ok());
}

// ---- GridSample ----

TEST(GridSampleTest, BilinearNearestAndPadding) {
  Tensor x = F({1, 2, 3, 4}, {1, 1, 2, 2});
  // Center of the image, and a point far outside on the left.
  Tensor grid = F({0, 0, -3, 0}, {1, 1, 2, 2});
  auto out = RunNode(Spec("GridSample", {Attribute::Int("align_corners", 1)}), {x, grid});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], 2.5, 1e-6);
  EXPECT_NEAR((*out)[0].data<float>()[1], 0, 1e-6);  // zeros padding
  auto border = RunNode(Spec("GridSample", {Attribute::Int("align_corners", 1),
                                            Attribute::String("padding_mode", "border")}),
                        {x, grid});
  ASSERT_TRUE(border.ok());
  EXPECT_NEAR((*border)[0].data<float>()[1], 2, 1e-6);  // clamped to column 0, mid row
  auto nearest = RunNode(Spec("GridSample", {Attribute::String("mode", "nearest"),
                                             Attribute::Int("align_corners", 1)}),
                         {x, F({1, 1}, {1, 1, 1, 2})});
  ASSERT_TRUE(nearest.ok());
  EXPECT_EQ((*nearest)[0].data<float>()[0], 4);
}

TEST(GridSampleTest, InferAndError) {
  auto types = InferNode(Spec("GridSample"), {T(DType::kFloat, Shape({Dim::Symbol("N"), 3, 8, 8})),
                                              T(DType::kFloat, Shape({Dim::Symbol("N"), 4, 5, 2}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 3, 4, 5]");
  EXPECT_FALSE(InferNode(Spec("GridSample", {Attribute::String("mode", "cubic")}),
                         {T(DType::kFloat, Shape({1, 3, 8, 8})), T(DType::kFloat, Shape({1, 4, 5, 2}))})
                   .ok());
}

// ---- training ----

constexpr char kTraining[] = "ai.onnx.preview.training";

TEST(TrainingTest, MomentumFirstStepAndNesterov) {
  std::vector<Tensor> in = {Tensor::Scalar<float>(0.1f), Tensor::Scalar<int64_t>(0), F({1}, {1}),
                            F({2}, {1}), F({3}, {1})};
  std::vector<Attribute> attrs = {Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 0.25f),
                                  Attribute::Float("norm_coefficient", 0),
                                  Attribute::String("mode", "standard")};
  auto out = RunNode(Spec("Momentum", attrs, 2, kTraining), in);
  ASSERT_TRUE(out.ok()) << out.status();
  // t = 0: beta is taken as 1. v = 0.5·3 + 2 = 3.5; x = 1 − 0.1·3.5.
  EXPECT_NEAR((*out)[1].data<float>()[0], 3.5, 1e-6);
  EXPECT_NEAR((*out)[0].data<float>()[0], 0.65, 1e-6);
  attrs.back() = Attribute::String("mode", "nesterov");
  auto nest = RunNode(Spec("Momentum", attrs, 2, kTraining), in);
  ASSERT_TRUE(nest.ok());
  EXPECT_NEAR((*nest)[0].data<float>()[0], 1 - 0.1 * (2 + 0.5 * 3.5), 1e-6);
}

TEST(TrainingTest, AdagradAndAdam) {
  auto ada = RunNode(Spec("Adagrad", {Attribute::Float("epsilon", 0)}, 2, kTraining),
                     {Tensor::Scalar<float>(0.1f), Tensor::Scalar<int64_t>(0), F({1}, {1}),
                      F({-1}, {1}), F({3}, {1})});
  ASSERT_TRUE(ada.ok()) << ada.status();
  EXPECT_NEAR((*ada)[1].data<float>()[0], 4, 1e-6);               // h = 3 + 1
  EXPECT_NEAR((*ada)[0].data<float>()[0], 1 + 0.1 / 2, 1e-6);     // x − r·g/√h
  auto adam = RunNode(Spec("Adam", {Attribute::Float("epsilon", 0), Attribute::Float("alpha", 0.5f),
                                    Attribute::Float("beta", 0.5f)}, 3, kTraining),
                      {Tensor::Scalar<float>(0.1f), Tensor::Scalar<int64_t>(0), F({1}, {1}),
                       F({2}, {1}), F({0}, {1}), F({0}, {1})});
  ASSERT_TRUE(adam.ok()) << adam.status();
  EXPECT_NEAR((*adam)[1].data<float>()[0], 1, 1e-6);  // v = 0.5·2
  EXPECT_NEAR((*adam)[2].data<float>()[0], 2, 1e-6);  // h = 0.5·4
  EXPECT_NEAR((*adam)[0].data<float>()[0], 1 - 0.1 / std::sqrt(2.0), 1e-6);
}

TEST(TrainingTest, InferAndError) {
  SingleNode spec = Spec("Adagrad", {}, 2, kTraining);
  auto types = InferNode(spec, {T(DType::kFloat, Shape::Scalar()), T(DType::kInt64, Shape::Scalar()),
                                T(DType::kFloat, Shape({Dim::Symbol("K"), 3})),
                                T(DType::kFloat, Shape({Dim::Symbol("K"), 3})),
                                T(DType::kFloat, Shape({Dim::Symbol("K"), 3}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[1].shape.ToString(), "[K, 3]");
  auto bad = InferNode(spec, {T(DType::kFloat, Shape::Scalar()), T(DType::kInt64, Shape::Scalar()),
                              T(DType::kFloat, Shape({3}))});
  EXPECT_FALSE(bad.ok());
  const OpDef* def = OpRegistry::Global().Find(kTraining, "Adam", 1);
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->nondeterministic);
}

// ---- text ----

TEST(TextTest, StringNormalizer) {
  Tensor x = Tensor::FromStrings({"Monday", "tuesday", "MONDAY"}, {1, 3});
  auto out = RunNode(Spec("StringNormalizer", {Attribute::Strings("stopwords", {"monday"}),
                                               Attribute::String("case_change_action", "UPPER")}),
                     {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ((*out)[0].strings()[0], "TUESDAY");
  auto all = RunNode(Spec("StringNormalizer", {Attribute::Strings("stopwords", {"a"}),
                                               Attribute::Int("is_case_sensitive", 1)}),
                     {Tensor::FromStrings({"a"}, {1})});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].strings(), std::vector<std::string>{""});
  EXPECT_FALSE(InferNode(Spec("StringNormalizer"), {T(DType::kFloat, Shape({3}))}).ok());
  auto types = InferNode(Spec("StringNormalizer"), {T(DType::kString, Shape({Dim::Symbol("C")}))});
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)[0].dtype, DType::kString);
}

TEST(TextTest, TfIdfCountsSkipGrams) {
  // Pool: unigrams {1, 2}, bigram {(1, 2)}; columns 0, 1, 2.
  std::vector<Attribute> attrs = {
      Attribute::Int("min_gram_length", 1), Attribute::Int("max_gram_length", 2),
      Attribute::Int("max_skip_count", 1), Attribute::String("mode", "TF"),
      Attribute::Ints("ngram_counts", {0, 2}), Attribute::Ints("ngram_indexes", {0, 1, 2}),
      Attribute::Ints("pool_int64s", {1, 2, 1, 2})};
  auto out = RunNode(Spec("TfIdfVectorizer", attrs), {Tensor::FromVector<int32_t>({1, 3, 2, 2}, {4})});
  ASSERT_TRUE(out.ok()) << out.status();
  // 1 once, 2 twice; (1, 2) once with skip 1 (positions 0, 2).
  EXPECT_EQ((*out)[0].span<float>()[0], 1);
  EXPECT_EQ((*out)[0].span<float>()[1], 2);
  EXPECT_EQ((*out)[0].span<float>()[2], 1);
  auto types = InferNode(Spec("TfIdfVectorizer", attrs), {T(DType::kInt32, Shape({Dim::Symbol("B"), 7}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[B, 3]");
  attrs[3] = Attribute::String("mode", "BM25");
  EXPECT_FALSE(InferNode(Spec("TfIdfVectorizer", attrs), {T(DType::kInt32, Shape({7}))}).ok());
}

// ---- random ----

TEST(RandomTest, ShapesDtypesAndSeeds) {
  auto normal = RunNode(Spec("RandomNormal", {Attribute::Ints("shape", {2, 3}), Attribute::Float("seed", 1),
                                              Attribute::Int("dtype", 11)}),
                        {});
  ASSERT_TRUE(normal.ok()) << normal.status();
  EXPECT_EQ((*normal)[0].dtype(), DType::kDouble);
  EXPECT_EQ((*normal)[0].dims(), (std::vector<int64_t>{2, 3}));
  auto again = RunNode(Spec("RandomNormal", {Attribute::Ints("shape", {2, 3}), Attribute::Float("seed", 1),
                                             Attribute::Int("dtype", 11)}),
                       {});
  EXPECT_TRUE((*normal)[0].BitwiseEquals((*again)[0]));
  auto uni = RunNode(Spec("RandomUniformLike", {Attribute::Float("low", 2), Attribute::Float("high", 3)}),
                     {F({0, 0, 0, 0}, {4})});
  ASSERT_TRUE(uni.ok());
  for (float v : (*uni)[0].span<float>()) EXPECT_TRUE(v >= 2 && v < 3);
  auto bern = RunNode(Spec("Bernoulli"), {F({0, 1, 0, 1}, {4})});
  ASSERT_TRUE(bern.ok());
  EXPECT_EQ((*bern)[0].span<float>()[0], 0);
  EXPECT_EQ((*bern)[0].span<float>()[1], 1);
  // A class with all the mass is always drawn.
  auto multi = RunNode(Spec("Multinomial", {Attribute::Int("sample_size", 5)}),
                       {F({-1e9f, 0, -1e9f}, {1, 3})});
  ASSERT_TRUE(multi.ok()) << multi.status();
  EXPECT_EQ((*multi)[0].dtype(), DType::kInt32);
  for (int32_t v : (*multi)[0].span<int32_t>()) EXPECT_EQ(v, 1);
}

TEST(RandomTest, InferAndError) {
  auto types = InferNode(Spec("RandomNormalLike", {Attribute::Int("dtype", 10)}),
                         {T(DType::kFloat, Shape({Dim::Symbol("N"), 2}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kFloat16);
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 2]");
  EXPECT_FALSE(InferNode(Spec("RandomUniform"), {}).ok());  // shape attribute required
  auto multi = InferNode(Spec("Multinomial", {Attribute::Int("sample_size", 4)}),
                         {T(DType::kFloat, Shape({Dim::Symbol("N"), 10}))});
  ASSERT_TRUE(multi.ok());
  EXPECT_EQ((*multi)[0].shape.ToString(), "[N, 4]");
  const OpDef* def = OpRegistry::Global().Find("", "RandomNormal", 17);
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->nondeterministic);
}

// ---- Col2Im ----

TEST(Col2ImTest, OverlapsAddUp) {
  // Image 1×3, block 1×2, stride 1: two positions; the middle pixel is covered twice.
  SingleNode spec = Spec("Col2Im");
  spec.opset = 18;
  auto out = RunNode(spec, {F({1, 2, 3, 4}, {1, 2, 2}), Tensor::FromVector<int64_t>({1, 3}, {2}),
                            Tensor::FromVector<int64_t>({1, 2}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ((*out)[0].span<float>()[0], 1);
  EXPECT_EQ((*out)[0].span<float>()[1], 5);
  EXPECT_EQ((*out)[0].span<float>()[2], 4);
  // L must equal the number of block positions.
  EXPECT_FALSE(RunNode(spec, {F({1, 2, 3, 4, 5, 6}, {1, 2, 3}), Tensor::FromVector<int64_t>({1, 3}, {2}),
                              Tensor::FromVector<int64_t>({1, 2}, {2})})
                   .ok());
  Tensor image = Tensor::FromVector<int64_t>({4, 5}, {2});
  Tensor block = Tensor::FromVector<int64_t>({2, 2}, {2});
  auto types = InferNode(spec, {T(DType::kFloat, Shape({Dim::Symbol("N"), 12, 12})),
                                T(DType::kInt64, Shape({2})), T(DType::kInt64, Shape({2}))},
                         {nullptr, &image, &block});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N, 3, 4, 5]");
}

// ---- Gradient ----

// d = (a + b)·a with b broadcast; Gradient(xs = [a, b], y = d).
absl::StatusOr<std::vector<RuntimeValue>> RunGradient(const std::string& inner_op) {
  GraphBuilder b;
  Value* a = b.Input("a", DType::kFloat, {2});
  Value* bb = b.Input("b", DType::kFloat, {});
  Value* c = b.Op(inner_op, {a, bb});
  Value* d = b.Op("Mul", {c, a});
  std::vector<Value*> g = b.OpN("Gradient", {a, bb}, 2,
                                {Attribute::Strings("xs", {"a", "b"}), Attribute::String("y", d->name())},
                                kTraining);
  b.Output(d);
  b.Output(g[0]);
  b.Output(g[1]);
  std::unique_ptr<Model> model = b.Build(13);
  model->opset_imports.push_back({kTraining, 1});
  ReferenceExecutor exec(*model);
  return exec.Run({{"a", RuntimeValue(F({1, 2}, {2}))}, {"b", RuntimeValue(Tensor::Scalar<float>(3))}});
}

TEST(GradientTest, ReverseModeThroughAddAndMul) {
  auto out = RunGradient("Add");
  ASSERT_TRUE(out.ok()) << out.status();
  // ∂d/∂a = 2a + b = [5, 7]; ∂d/∂b = Σ a = 3 (b was broadcast).
  EXPECT_NEAR((*out)[1].tensor.span<float>()[0], 5, 1e-6);
  EXPECT_NEAR((*out)[1].tensor.span<float>()[1], 7, 1e-6);
  ASSERT_EQ((*out)[2].tensor.rank(), 0);
  EXPECT_NEAR((*out)[2].tensor.span<float>()[0], 3, 1e-6);
}

TEST(GradientTest, UnsupportedOpOnPathFails) {
  EXPECT_FALSE(RunGradient("Pow").ok());
  auto types = InferNode(Spec("Gradient", {Attribute::Strings("xs", {"in0"}), Attribute::String("y", "out0")},
                              1, kTraining),
                         {T(DType::kFloat, Shape({Dim::Symbol("N")}))});
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].shape.ToString(), "[N]");
}

// ---- GridSample (opset 20: linear / cubic, N-D) and AffineGrid ----

SingleNode Spec20(std::string op, std::vector<Attribute> attrs = {}) {
  SingleNode s = Spec(std::move(op), std::move(attrs));
  s.opset = 20;
  return s;
}

// X[y, x] = x² + 10·y on a 4×4 image: not linear in x, so cubic differs from linear.
Tensor Quadratic() {
  std::vector<float> v;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) v.push_back(static_cast<float>(x * x + 10 * y));
  return F(v, {1, 1, 4, 4});
}

TEST(GridSampleTest, CubicInteriorAndPaddedTaps) {
  // Pixel (x, y) = (1.25, 1.5) and (0.25, 1.5) without align_corners.
  Tensor grid = F({-0.125f, 0, -0.625f, 0}, {1, 1, 2, 2});
  auto zeros = RunNode(Spec20("GridSample", {Attribute::String("mode", "cubic")}), {Quadratic(), grid});
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  // Keys' cubic with A = -0.75 over the 4×4 taps (numpy, by the formula).
  EXPECT_NEAR((*zeros)[0].data<float>()[0], 16.609375, 1e-5);
  // Near the edge one tap column falls outside: zeros read 0, border repeats column 0.
  EXPECT_NEAR((*zeros)[0].data<float>()[1], 16.703125, 1e-5);
  auto border = RunNode(Spec20("GridSample", {Attribute::String("mode", "cubic"),
                                              Attribute::String("padding_mode", "border")}),
                        {Quadratic(), grid});
  ASSERT_TRUE(border.ok()) << border.status();
  EXPECT_NEAR((*border)[0].data<float>()[1], 15.12109375, 1e-5);
  // Linear at the interior point: (1.25² is interpolated as 1.75) + 15.
  auto linear = RunNode(Spec20("GridSample"), {Quadratic(), grid});
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_NEAR((*linear)[0].data<float>()[0], 16.75, 1e-5);
  // Before opset 20 the mode is spelled bicubic and 'cubic' is unknown.
  EXPECT_TRUE(RunNode(Spec("GridSample", {Attribute::String("mode", "bicubic")}), {Quadratic(), grid}).ok());
  auto old_name = RunNode(Spec("GridSample", {Attribute::String("mode", "cubic")}), {Quadratic(), grid});
  ASSERT_FALSE(old_name.ok());
  EXPECT_NE(old_name.status().message().find("GridSample"), std::string::npos) << old_name.status();
}

TEST(GridSampleTest, TrilinearOverFiveDimensions) {
  // X [1, 1, 2, 2, 2] = 0..7 (z, y, x outermost first); grid coordinates are (x, y, z).
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = static_cast<float>(i);
  Tensor x = F(v, {1, 1, 2, 2, 2});
  Tensor grid = F({0, 0, 0, 1, -1, 0, -1, -1, -1}, {1, 1, 1, 3, 3});
  auto out = RunNode(Spec20("GridSample", {Attribute::Int("align_corners", 1)}), {x, grid});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 1, 1, 1, 3}));
  EXPECT_NEAR((*out)[0].data<float>()[0], 3.5, 1e-6);  // the center: the mean of all 8
  EXPECT_NEAR((*out)[0].data<float>()[1], 3, 1e-6);    // x = 1, y = 0, z = 0.5: between 1 and 5
  EXPECT_NEAR((*out)[0].data<float>()[2], 0, 1e-6);    // the corner X[0, 0, 0]
  // Cubic is 2-D only; a 5-D X before opset 20 is an error.
  EXPECT_FALSE(RunNode(Spec20("GridSample", {Attribute::String("mode", "cubic")}), {x, grid}).ok());
  auto old = RunNode(Spec("GridSample"), {x, grid});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("GridSample '"), std::string::npos) << old.status();
  // The grid's last dim must be the spatial rank.
  auto bad = RunNode(Spec20("GridSample"), {x, F({0, 0}, {1, 1, 1, 1, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("GridSample '"), std::string::npos) << bad.status();
}

TEST(AffineGridTest, PixelCentersAndCorners) {
  // theta = [[1, 0, 0.5], [0, 2, 0]], size [1, 1, 2, 3]: x' = x + 0.5, y' = 2y.
  Tensor theta = F({1, 0, 0.5f, 0, 2, 0}, {1, 2, 3});
  Tensor size = Tensor::FromVector<int64_t>({1, 1, 2, 3}, {4});
  auto centers = RunNode(Spec20("AffineGrid"), {theta, size});
  ASSERT_TRUE(centers.ok()) << centers.status();
  EXPECT_EQ((*centers)[0].dims(), (std::vector<int64_t>{1, 2, 3, 2}));
  const std::vector<double> want_centers = {-1.0 / 6, -1, 0.5, -1, 7.0 / 6, -1, -1.0 / 6, 1, 0.5, 1, 7.0 / 6, 1};
  const std::vector<double> want_corners = {-0.5, -2, 0.5, -2, 1.5, -2, -0.5, 2, 0.5, 2, 1.5, 2};
  for (size_t i = 0; i < want_centers.size(); ++i) {
    EXPECT_NEAR((*centers)[0].data<float>()[i], want_centers[i], 1e-6) << i;
  }
  auto corners = RunNode(Spec20("AffineGrid", {Attribute::Int("align_corners", 1)}), {theta, size});
  ASSERT_TRUE(corners.ok()) << corners.status();
  for (size_t i = 0; i < want_corners.size(); ++i) {
    EXPECT_NEAR((*corners)[0].data<float>()[i], want_corners[i], 1e-6) << i;
  }
  // A 3-D size needs a [N, 3, 4] theta.
  auto bad = RunNode(Spec20("AffineGrid"), {theta, Tensor::FromVector<int64_t>({1, 1, 2, 2, 2}, {5})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("AffineGrid '"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace aic

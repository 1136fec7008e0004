#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/util/float_convert.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::SingleNode;

Tensor X23() { return Tensor::FromVector<float>({1, -2, 3, 4, 5, -6}, {2, 3}); }

std::vector<float> Values(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(static_cast<float>(t.ElementAsDouble(i)));
  return v;
}

SingleNode Spec(const std::string& op, int64_t opset, std::vector<Attribute> attrs = {}) {
  SingleNode n;
  n.op_type = op;
  n.opset = opset;
  n.attributes = std::move(attrs);
  return n;
}

// A node with attribute axes (before opset 13/18).
SingleNode Reduce(const std::string& op, std::vector<int64_t> axes, int64_t keepdims,
                  int64_t opset = 11) {
  SingleNode n = Spec(op, opset, {Attribute::Int("keepdims", keepdims)});
  if (!axes.empty()) n.attributes.push_back(Attribute::Ints("axes", axes));
  return n;
}

// Runs the node's static hooks (infer, then traits and cost) as the analyzer would.
struct StaticResult {
  Traits traits;
  Cost cost;
};
StaticResult StaticHooks(const SingleNode& spec, const std::vector<TypeInfo>& types) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t i = 0; i < types.size(); ++i) ins.push_back(b.Input(absl::StrCat("in", i), types[i]));
  b.OpN(spec.op_type, ins, 1, spec.attributes);
  const Node& node = *b.last_node();
  OpContext ctx(node, spec.opset, types, {}, nullptr);
  const OpDef* def = OpRegistry::Global().Find("", spec.op_type, spec.opset);
  EXPECT_NE(def, nullptr);
  EXPECT_TRUE(def->infer(ctx).ok());
  return {def->traits(ctx), def->cost(ctx)};
}

TEST(ReduceTest, SumOverAxisKeepsDims) {
  Tensor axes = Tensor::FromVector<int64_t>({1}, {1});
  auto out = RunNode(Spec("ReduceSum", 13), {X23(), axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{2, 3}));
}

TEST(ReduceTest, SumWithoutAxesReducesAll) {
  auto out = RunNode(Spec("ReduceSum", 13, {Attribute::Int("keepdims", 0)}),
                     {X23()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{5}));
}

TEST(ReduceTest, SumEmptyAxesInputWithNoopIsIdentity) {
  Tensor axes = Tensor::FromVector<int64_t>({}, {0});
  auto out = RunNode(Spec("ReduceSum", 13, {Attribute::Int("noop_with_empty_axes", 1)}),
                     {X23(), axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals(X23()));
}

TEST(ReduceTest, L1NoopAtOpset18AppliesElementTransform) {
  auto out = RunNode(Spec("ReduceL1", 18, {Attribute::Int("noop_with_empty_axes", 1)}),
                     {X23()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ReduceTest, MeanAttributeAxesDropDims) {
  auto out = RunNode(Reduce("ReduceMean", {0}, 0), {X23()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{2.5f, 1.5f, -1.5f}));
}

TEST(ReduceTest, AxesAsInputAtOpset18) {
  Tensor axes = Tensor::FromVector<int64_t>({-1}, {1});
  auto out = RunNode(Spec("ReduceMax", 18, {Attribute::Int("keepdims", 0)}),
                     {X23(), axes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 5}));
}

TEST(ReduceTest, EachOpOnOneRow) {
  struct Case {
    const char* op;
    std::vector<float> expected;  // per row of X23
  };
  const Case cases[] = {
      {"ReduceMax", {3, 5}},
      {"ReduceMin", {-2, -6}},
      {"ReduceProd", {-6, -120}},
      {"ReduceL1", {6, 15}},
      {"ReduceL2", {std::sqrt(14.0f), std::sqrt(77.0f)}},
      {"ReduceSumSquare", {14, 77}},
      {"ReduceLogSum", {std::log(2.0f), std::log(3.0f)}},
      {"ReduceLogSumExp",
       {std::log(std::exp(1.0f) + std::exp(-2.0f) + std::exp(3.0f)),
        std::log(std::exp(4.0f) + std::exp(5.0f) + std::exp(-6.0f))}},
  };
  for (const Case& c : cases) {
    auto out = RunNode(Reduce(c.op, {1}, 0), {X23()});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    std::vector<float> got = Values((*out)[0]);
    ASSERT_EQ(got.size(), 2u) << c.op;
    for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(got[i], c.expected[i], 1e-5) << c.op;
  }
}

TEST(ReduceTest, LogSumExpIsStableForLargeInputs) {
  Tensor x = Tensor::FromVector<float>({1000, 1000}, {2});
  auto out = RunNode(Reduce("ReduceLogSumExp", {0}, 0), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], 1000 + std::log(2.0f), 1e-3);
}

TEST(ReduceTest, MaxPropagatesNaN) {
  Tensor x = Tensor::FromVector<float>({1, NAN, 3}, {3});
  auto out = RunNode(Reduce("ReduceMax", {0}, 1), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0]));
}

TEST(ReduceTest, EmptySetGivesIdentityElements) {
  Tensor x(DType::kFloat, {2, 0});
  struct Case {
    const char* op;
    float expected;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Case cases[] = {{"ReduceSum", 0},         {"ReduceProd", 1},    {"ReduceMax", -inf},
                        {"ReduceMin", inf},       {"ReduceL1", 0},      {"ReduceL2", 0},
                        {"ReduceSumSquare", 0},   {"ReduceLogSum", -inf},
                        {"ReduceLogSumExp", -inf}};
  for (const Case& c : cases) {
    auto out = RunNode(Reduce(c.op, {1}, 1), {x});
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1})) << c.op;
    EXPECT_EQ((*out)[0].data<float>()[0], c.expected) << c.op;
  }
  auto mean = RunNode(Reduce("ReduceMean", {1}, 1), {x});
  ASSERT_TRUE(mean.ok());
  EXPECT_TRUE(std::isnan(mean->at(0).data<float>()[0]));
}

TEST(ReduceTest, ReducingAnotherAxisOfAnEmptyTensorIsEmpty) {
  Tensor x(DType::kFloat, {0, 3});
  auto out = RunNode(Reduce("ReduceSum", {1}, 0, 11), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{0}));
}

TEST(ReduceTest, IntegerSumIsExactAndMeanTruncates) {
  Tensor x = Tensor::FromVector<int64_t>({(int64_t{1} << 60) + 1, 2}, {2});
  auto sum = RunNode(Reduce("ReduceSum", {}, 0), {x});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->at(0).data<int64_t>()[0], (int64_t{1} << 60) + 3);
  Tensor y = Tensor::FromVector<int32_t>({1, 2, 4}, {3});
  auto mean = RunNode(Reduce("ReduceMean", {}, 0), {y});
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(mean->at(0).data<int32_t>()[0], 2);
  Tensor u = Tensor::FromVector<uint8_t>({}, {0});
  auto mx = RunNode(Reduce("ReduceMax", {}, 0), {u});
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_EQ(mx->at(0).data<uint8_t>()[0], 0);
}

TEST(ReduceTest, Float16ComputesInFloat) {
  Tensor x = ConvertTensor(Tensor::FromVector<float>({0.5f, 1.5f, 2.0f}, {3}), DType::kFloat16);
  auto out = RunNode(Reduce("ReduceSum", {}, 0), {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat16);
  EXPECT_EQ((*out)[0].ElementAsDouble(0), 4.0);
}

TEST(ReduceTest, AxisOutOfRangeIsAnError) {
  auto out = RunNode(Reduce("ReduceMean", {2}, 1), {X23()});
  EXPECT_FALSE(out.ok());
  auto inferred = InferNode(Reduce("ReduceMean", {-3}, 1),
                            {TypeInfo::Tensor(DType::kFloat, Shape({Dim(2), Dim(3)}))});
  EXPECT_FALSE(inferred.ok());
  EXPECT_NE(inferred.status().message().find("ReduceMean"), std::string::npos);
}

TEST(ReduceTest, StringInputIsRejected) {
  auto inferred =
      InferNode(Reduce("ReduceSum", {0}, 1), {TypeInfo::Tensor(DType::kString, Shape({Dim(2)}))});
  EXPECT_FALSE(inferred.ok());
}

TEST(ReduceTest, InferKeepsSymbolicDims) {
  TypeInfo in = TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("batch"), Dim(3), Dim(4)}));
  auto out = InferNode(Reduce("ReduceL2", {-1}, 0), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("batch"), Dim(3)})));
  auto kept = InferNode(Reduce("ReduceL2", {1}, 1), {in});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)[0].shape.ToString(), "[batch, 1, 4]");
}

TEST(ReduceTest, InferWithConstantAndRuntimeAxes) {
  TypeInfo in = TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("batch"), Dim(1), Dim(4)}));
  TypeInfo axes_type = TypeInfo::Tensor(DType::kInt64, Shape({Dim(1)}));
  Tensor axes = Tensor::FromVector<int64_t>({0}, {1});
  auto known = InferNode(Spec("ReduceSum", 13), {in, axes_type}, {nullptr, &axes});
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ((*known)[0].shape.ToString(), "[1, 1, 4]");
  auto runtime = InferNode(Spec("ReduceSum", 13), {in, axes_type});
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  ASSERT_EQ((*runtime)[0].shape.rank(), 3);
  EXPECT_EQ((*runtime)[0].shape[1], Dim(1));
  EXPECT_TRUE((*runtime)[0].shape[2].is_symbol());
  auto dropped = InferNode(
      Spec("ReduceSum", 13, {Attribute::Int("keepdims", 0)}),
      {in, axes_type});
  ASSERT_TRUE(dropped.ok());
  EXPECT_FALSE((*dropped)[0].shape.has_rank());
}

TEST(ReduceTest, TraitsFollowTheOp) {
  TypeInfo in = TypeInfo::Tensor(DType::kFloat, Shape({Dim(2), Dim(3), Dim(4)}));
  StaticResult sum = StaticHooks(Reduce("ReduceSum", {1}, 1), {in});
  EXPECT_EQ(sum.traits.semantic_name, "Sum");
  EXPECT_EQ(sum.traits.PropertyWords(),
            (std::vector<std::string>{"linear", "irreversible", "collapse-producing"}));
  EXPECT_EQ(sum.traits.collapse, CollapseKind::kReduces);
  EXPECT_EQ(sum.traits.collapse_how, "3 values → 1 (Σ x)");
  EXPECT_EQ(sum.traits.effect, RepresentationEffect::kRestricts);
  EXPECT_EQ(sum.traits.effect_detail, "[2, 3, 4] → [2, 1, 4]");
  EXPECT_NE(sum.traits.meaning.find("axes [1]"), std::string::npos);
  EXPECT_TRUE(sum.cost.known);
  EXPECT_EQ(sum.cost.flops, 24);
  EXPECT_EQ(sum.cost.bytes_read, 96);
  EXPECT_EQ(sum.cost.bytes_written, 32);

  StaticResult mx = StaticHooks(Reduce("ReduceMax", {}, 0), {in});
  EXPECT_EQ(mx.traits.linearity, Linearity::kNonlinear);
  EXPECT_NE(mx.traits.meaning.find("axes all"), std::string::npos);
  EXPECT_EQ(mx.traits.collapse_how, "24 values → 1 (max x)");
}

TEST(ReduceTest, TraitsOfSizeOneReductionIsAReshape) {
  TypeInfo in = TypeInfo::Tensor(DType::kFloat, Shape({Dim(2), Dim(1)}));
  StaticResult mean = StaticHooks(Reduce("ReduceMean", {1}, 0), {in});
  EXPECT_EQ(mean.traits.collapse, CollapseKind::kNone);
  EXPECT_EQ(mean.traits.invertibility, Invertibility::kInvertible);
  EXPECT_FALSE(mean.traits.removable_when.empty());
}

}  // namespace
}  // namespace aic

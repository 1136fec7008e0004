// Tests of the activation family: numerics on hand-checked values (attribute
// defaults and overrides), Clip's two bound conventions, PRelu broadcasting,
// shape inference with symbolic dims, error paths and the seed's traits
// (ReLU's exact metadata above all).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::Op;
using testing::SingleNode;

Tensor F(std::vector<float> v) {
  std::vector<int64_t> dims = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<float>(v, dims);
}

std::vector<double> Run1(const SingleNode& spec, const std::vector<Tensor>& inputs) {
  auto out = RunNode(spec, inputs);
  EXPECT_TRUE(out.ok()) << spec.op_type << ": " << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), inputs[0].dtype()) << spec.op_type;
  std::vector<double> v;
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) v.push_back((*out)[0].ElementAsDouble(i));
  return v;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

struct Case {
  SingleNode spec;
  std::vector<float> x;
  std::vector<double> y;
};

TEST(ActivationTest, HandCheckedValues) {
  const double e1 = std::exp(-1.0);
  const std::vector<Case> cases = {
      {Op("Relu"), {-1, 0, 2}, {0, 0, 2}},
      {Op("LeakyRelu"), {-1, 2}, {-0.01, 2}},
      {Op("LeakyRelu", {Attribute::Float("alpha", 0.5f)}), {-1, 2}, {-0.5, 2}},
      {Op("Elu"), {-1, 2}, {e1 - 1, 2}},
      {Op("Elu", {Attribute::Float("alpha", 2)}), {-1}, {2 * (e1 - 1)}},
      {Op("Selu"), {-1, 2},
       {1.0507009873554805 * 1.6732632423543772 * (e1 - 1), 2 * 1.0507009873554805}},
      {Op("Celu", {Attribute::Float("alpha", 2)}), {-1, 3}, {2 * (std::exp(-0.5) - 1), 3}},
      {Op("Sigmoid"), {0, -100, 100}, {0.5, 0, 1}},
      {Op("HardSigmoid"), {0, 10, -10}, {0.5, 1, 0}},
      {Op("HardSwish"), {-4, 0, 1, 4}, {0, 0, 1 * (1.0 / 6 + 0.5), 4}},
      {Op("Tanh"), {0, 1}, {0, std::tanh(1.0)}},
      {Op("Softplus"), {0, 100, -100}, {std::log(2.0), 100, 0}},
      {Op("Softsign"), {1, -3}, {0.5, -0.75}},
      {Op("ThresholdedRelu"), {0.5, 1, 2}, {0, 0, 2}},
      {Op("Shrink"), {-1, 0.2f, 1}, {-1, 0, 1}},
      {Op("Shrink", {Attribute::Float("bias", 0.5f), Attribute::Float("lambd", 0.4f)}),
       {-1, 0.2f, 1}, {-0.5, 0, 0.5}},
      {Op("Mish", {}, 18), {1, -1}, {std::tanh(std::log1p(std::exp(1.0))),
                                      -std::tanh(std::log1p(std::exp(-1.0)))}},
      {Op("Gelu", {}, 20), {1, -1}, {0.5 * (1 + std::erf(1 / std::sqrt(2.0))),
                                     -0.5 * (1 + std::erf(-1 / std::sqrt(2.0)))}},
      {Op("Gelu", {Attribute::String("approximate", "tanh")}, 20), {1},
       {0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * (1 + 0.044715)))}},
  };
  for (const Case& c : cases) {
    ExpectNear(Run1(c.spec, {F(c.x)}), c.y, absl::StrCat(c.spec.op_type, " ", c.spec.opset));
  }
}

TEST(ActivationTest, IntegerReluAndShrink) {
  Tensor x = Tensor::FromVector<int32_t>({-3, 0, 5}, {3});
  EXPECT_EQ(Run1(Op("Relu", {}, 14), {x}), (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(Run1(Op("Shrink", {Attribute::Float("lambd", 1.5f), Attribute::Float("bias", 1)}),
                 {x}),
            (std::vector<double>{-2, 0, 4}));
}

TEST(ActivationTest, ClipBoundsAsInputsAndAttributes) {
  Tensor x = F({-2, 0.5f, 3});
  EXPECT_EQ(Run1(Op("Clip", {}, 13), {x, Tensor::Scalar<float>(-1), Tensor::Scalar<float>(1)}),
            (std::vector<double>{-1, 0.5, 1}));
  EXPECT_EQ(Run1(Op("Clip", {}, 13), {x, Tensor(), Tensor::Scalar<float>(1)}),
            (std::vector<double>{-2, 0.5, 1}));
  EXPECT_EQ(Run1(Op("Clip", {}, 13), {x}), (std::vector<double>{-2, 0.5, 3}));
  EXPECT_EQ(Run1(Op("Clip", {Attribute::Float("min", 0)}, 6), {x}),
            (std::vector<double>{0, 0.5, 3}));
  Tensor i8 = Tensor::FromVector<int8_t>({-100, 5, 100}, {3});
  EXPECT_EQ(Run1(Op("Clip", {}, 12), {i8, Tensor::Scalar<int8_t>(-10), Tensor::Scalar<int8_t>(10)}),
            (std::vector<double>{-10, 5, 10}));
  EXPECT_FALSE(InferNode(Op("Clip", {}, 13),
                         {TypeInfo::Tensor(DType::kFloat, Shape({3})),
                          TypeInfo::Tensor(DType::kInt32, Shape::Scalar())})
                   .ok());
}

TEST(ActivationTest, PReluBroadcastsSlope) {
  Tensor x = Tensor::FromVector<float>({-1, -1, 2, 2}, {2, 2});
  Tensor slope = Tensor::FromVector<float>({0.5f, 0.25f}, {2});
  EXPECT_EQ(Run1(Op("PRelu"), {x, slope}), (std::vector<double>{-0.5, -0.25, 2, 2}));
  // Opset 6: a 1-D slope is per channel (axis 1), not along the last axis.
  Tensor x3 = Tensor::FromVector<float>({-1, -1, -1, -1, -1, -1}, {1, 2, 3});
  EXPECT_EQ(Run1(Op("PRelu", {}, 6), {x3, slope}),
            (std::vector<double>{-0.5, -0.5, -0.5, -0.25, -0.25, -0.25}));
  EXPECT_FALSE(InferNode(Op("PRelu"), {TypeInfo::Tensor(DType::kFloat, Shape({2, 2})),
                                       TypeInfo::Tensor(DType::kFloat, Shape({3}))})
                   .ok());
}

TEST(ActivationTest, InferKeepsSymbolicDims) {
  for (const char* op : {"Relu", "Sigmoid", "Elu", "HardSwish"}) {
    auto t = InferNode(Op(op), {TypeInfo::Tensor(DType::kFloat, Shape({Dim::Symbol("batch"), 8}))});
    ASSERT_TRUE(t.ok()) << op << ": " << t.status();
    EXPECT_EQ((*t)[0].shape.ToString(), "[batch, 8]") << op;
    EXPECT_EQ((*t)[0].dtype, DType::kFloat) << op;
  }
}

TEST(ActivationTest, RejectsWrongDtype) {
  auto t = InferNode(Op("Sigmoid"), {TypeInfo::Tensor(DType::kString, Shape({2}))});
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("Sigmoid"), std::string::npos);
  EXPECT_FALSE(RunNode(Op("Tanh"), {Tensor::FromVector<int64_t>({1}, {1})}).ok());
}

// Static hooks of one node over typed inputs (some may be constants).
struct StaticResult {
  Traits traits;
  Cost cost;
};
StaticResult Static(const SingleNode& spec, const std::vector<TypeInfo>& types,
                    const std::vector<const Tensor*>& consts = {}) {
  GraphBuilder b;
  std::vector<Value*> ins;
  std::vector<const Tensor*> c(types.size(), nullptr);
  for (size_t i = 0; i < types.size(); ++i) {
    if (i < consts.size()) c[i] = consts[i];
    ins.push_back(c[i] ? b.Constant(absl::StrCat("c", i), *c[i])
                       : b.Input(absl::StrCat("in", i), types[i]));
  }
  b.OpN(spec.op_type, ins, 1, spec.attributes);
  OpContext ctx(*b.last_node(), spec.opset, types, c, [] { return std::string("unk"); });
  const OpDef* def = OpRegistry::Global().Find("", spec.op_type, spec.opset);
  EXPECT_NE(def, nullptr) << spec.op_type;
  if (def == nullptr) return {};
  EXPECT_TRUE(def->infer(ctx).ok());
  return {def->traits(ctx), def->cost(ctx)};
}

TypeInfo FloatT(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }

TEST(ActivationTraitsTest, ReluMatchesTheSeed) {
  StaticResult r = Static(Op("Relu"), {FloatT({1, 20})});
  const Traits& t = r.traits;
  EXPECT_EQ(t.semantic_name, "ReLU");
  EXPECT_EQ(t.meaning, "y = max(x, 0)");
  EXPECT_EQ(t.linearity, Linearity::kNonlinear);
  EXPECT_EQ(t.invertibility, Invertibility::kIrreversible);
  EXPECT_EQ(t.collapse, CollapseKind::kClampsRange);
  EXPECT_EQ(t.collapse_how, "negative half mapped to 0");
  EXPECT_TRUE(t.elementwise);
  EXPECT_EQ(t.effect, RepresentationEffect::kRestricts);
  EXPECT_FALSE(t.trainable);
  EXPECT_EQ(t.fuses_with, (std::vector<std::string>{"Gemm", "MatMul", "Conv", "Add"}));
  EXPECT_EQ(t.removable_when, "input already non-negative (after Relu, Sigmoid, Abs)");
  EXPECT_EQ(t.PropertyWords(),
            (std::vector<std::string>{"nonlinear", "irreversible", "collapse-producing"}));
  EXPECT_TRUE(r.cost.known);
  EXPECT_EQ(r.cost.flops, 20);
  EXPECT_EQ(r.cost.bytes_read, 80);
  EXPECT_EQ(r.cost.bytes_written, 80);
}

TEST(ActivationTraitsTest, SaturatingAndClamping) {
  for (const char* op : {"Sigmoid", "Tanh"}) {
    Traits t = Static(Op(op), {FloatT({4})}).traits;
    EXPECT_EQ(t.linearity, Linearity::kNonlinear) << op;
    EXPECT_EQ(t.invertibility, Invertibility::kInvertible) << op;
    EXPECT_EQ(t.collapse, CollapseKind::kSaturates) << op;
    EXPECT_FALSE(t.collapse_producing()) << op;
  }
  Tensor lo = Tensor::Scalar<float>(0), hi = Tensor::Scalar<float>(6);
  Traits clip = Static(Op("Clip", {}, 13), {FloatT({4}), FloatT({}), FloatT({})},
                       {nullptr, &lo, &hi})
                    .traits;
  EXPECT_EQ(clip.collapse, CollapseKind::kClampsRange);
  EXPECT_EQ(clip.semantic_name, "ReLU6");
  Traits bare = Static(Op("Clip", {}, 13), {FloatT({4})}).traits;
  EXPECT_EQ(bare.invertibility, Invertibility::kInvertible);
  Traits leaky = Static(Op("LeakyRelu"), {FloatT({4})}).traits;
  EXPECT_EQ(leaky.invertibility, Invertibility::kInvertible);
}

TEST(ActivationTraitsTest, PReluSlopeIsAParameter) {
  Tensor slope = Tensor::FromVector<float>({0.25f, 0.25f, 0.25f}, {3, 1, 1});
  StaticResult r = Static(Op("PRelu"), {FloatT({1, 3, 2, 2}), FloatT({3, 1, 1})},
                          {nullptr, &slope});
  EXPECT_EQ(r.traits.semantic_name, "PReLU");
  EXPECT_TRUE(r.traits.trainable);
  EXPECT_EQ(r.cost.params, 3);
  EXPECT_EQ(r.cost.flops, 24);
}

// ---- SwiGLU (opset 28) ----

TEST(ActivationTest, SwiGLUGatesBWithSwishOfA) {
  // y = a · sigmoid(alpha · a) · b.
  Tensor a = F({1, -2, 0, 3});
  Tensor b = F({2, 3, 4, -1});
  ExpectNear(Run1(Op("SwiGLU", {}, 28), {a, b}), {1.462117, -0.7152175, 0, -2.857722}, "alpha 1");
  ExpectNear(Run1(Op("SwiGLU", {Attribute::Float("alpha", 2)}, 28), {a, b}), {1.761594, -0.1079173, 0, -2.992582},
             "alpha 2");
  // Broadcastable shapes are still rejected: SwiGLU does not broadcast.
  auto bcast = RunNode(Op("SwiGLU", {}, 28), {a, F({2})});
  ASSERT_FALSE(bcast.ok());
  EXPECT_NE(bcast.status().message().find("SwiGLU '"), std::string::npos) << bcast.status();
  EXPECT_FALSE(InferNode(Op("SwiGLU", {}, 28), {TypeInfo::Tensor(DType::kFloat, Shape({4})),
                                                TypeInfo::Tensor(DType::kFloat, Shape({1}))})
                   .ok());
  EXPECT_FALSE(InferNode(Op("SwiGLU", {}, 28), {TypeInfo::Tensor(DType::kFloat, Shape({4})),
                                                TypeInfo::Tensor(DType::kDouble, Shape({4}))})
                   .ok());
}

}  // namespace
}  // namespace aic

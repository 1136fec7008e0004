// Tests of the elementwise families: unary math, binary arithmetic, variadic,
// logic/comparison/bit ops, Where, Cast; numerics on hand-checked cases, shape
// inference with symbolic dims, error paths, and the seed's traits.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/registry.h"
#include "support/half.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::Op;
using testing::SingleNode;

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.ElementAsDouble(i));
  return v;
}

Tensor F(std::vector<float> v) {
  std::vector<int64_t> dims = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<float>(v, dims);
}

// Runs a one-output node and returns its values (fails the test on error).
std::vector<double> Run1(const SingleNode& spec, const std::vector<Tensor>& inputs,
                         DType expect_dtype = DType::kUndefined) {
  auto out = RunNode(spec, inputs);
  EXPECT_TRUE(out.ok()) << spec.op_type << ": " << out.status();
  if (!out.ok()) return {};
  if (expect_dtype != DType::kUndefined) {
    EXPECT_EQ((*out)[0].dtype(), expect_dtype) << spec.op_type;
  }
  return Values((*out)[0]);
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want,
                const std::string& what, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
    }
  }
}

// The static hooks (infer, traits, cost) of a node whose inputs may be constants.
struct StaticResult {
  Traits traits;
  Cost cost;
  TypeInfo out;
};
StaticResult Static(const SingleNode& spec, const std::vector<TypeInfo>& types,
                    const std::vector<const Tensor*>& consts = {}) {
  GraphBuilder b;
  std::vector<Value*> ins;
  std::vector<const Tensor*> c(types.size(), nullptr);
  for (size_t i = 0; i < types.size(); ++i) {
    if (i < consts.size() && consts[i] != nullptr) c[i] = consts[i];
    ins.push_back(c[i] ? b.Constant(absl::StrCat("c", i), *c[i])
                       : b.Input(absl::StrCat("in", i), types[i]));
  }
  b.OpN(spec.op_type, ins, 1, spec.attributes);
  int counter = 0;
  OpContext ctx(*b.last_node(), spec.opset, types, c,
                [&counter] { return absl::StrCat("unk__", counter++); });
  const OpDef* def = OpRegistry::Global().Find("", spec.op_type, spec.opset);
  EXPECT_NE(def, nullptr) << spec.op_type;
  if (def == nullptr) return {};
  absl::Status s = def->infer(ctx);
  EXPECT_TRUE(s.ok()) << s;
  return {def->traits(ctx), def->cost(ctx), ctx.output_type(0)};
}

TypeInfo FloatT(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }

// ---- unary math ---------------------------------------------------------

struct UnaryCase {
  const char* op;
  std::vector<float> x;
  std::vector<double> y;
};

TEST(ElementwiseUnaryTest, HandCheckedValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<UnaryCase> cases = {
      {"Abs", {-1.5f, 0, 2}, {1.5, 0, 2}},
      {"Neg", {-1.5f, 0, 2}, {1.5, 0, -2}},
      {"Reciprocal", {-2, 4}, {-0.5, 0.25}},
      {"Floor", {-1.5f, 1.5f}, {-2, 1}},
      {"Ceil", {-1.5f, 1.5f}, {-1, 2}},
      {"Round", {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f}, {0, 2, 2, -0.0, -2, 3}},
      {"Sqrt", {4, 9}, {2, 3}},
      {"Exp", {0, 1}, {1, M_E}},
      {"Log", {1, static_cast<float>(M_E)}, {0, 1}},
      {"Sin", {0, static_cast<float>(M_PI / 2)}, {0, 1}},
      {"Cos", {0}, {1}},
      {"Tan", {0.5f}, {std::tan(0.5)}},
      {"Asin", {1}, {M_PI / 2}},
      {"Acos", {1}, {0}},
      {"Atan", {1}, {M_PI / 4}},
      {"Sinh", {1}, {std::sinh(1.0)}},
      {"Cosh", {1}, {std::cosh(1.0)}},
      {"Asinh", {1}, {std::asinh(1.0)}},
      {"Acosh", {2}, {std::acosh(2.0)}},
      {"Atanh", {0.5f}, {std::atanh(0.5)}},
      {"Erf", {0, 1}, {0, std::erf(1.0)}},
      {"Sign", {-3, 0, 2, static_cast<float>(nan)}, {-1, 0, 1, nan}},
  };
  for (const UnaryCase& c : cases) {
    ExpectNear(Run1(Op(c.op), {F(c.x)}, DType::kFloat), c.y, c.op);
  }
}

TEST(ElementwiseUnaryTest, IntegerAbsNegSign) {
  Tensor x = Tensor::FromVector<int32_t>({-3, 0, 5}, {3});
  EXPECT_EQ(Run1(Op("Abs"), {x}, DType::kInt32), (std::vector<double>{3, 0, 5}));
  EXPECT_EQ(Run1(Op("Neg"), {x}, DType::kInt32), (std::vector<double>{3, 0, -5}));
  EXPECT_EQ(Run1(Op("Sign"), {x}, DType::kInt32), (std::vector<double>{-1, 0, 1}));
  Tensor m = Tensor::FromVector<int8_t>({-128}, {1});
  EXPECT_EQ(Run1(Op("Abs"), {m}, DType::kInt8), (std::vector<double>{-128}));  // wraps
}

TEST(ElementwiseUnaryTest, Float16ComputesInFloat) {
  Tensor x(DType::kFloat16, {2});
  x.mutable_data<uint16_t>()[0] = FloatToHalf(4.0f);
  x.mutable_data<uint16_t>()[1] = FloatToHalf(0.25f);
  EXPECT_EQ(Run1(Op("Sqrt"), {x}, DType::kFloat16), (std::vector<double>{2, 0.5}));
}

TEST(ElementwiseUnaryTest, IsNaNAndIsInf) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = F({1, std::nanf(""), inf, -inf});
  EXPECT_EQ(Run1(Op("IsNaN"), {x}, DType::kBool), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(Run1(Op("IsInf"), {x}, DType::kBool), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(Run1(Op("IsInf", {Attribute::Int("detect_negative", 0)}), {x}),
            (std::vector<double>{0, 0, 1, 0}));
}

TEST(ElementwiseUnaryTest, InferKeepsSymbolicDims) {
  auto t = InferNode(Op("Exp"), {FloatT({Dim::Symbol("batch"), 3})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[batch, 3]");
  auto p = InferNode(Op("IsNaN"), {FloatT({Dim::Symbol("n")})});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[0].dtype, DType::kBool);
}

TEST(ElementwiseUnaryTest, RejectsWrongDtype) {
  auto t = InferNode(Op("Exp"), {TypeInfo::Tensor(DType::kInt32, Shape({3}))});
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("Exp"), std::string::npos);
  auto r = RunNode(Op("Sqrt"), {Tensor::FromVector<int32_t>({4}, {1})});
  EXPECT_FALSE(r.ok());
}

TEST(ElementwiseUnaryTest, Traits) {
  StaticResult floor = Static(Op("Floor"), {FloatT({4})});
  EXPECT_EQ(floor.traits.collapse, CollapseKind::kQuantizes);
  EXPECT_TRUE(floor.traits.elementwise);
  StaticResult abs = Static(Op("Abs"), {FloatT({4})});
  EXPECT_EQ(abs.traits.invertibility, Invertibility::kIrreversible);
  EXPECT_TRUE(abs.traits.collapse_producing());
  StaticResult exp = Static(Op("Exp"), {FloatT({4})});
  EXPECT_EQ(exp.traits.PropertyWords(), (std::vector<std::string>{"nonlinear", "invertible"}));
  EXPECT_EQ(exp.cost.flops, 4 * kFlopsTranscendental);
}
// ---- binary arithmetic -------------------------------------------------

TEST(ElementwiseBinaryTest, ArithmeticBroadcasts) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::FromVector<float>({10, 20, 30}, {3});
  EXPECT_EQ(Run1(Op("Add"), {a, b}), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Run1(Op("Sub"), {a, b}), (std::vector<double>{-9, -18, -27, -6, -15, -24}));
  EXPECT_EQ(Run1(Op("Mul"), {a, Tensor::Scalar<float>(2)}),
            (std::vector<double>{2, 4, 6, 8, 10, 12}));
  Tensor col = Tensor::FromVector<float>({1, 2}, {2, 1});
  EXPECT_EQ(Run1(Op("Div"), {a, col}), (std::vector<double>{1, 2, 3, 2, 2.5, 3}));
}

TEST(ElementwiseBinaryTest, IntegerDivisionTruncatesAndNeverTraps) {
  Tensor a = Tensor::FromVector<int32_t>({7, -7, 7, std::numeric_limits<int32_t>::min()}, {4});
  Tensor b = Tensor::FromVector<int32_t>({2, 2, 0, -1}, {4});
  EXPECT_EQ(Run1(Op("Div"), {a, b}, DType::kInt32),
            (std::vector<double>{3, -3, 0, std::numeric_limits<int32_t>::min()}));
  Tensor u = Tensor::FromVector<uint8_t>({250, 10}, {2});
  Tensor v = Tensor::FromVector<uint8_t>({10, 20}, {2});
  EXPECT_EQ(Run1(Op("Add"), {u, v}, DType::kUint8), (std::vector<double>{4, 30}));
}

TEST(ElementwiseBinaryTest, ModFollowsNumpy) {
  Tensor a = Tensor::FromVector<int64_t>({-4, 7, 5, 4, -7, 8}, {6});
  Tensor b = Tensor::FromVector<int64_t>({2, -3, 8, -2, 3, 5}, {6});
  EXPECT_EQ(Run1(Op("Mod"), {a, b}), (std::vector<double>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(Run1(Op("Mod", {Attribute::Int("fmod", 1)}), {a, b}),
            (std::vector<double>{0, 1, 5, 0, -1, 3}));
  ExpectNear(Run1(Op("Mod", {Attribute::Int("fmod", 1)}),
                  {F({-4.3f, 7.2f}), F({2.1f, -3.4f})}),
             {std::fmod(-4.3f, 2.1f), std::fmod(7.2f, -3.4f)}, "fmod");
}

TEST(ElementwiseBinaryTest, PowMixedTypes) {
  Tensor x = F({1, 2, 3});
  Tensor yi = Tensor::FromVector<int64_t>({4, 5, 6}, {3});
  EXPECT_EQ(Run1(Op("Pow", {}, 15), {x, yi}, DType::kFloat),
            (std::vector<double>{1, 32, 729}));
  Tensor xi = Tensor::FromVector<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ(Run1(Op("Pow", {}, 15), {xi, F({4, 5, 6})}, DType::kInt32),
            (std::vector<double>{1, 32, 729}));
  EXPECT_EQ(Run1(Op("Pow", {}, 15), {xi, Tensor::FromVector<int32_t>({3}, {1})}),
            (std::vector<double>{1, 8, 27}));
  ExpectNear(Run1(Op("Pow"), {F({4}), Tensor::Scalar<float>(0.5f)}), {2}, "sqrt");
}

TEST(ElementwiseBinaryTest, InferBroadcastsSymbols) {
  auto t = InferNode(Op("Add"), {FloatT({Dim::Symbol("batch"), 1, 4}), FloatT({3, 1})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape.ToString(), "[batch, 3, 4]");
  auto c = InferNode(Op("Less"), {FloatT({Dim::Symbol("n")}), FloatT({1})});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].dtype, DType::kBool);
  EXPECT_EQ((*c)[0].shape.ToString(), "[n]");
}

TEST(ElementwiseBinaryTest, Errors) {
  auto bad = InferNode(Op("Mul"), {FloatT({3}), FloatT({4})});
  EXPECT_FALSE(bad.ok());
  auto mixed = InferNode(Op("Add"),
                         {FloatT({3}), TypeInfo::Tensor(DType::kInt32, Shape({3}))});
  EXPECT_FALSE(mixed.ok());
  EXPECT_FALSE(RunNode(Op("Add"), {F({1, 2, 3}), F({1, 2})}).ok());
  // A missing operand is an error, not a crash.
  EXPECT_FALSE(InferNode(Op("Sub"), {FloatT({3})}).ok());
  EXPECT_FALSE(RunNode(Op("Sub"), {F({1})}).ok());
  EXPECT_FALSE(RunNode(Op("Pow"), {F({1})}).ok());
}

TEST(ElementwiseBinaryTest, EmptyAndScalarTensors) {
  Tensor empty(DType::kFloat, {0, 3});
  auto out = RunNode(Op("Add"), {empty, F({1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{0, 3}));
  auto s = RunNode(Op("Mul"), {Tensor::Scalar<float>(3), Tensor::Scalar<float>(4)});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].rank(), 0);
  EXPECT_EQ(Values((*s)[0]), (std::vector<double>{12}));
  auto e = RunNode(Op("Exp"), {empty});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)[0].num_elements(), 0);
}

TEST(ElementwiseBinaryTest, LegacyAxisBroadcast) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::FromVector<float>({10, 20}, {2});
  SingleNode spec = Op("Add", {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 6);
  EXPECT_EQ(Run1(spec, {a, b}), (std::vector<double>{11, 12, 13, 24, 25, 26}));
}

TEST(ElementwiseBinaryTest, AddWithConstantIsBias) {
  Tensor bias = Tensor::FromVector<float>(std::vector<float>(20, 0.5f), {20});
  StaticResult r = Static(Op("Add"), {FloatT({1, 20}), FloatT({20})}, {nullptr, &bias});
  EXPECT_EQ(r.traits.semantic_name, "Bias");
  EXPECT_EQ(r.traits.linearity, Linearity::kAffine);
  EXPECT_EQ(r.traits.invertibility, Invertibility::kInvertible);
  EXPECT_TRUE(r.traits.trainable);
  EXPECT_EQ(r.traits.PropertyWords(),
            (std::vector<std::string>{"linear", "invertible", "trainable"}));
  EXPECT_EQ(r.cost.params, 20);
  EXPECT_EQ(r.cost.flops, 20);
  EXPECT_NE(r.traits.removable_when.find("adding 0"), std::string::npos);
  // Constant first works the same: b + x.
  StaticResult l = Static(Op("Add"), {FloatT({20}), FloatT({1, 20})}, {&bias, nullptr});
  EXPECT_EQ(l.traits.semantic_name, "Bias");
}

TEST(ElementwiseBinaryTest, MulWithConstantIsScale) {
  Tensor s = Tensor::FromVector<float>({1, 2, 3}, {3, 1, 1});
  StaticResult r = Static(Op("Mul"), {FloatT({1, 3, 4, 4}), FloatT({3, 1, 1})},
                          {nullptr, &s});
  EXPECT_EQ(r.traits.semantic_name, "Scale");
  EXPECT_EQ(r.traits.linearity, Linearity::kLinear);
  EXPECT_EQ(r.traits.invertibility, Invertibility::kInvertible);
  EXPECT_EQ(r.cost.params, 3);
  Tensor z = Tensor::FromVector<float>({1, 0, 3}, {3, 1, 1});
  StaticResult zr = Static(Op("Mul"), {FloatT({1, 3, 4, 4}), FloatT({3, 1, 1})},
                           {nullptr, &z});
  EXPECT_EQ(zr.traits.invertibility, Invertibility::kIrreversible);
  StaticResult d = Static(Op("Div"), {FloatT({1, 3}), FloatT({3})}, {nullptr, &s});
  EXPECT_EQ(d.traits.semantic_name, "Scale");
}

TEST(ElementwiseBinaryTest, TwoActivationsArePlainOps) {
  StaticResult add = Static(Op("Add"), {FloatT({2, 3}), FloatT({2, 3})});
  EXPECT_EQ(add.traits.semantic_name, "Add");
  EXPECT_EQ(add.traits.linearity, Linearity::kLinear);
  EXPECT_FALSE(add.traits.trainable);
  EXPECT_EQ(add.cost.params, 0);
  StaticResult mul = Static(Op("Mul"), {FloatT({2, 3}), FloatT({2, 3})});
  EXPECT_EQ(mul.traits.semantic_name, "Mul");
  EXPECT_EQ(mul.traits.linearity, Linearity::kNonlinear);
}

// ---- variadic ------------------------------------------------------------

TEST(ElementwiseVariadicTest, SumMeanMinMax) {
  Tensor a = F({3, 5, 2});
  Tensor b = F({1, 3, 3});
  Tensor c = Tensor::FromVector<float>({2}, {1});
  EXPECT_EQ(Run1(Op("Sum"), {a, b, c}), (std::vector<double>{6, 10, 7}));
  ExpectNear(Run1(Op("Mean"), {a, b, c}), {2, 10.0 / 3, 7.0 / 3}, "Mean");
  EXPECT_EQ(Run1(Op("Min"), {a, b, c}), (std::vector<double>{1, 2, 2}));
  EXPECT_EQ(Run1(Op("Max"), {a, b, c}), (std::vector<double>{3, 5, 3}));
  EXPECT_EQ(Run1(Op("Max"), {a}), (std::vector<double>{3, 5, 2}));
  Tensor i = Tensor::FromVector<uint64_t>({1, 9}, {2});
  Tensor j = Tensor::FromVector<uint64_t>({4, 2}, {2});
  EXPECT_EQ(Run1(Op("Min"), {i, j}, DType::kUint64), (std::vector<double>{1, 2}));
  auto t = InferNode(Op("Sum"),
                     {FloatT({Dim::Symbol("n"), 1}), FloatT({1, 4}), FloatT({4})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape.ToString(), "[n, 4]");
  EXPECT_FALSE(InferNode(Op("Sum"), {FloatT({2}), FloatT({3})}).ok());
}

// ---- logic, comparisons, bits, Where --------------------------------------

Tensor B(std::vector<bool> v) {
  Tensor t(DType::kBool, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<bool>()[i] = v[i];
  return t;
}

TEST(ElementwiseLogicTest, BooleanOps) {
  Tensor a = B({true, true, false, false});
  Tensor b = B({true, false, true, false});
  EXPECT_EQ(Run1(Op("And"), {a, b}, DType::kBool), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(Run1(Op("Or"), {a, b}, DType::kBool), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(Run1(Op("Xor"), {a, b}, DType::kBool), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(Run1(Op("Not"), {a}, DType::kBool), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_FALSE(InferNode(Op("And"), {FloatT({2}), FloatT({2})}).ok());
}

TEST(ElementwiseLogicTest, Comparisons) {
  Tensor a = F({1, 2, 3});
  Tensor b = Tensor::Scalar<float>(2);
  EXPECT_EQ(Run1(Op("Equal"), {a, b}, DType::kBool), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(Run1(Op("Less"), {a, b}), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(Run1(Op("Greater"), {a, b}), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(Run1(Op("LessOrEqual"), {a, b}), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(Run1(Op("GreaterOrEqual"), {a, b}), (std::vector<double>{0, 1, 1}));
  Tensor i = Tensor::FromVector<int64_t>({5, 6}, {2});
  EXPECT_EQ(Run1(Op("Equal"), {i, Tensor::Scalar<int64_t>(6)}),
            (std::vector<double>{0, 1}));
}

TEST(ElementwiseLogicTest, BitOps) {
  Tensor x = Tensor::FromVector<uint8_t>({16, 4, 1}, {3});
  Tensor s = Tensor::FromVector<uint8_t>({1, 2, 9}, {3});
  EXPECT_EQ(Run1(Op("BitShift", {Attribute::String("direction", "RIGHT")}),
                 {x, s}, DType::kUint8),
            (std::vector<double>{8, 1, 0}));
  EXPECT_EQ(Run1(Op("BitShift", {Attribute::String("direction", "LEFT")}),
                 {x, s}),
            (std::vector<double>{32, 16, 0}));
  Tensor a = Tensor::FromVector<int32_t>({12, -1}, {2});
  Tensor b = Tensor::FromVector<int32_t>({10, 3}, {2});
  EXPECT_EQ(Run1(Op("BitwiseAnd", {}, 18), {a, b}), (std::vector<double>{8, 3}));
  EXPECT_EQ(Run1(Op("BitwiseOr", {}, 18), {a, b}), (std::vector<double>{14, -1}));
  EXPECT_EQ(Run1(Op("BitwiseXor", {}, 18), {a, b}), (std::vector<double>{6, -4}));
  EXPECT_EQ(Run1(Op("BitwiseNot", {}, 18), {a}), (std::vector<double>{-13, 0}));
}

TEST(ElementwiseLogicTest, WhereSelectsWithBroadcast) {
  Tensor c = Tensor(DType::kBool, {2, 1});
  c.mutable_data<bool>()[0] = true;
  Tensor x = Tensor::FromVector<int64_t>({1, 2}, {2});
  Tensor y = Tensor::Scalar<int64_t>(9);
  auto out = RunNode(Op("Where"), {c, x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 2, 9, 9}));
  Tensor sx = Tensor::FromStrings({"a", "b"}, {2});
  Tensor sy = Tensor::FromStrings({"c", "d"}, {2});
  auto s = RunNode(Op("Where"), {B({false, true}), sx, sy});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].strings(), (std::vector<std::string>{"c", "b"}));
  auto t = InferNode(Op("Where"),
                     {TypeInfo::Tensor(DType::kBool, Shape({Dim::Symbol("n"), 1})), FloatT({3}),
                      FloatT({1})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape.ToString(), "[n, 3]");
  EXPECT_FALSE(InferNode(Op("Where"), {FloatT({3}), FloatT({3}), FloatT({3})}).ok());
}

// ---- Cast -------------------------------------------------------------------

TEST(ElementwiseCastTest, NumericAndStrings) {
  SingleNode to_int = Op("Cast", {Attribute::Int("to", 6)});
  EXPECT_EQ(Run1(to_int, {F({1.7f, -1.7f})}, DType::kInt32), (std::vector<double>{1, -1}));
  SingleNode to_str = Op("Cast", {Attribute::Int("to", 8)});
  auto s = RunNode(to_str, {F({0.5f, 2.25f})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0].strings(), (std::vector<std::string>{"0.5", "2.25"}));
  SingleNode to_float = Op("Cast", {Attribute::Int("to", 1)});
  auto f = RunNode(to_float, {Tensor::FromStrings({"1e-5", "+INF", "NaN", "-3.5"}, {4})});
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectNear(Values((*f)[0]),
             {1e-5, std::numeric_limits<double>::infinity(), std::nan(""), -3.5}, "parse");
}

// Floats print as numpy's str() does (onnx.reference's Cast is astype(str)):
// positional within [1e-4, 1e6) for float32 and [1e-4, 1e16) for double,
// scientific outside; integral values keep their ".0". Expected strings are
// numpy 2.4's.
TEST(ElementwiseCastTest, FloatsPrintAsNumpy) {
  SingleNode to_str = Op("Cast", {Attribute::Int("to", 8)});
  auto f32 = RunNode(to_str, {F({100.0f, 1.5f, -3.0f, 999999.0f, 1e6f, 123456789.0f, 1e-4f, 0.000100002f,
                                 1e-5f, -0.0f, 0.1f, 1e16f})});
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ((*f32)[0].strings(),
            (std::vector<std::string>{"100.0", "1.5", "-3.0", "999999.0", "1e+06", "1.2345679e+08", "1e-04",
                                      "0.000100002", "1e-05", "-0.0", "0.1", "1e+16"}));
  auto f64 = RunNode(to_str, {Tensor::FromVector<double>({1e6, 123456789.0, 1e-4, 9.9e15, 1e16}, {5})});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_EQ((*f64)[0].strings(),
            (std::vector<std::string>{"1000000.0", "123456789.0", "0.0001", "9900000000000000.0", "1e+16"}));
  Tensor half(DType::kFloat16, {3});
  half.mutable_data<uint16_t>()[0] = FloatToHalf(999.0f);
  half.mutable_data<uint16_t>()[1] = FloatToHalf(1000.0f);
  half.mutable_data<uint16_t>()[2] = FloatToHalf(65504.0f);
  auto f16 = RunNode(to_str, {half});
  ASSERT_TRUE(f16.ok()) << f16.status();
  EXPECT_EQ((*f16)[0].strings(), (std::vector<std::string>{"999.0", "1e+03", "6.55e+04"}));
}

TEST(ElementwiseCastTest, HalfTypes) {
  SingleNode to_half = Op("Cast", {Attribute::Int("to", 10)});
  EXPECT_EQ(Run1(to_half, {F({0.5f, 1024})}, DType::kFloat16), (std::vector<double>{0.5, 1024}));
  // bfloat16 truncates like the ONNX 1.12 suite: 1 + 2^-8 + 2^-9 drops to 1.
  SingleNode to_bf16 = Op("Cast", {Attribute::Int("to", 16)});
  EXPECT_EQ(Run1(to_bf16, {F({1.0f + 1.0f / 256 + 1.0f / 512})}, DType::kBFloat16),
            (std::vector<double>{1.0}));
  Tensor bf(DType::kBFloat16, {1});
  bf.mutable_data<uint16_t>()[0] = 0x3ef5;  // 0.478515625
  EXPECT_EQ(Run1(Op("Cast", {Attribute::Int("to", 1)}), {bf}, DType::kFloat),
            (std::vector<double>{0.478515625}));
  SingleNode like = Op("CastLike", {}, 15);
  EXPECT_EQ(Run1(like, {F({2.5f}), Tensor::FromVector<double>({0}, {1})}, DType::kDouble),
            (std::vector<double>{2.5}));
}

TEST(ElementwiseCastTest, InferAndTraits) {
  SingleNode to_double = Op("Cast", {Attribute::Int("to", 11)});
  auto t = InferNode(to_double, {FloatT({Dim::Symbol("b"), 2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].dtype, DType::kDouble);
  EXPECT_EQ((*t)[0].shape.ToString(), "[b, 2]");
  StaticResult widen = Static(to_double, {FloatT({2})});
  EXPECT_EQ(widen.traits.invertibility, Invertibility::kInvertible);
  SingleNode to_i8 = Op("Cast", {Attribute::Int("to", 3)});
  StaticResult narrow = Static(to_i8, {FloatT({2})});
  EXPECT_EQ(narrow.traits.collapse, CollapseKind::kQuantizes);
  StaticResult i8_i32 = Static(Op("Cast", {Attribute::Int("to", 6)}),
                               {TypeInfo::Tensor(DType::kInt8, Shape({2}))});
  EXPECT_EQ(i8_i32.traits.invertibility, Invertibility::kInvertible);
  EXPECT_FALSE(InferNode(Op("Cast", {Attribute::Int("to", 99)}),
                         {FloatT({2})})
                   .ok());
  EXPECT_FALSE(InferNode(Op("Cast"), {FloatT({2})}).ok());
}

}  // namespace
}  // namespace aic

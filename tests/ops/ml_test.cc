// Tests of the ai.onnx.ml family: the shared post transforms, the tree
// ensembles (classic and opset 5), linear models, SVMs, preprocessing and
// encoders. Expected values are computed by hand in the comments; the
// binary-class conventions are ONNX Runtime's (checked against it by
// tests/integration/sklearn_vs_ort.py on real skl2onnx models).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/post_transform.h"
#include "ops/registry.h"

namespace aic {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One ai.onnx.ml node over graph inputs in0, in1, ... at ml opset `opset`.
std::unique_ptr<Model> MlModel(const std::string& op, std::vector<Attribute> attrs, const std::vector<Tensor>& inputs,
                               int64_t opset, size_t outputs) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(b.Input(absl::StrCat("in", i),
                          TypeInfo::Tensor(inputs[i].dtype(), Shape::FromValues(inputs[i].dims()))));
  }
  std::vector<Value*> outs = b.OpN(op, ins, outputs, std::move(attrs), kMlDomain);
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i]->set_name(absl::StrCat("out", i));
    b.Output(outs[i]);
  }
  std::unique_ptr<Model> m = b.Build(17);
  m->opset_imports.push_back({kMlDomain, opset});
  return m;
}

absl::StatusOr<std::vector<RuntimeValue>> RunValues(const std::string& op, std::vector<Attribute> attrs,
                                                   const std::vector<Tensor>& inputs, size_t outputs, int64_t opset) {
  std::unique_ptr<Model> m = MlModel(op, std::move(attrs), inputs, opset, outputs);
  std::map<std::string, RuntimeValue> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds[absl::StrCat("in", i)] = RuntimeValue(inputs[i]);
  ReferenceExecutor exec(*m);
  return exec.Run(feeds);
}

absl::StatusOr<std::vector<Tensor>> RunMl(const std::string& op, std::vector<Attribute> attrs,
                                        const std::vector<Tensor>& inputs, size_t outputs = 1, int64_t opset = 1) {
  AIC_ASSIGN_OR_RETURN(std::vector<RuntimeValue> outs, RunValues(op, std::move(attrs), inputs, outputs, opset));
  std::vector<Tensor> result;
  for (RuntimeValue& v : outs) result.push_back(std::move(v.tensor));
  return result;
}

absl::StatusOr<std::vector<TypeInfo>> Infer(const std::string& op, std::vector<Attribute> attrs,
                                            const std::vector<Tensor>& inputs, size_t outputs = 1, int64_t opset = 1) {
  std::unique_ptr<Model> m = MlModel(op, std::move(attrs), inputs, opset, outputs);
  InferOptions options;
  options.best_effort = false;
  AIC_RETURN_IF_ERROR(InferShapes(*m, options));
  std::vector<TypeInfo> types;
  for (const Value* v : m->graph->outputs()) types.push_back(v->type());
  return types;
}

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }
Tensor I(std::vector<int64_t> v, std::vector<int64_t> dims) { return Tensor::FromVector<int64_t>(v, std::move(dims)); }

void ExpectValues(const Tensor& t, std::vector<double> want, double tol = 1e-5) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size())) << t.DebugString();
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = t.ElementAsDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got)) << "element " << i;
    else EXPECT_NEAR(got, want[i], tol) << "element " << i << " of " << t.DebugString(16);
  }
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& r, const std::string& op, const std::string& words) {
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(op), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// ---- post transforms ----

TEST(MlPostTransformTest, Formulas) {
  EXPECT_NEAR(MlLogistic(0.3), Sigmoid(0.3), 1e-12);
  EXPECT_NEAR(MlLogistic(-800), 0.0, 1e-300);  // no overflow in the tail
  EXPECT_NEAR(MlProbit(0.5), 0.0, 1e-12);
  EXPECT_NEAR(MlProbit(0.8), 0.8416, 2e-3);  // the exact quantile is 0.84162
  EXPECT_TRUE(std::isnan(MlProbit(-0.3)));
  double soft[3] = {0.0, std::log(3.0), 0.0};
  ApplyPostTransform(PostTransform::kSoftmax, soft, 3);  // e⁰, 3, e⁰ over 5
  EXPECT_NEAR(soft[1], 0.6, 1e-12);
  double zero[3] = {0.0, std::log(3.0), std::log(1.0 / 3.0) + 1e-9};
  ApplyPostTransform(PostTransform::kSoftmaxZero, zero, 3);  // the 0 stays out: 3 and 1/3 over 10/3
  EXPECT_EQ(zero[0], 0.0);
  EXPECT_NEAR(zero[1], 0.9, 1e-9);
  double out[2];
  ExpandBinaryScore(PostTransform::kNone, SecondColumn::kComplement, 0.3, out);
  EXPECT_NEAR(out[0], 0.7, 1e-12);
  ExpandBinaryScore(PostTransform::kNone, SecondColumn::kNegation, 0.3, out);
  EXPECT_NEAR(out[0], -0.3, 1e-12);
  ExpandBinaryScore(PostTransform::kLogistic, SecondColumn::kComplement, 0.3, out);
  EXPECT_NEAR(out[0], Sigmoid(-0.3), 1e-12);
  EXPECT_NEAR(out[1], Sigmoid(0.3), 1e-12);
  ExpandBinaryScore(PostTransform::kProbit, SecondColumn::kComplement, 0.5, out);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_FALSE(ParsePostTransform("SOFTMAXX").ok());
  EXPECT_FALSE(PostTransformFromInt(5).ok());
}

// ---- classic tree ensembles ----

// Tree 0: x0 <= 0 ? leaf 1 : leaf 2. Tree 1: x1 < 1 ? leaf 1 : leaf 2, NaN true.
std::vector<Attribute> TwoTrees(const std::string& prefix, std::vector<int64_t> ids, std::vector<int64_t> nodes,
                                std::vector<int64_t> trees, std::vector<float> weights) {
  return {Attribute::Ints("nodes_treeids", {0, 0, 0, 1, 1, 1}),
          Attribute::Ints("nodes_nodeids", {0, 1, 2, 0, 1, 2}),
          Attribute::Ints("nodes_featureids", {0, 0, 0, 1, 0, 0}),
          Attribute::Floats("nodes_values", {0, 0, 0, 1, 0, 0}),
          Attribute::Strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"}),
          Attribute::Ints("nodes_truenodeids", {1, 0, 0, 1, 0, 0}),
          Attribute::Ints("nodes_falsenodeids", {2, 0, 0, 2, 0, 0}),
          Attribute::Ints("nodes_missing_value_tracks_true", {0, 0, 0, 1, 0, 0}),
          Attribute::Ints(prefix + "_treeids", std::move(trees)),
          Attribute::Ints(prefix + "_nodeids", std::move(nodes)),
          Attribute::Ints(prefix + "_ids", std::move(ids)),
          Attribute::Floats(prefix + "_weights", std::move(weights))};
}

std::vector<Attribute> RegressorAttrs(std::string aggregate) {
  std::vector<Attribute> a = TwoTrees("target", {0, 0, 0, 0}, {1, 2, 1, 2}, {0, 0, 1, 1}, {1.0f, 2.0f, 10.0f, 20.0f});
  a.push_back(Attribute::Int("n_targets", 1));
  a.push_back(Attribute::String("aggregate_function", std::move(aggregate)));
  return a;
}

TEST(TreeEnsembleRegressorTest, AggregatesAndRoutesNaN) {
  // Rows: (−1, 0) → leaves 1 + 10; (1, 5) → 2 + 20; (1, NaN) → 2 + 10 (NaN true).
  Tensor x = F({-1, 0, 1, 5, 1, NAN}, {3, 2});
  auto sum = RunMl("TreeEnsembleRegressor", RegressorAttrs("SUM"), {x});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ((*sum)[0].dims(), (std::vector<int64_t>{3, 1}));
  ExpectValues((*sum)[0], {11, 22, 12});
  auto avg = RunMl("TreeEnsembleRegressor", RegressorAttrs("AVERAGE"), {x});
  ASSERT_TRUE(avg.ok()) << avg.status();
  ExpectValues((*avg)[0], {5.5, 11, 6});
  auto mx = RunMl("TreeEnsembleRegressor", RegressorAttrs("MAX"), {x});
  ASSERT_TRUE(mx.ok()) << mx.status();
  ExpectValues((*mx)[0], {10, 20, 10});
  std::vector<Attribute> based = RegressorAttrs("MIN");
  based.push_back(Attribute::Floats("base_values", {0.5f}));
  auto mn = RunMl("TreeEnsembleRegressor", based, {x});
  ASSERT_TRUE(mn.ok()) << mn.status();
  ExpectValues((*mn)[0], {1.5, 2.5, 2.5});
}

TEST(TreeEnsembleRegressorTest, SingleTargetTransformIsProbitOnly) {
  // As ONNX Runtime: LOGISTIC leaves a single score alone, PROBIT applies.
  // One tree: x0 <= 0 ? 0.3 : 0.8.
  std::vector<Attribute> a = {
      Attribute::Ints("nodes_treeids", {0, 0, 0}), Attribute::Ints("nodes_nodeids", {0, 1, 2}),
      Attribute::Ints("nodes_featureids", {0, 0, 0}), Attribute::Floats("nodes_values", {0, 0, 0}),
      Attribute::Strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"}), Attribute::Ints("nodes_truenodeids", {1, 0, 0}),
      Attribute::Ints("nodes_falsenodeids", {2, 0, 0}), Attribute::Ints("target_treeids", {0, 0}),
      Attribute::Ints("target_nodeids", {1, 2}), Attribute::Ints("target_ids", {0, 0}),
      Attribute::Floats("target_weights", {0.3f, 0.8f}), Attribute::Int("n_targets", 1),
      Attribute::String("post_transform", "LOGISTIC")};
  Tensor x = F({-1}, {1, 1});
  auto r = RunMl("TreeEnsembleRegressor", a, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {0.3});
  a.back() = Attribute::String("post_transform", "PROBIT");
  r = RunMl("TreeEnsembleRegressor", a, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {MlProbit(0.3)});
}

TEST(TreeEnsembleRegressorTest, Opset3DoubleTensors) {
  std::vector<Attribute> a = RegressorAttrs("SUM");
  a[3] = Attribute::TensorValue("nodes_values_as_tensor", Tensor::FromVector<double>({0, 0, 0, 1, 0, 0}, {6}));
  a[11] = Attribute::TensorValue("target_weights_as_tensor", Tensor::FromVector<double>({1, 2, 10, 20}, {4}));
  Tensor x = Tensor::FromVector<double>({-1, 0, 1, 5}, {2, 2});
  auto r = RunMl("TreeEnsembleRegressor", a, {x}, 1, /*opset=*/3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kFloat);  // Y is float whatever X is
  ExpectValues((*r)[0], {11, 22});
  // Opset 1 has no *_as_tensor attributes.
  ExpectError(RunMl("TreeEnsembleRegressor", a, {x}, 1, 1), "TreeEnsembleRegressor", "needs ai.onnx.ml opset 3");
}

TEST(TreeEnsembleRegressorTest, BadModelsFail) {
  std::vector<Attribute> a = RegressorAttrs("SUM");
  a[5] = Attribute::Ints("nodes_truenodeids", {7, 0, 0, 1, 0, 0});
  ExpectError(RunMl("TreeEnsembleRegressor", a, {F({0, 0}, {1, 2})}), "TreeEnsembleRegressor", "missing node 7");
  // Feature 1 is read, X has one feature.
  ExpectError(RunMl("TreeEnsembleRegressor", RegressorAttrs("SUM"), {F({0}, {1, 1})}), "TreeEnsembleRegressor",
              "feature 1 of 1");
  std::vector<Attribute> agg = RegressorAttrs("MEDIAN");
  ExpectError(RunMl("TreeEnsembleRegressor", agg, {F({0, 0}, {1, 2})}), "TreeEnsembleRegressor", "MEDIAN");
}

std::vector<Attribute> BinaryClassifier(std::vector<float> weights) {
  // Only class 0 has weights: skl2onnx's binary forests and boosters.
  std::vector<Attribute> a = TwoTrees("class", {0, 0, 0, 0}, {1, 2, 1, 2}, {0, 0, 1, 1}, std::move(weights));
  a.push_back(Attribute::Ints("classlabels_int64s", {4, 9}));
  return a;
}

TEST(TreeEnsembleClassifierTest, BinaryProbability) {
  // All weights ≥ 0: s is P(class 1); [1 − s, s], label 9 when s > 0.5.
  // Rows: (−1, 0) → 0.1 + 0.2; (1, 5) → 0.3 + 0.4.
  auto r = RunMl("TreeEnsembleClassifier", BinaryClassifier({0.1f, 0.3f, 0.2f, 0.4f}), {F({-1, 0, 1, 5}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 4);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 9);
  ExpectValues((*r)[1], {0.7, 0.3, 0.3, 0.7});
}

TEST(TreeEnsembleClassifierTest, BinaryMarginWithLogistic) {
  // A negative weight: s is a margin; label 9 when s > 0, scores [σ(−s), σ(s)].
  std::vector<Attribute> a = BinaryClassifier({-0.5f, 0.3f, 0.2f, 0.4f});
  a.push_back(Attribute::String("post_transform", "LOGISTIC"));
  a.push_back(Attribute::Floats("base_values", {0.1f}));
  auto r = RunMl("TreeEnsembleClassifier", a, {F({-1, 0, 1, 5}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0: −0.5 + 0.2 + 0.1 = −0.2 → 4; row 1: 0.3 + 0.4 + 0.1 = 0.8 → 9.
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 4);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 9);
  ExpectValues((*r)[1], {Sigmoid(0.2), Sigmoid(-0.2), Sigmoid(-0.8), Sigmoid(0.8)});
}

TEST(TreeEnsembleClassifierTest, MulticlassStringLabels) {
  // Three classes: tree 0 votes class 0 (x0 ≤ 0) or 1, tree 1 class 2 or 1.
  std::vector<Attribute> a = TwoTrees("class", {0, 1, 2, 1}, {1, 2, 1, 2}, {0, 0, 1, 1}, {1.0f, 1.0f, 0.5f, 0.5f});
  a.push_back(Attribute::Strings("classlabels_strings", {"ant", "bee", "cat"}));
  a.push_back(Attribute::String("post_transform", "SOFTMAX"));
  auto r = RunMl("TreeEnsembleClassifier", a, {F({-1, 0, 1, 5}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0: [1, 0, 0.5] → ant; row 1: [0, 1.5, 0] → bee.
  EXPECT_EQ((*r)[0].strings(), (std::vector<std::string>{"ant", "bee"}));
  const double d0 = 1 + std::exp(-1) + std::exp(-0.5), d1 = 2 + std::exp(1.5);
  ExpectValues((*r)[1], {1 / d0, std::exp(-1) / d0, std::exp(-0.5) / d0, 1 / d1, std::exp(1.5) / d1, 1 / d1});
  auto types = Infer("TreeEnsembleClassifier", a, {F({-1, 0, 1, 5}, {2, 2})}, 2);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kString);
  EXPECT_EQ((*types)[1].shape, Shape({2, 3}));
}

TEST(TreeEnsembleClassifierTest, BadClassIdFails) {
  std::vector<Attribute> a = BinaryClassifier({0.1f, 0.3f, 0.2f, 0.4f});
  a[10] = Attribute::Ints("class_ids", {0, 0, 0, 2});
  ExpectError(RunMl("TreeEnsembleClassifier", a, {F({0, 0}, {1, 2})}, 2), "TreeEnsembleClassifier",
              "target 2 out of range for 2");
  std::vector<Attribute> no_labels = TwoTrees("class", {0, 0, 0, 0}, {1, 2, 1, 2}, {0, 0, 1, 1}, {1, 1, 1, 1});
  ExpectError(RunMl("TreeEnsembleClassifier", no_labels, {F({0, 0}, {1, 2})}, 2), "TreeEnsembleClassifier",
              "classlabels_strings");
}

// ---- TreeEnsemble (opset 5) ----

std::vector<Attribute> Opset5Tree(int64_t post) {
  // x0 <= 0 ? leaf 0 (target 0, 0.3) : leaf 1 (target 1, −0.8).
  return {Attribute::Ints("nodes_featureids", {0}),
          Attribute::TensorValue("nodes_modes", Tensor::FromVector<uint8_t>({0}, {1})),
          Attribute::TensorValue("nodes_splits", F({0}, {1})),
          Attribute::Ints("nodes_truenodeids", {0}), Attribute::Ints("nodes_trueleafs", {1}),
          Attribute::Ints("nodes_falsenodeids", {1}), Attribute::Ints("nodes_falseleafs", {1}),
          Attribute::Ints("leaf_targetids", {0, 1}), Attribute::TensorValue("leaf_weights", F({0.3f, -0.8f}, {2})),
          Attribute::Ints("tree_roots", {0}), Attribute::Int("n_targets", 2), Attribute::Int("post_transform", post)};
}

TEST(TreeEnsembleTest, Opset5TargetsAndTransforms) {
  Tensor x = F({-1, 1}, {2, 1});
  auto none = RunMl("TreeEnsemble", Opset5Tree(0), {x}, 1, 5);
  ASSERT_TRUE(none.ok()) << none.status();
  ExpectValues((*none)[0], {0.3, 0, 0, -0.8});  // the target no leaf reached is 0
  auto soft = RunMl("TreeEnsemble", Opset5Tree(1), {x}, 1, 5);  // 1 is SOFTMAX in the ONNX numbering
  ASSERT_TRUE(soft.ok()) << soft.status();
  ExpectValues((*soft)[0], {Sigmoid(0.3), Sigmoid(-0.3), Sigmoid(0.8), Sigmoid(-0.8)});
  auto probit = RunMl("TreeEnsemble", Opset5Tree(4), {x}, 1, 5);
  ASSERT_TRUE(probit.ok()) << probit.status();
  EXPECT_NEAR((*probit)[0].ElementAsDouble(0), MlProbit(0.3), 1e-6);
  std::vector<Attribute> bad = Opset5Tree(0);
  bad[3] = Attribute::Ints("nodes_truenodeids", {5});
  ExpectError(RunMl("TreeEnsemble", bad, {x}, 1, 5), "TreeEnsemble", "out of range");
}

// ---- linear models ----

TEST(LinearClassifierTest, BinaryOneRow) {
  // s = 0.3·x0 − 0.2·x1 + 0.1; label 9 when s > 0; scores [1 − s, s].
  std::vector<Attribute> a = {Attribute::Floats("coefficients", {0.3f, -0.2f}), Attribute::Floats("intercepts", {0.1f}),
                              Attribute::Ints("classlabels_ints", {4, 9})};
  auto r = RunMl("LinearClassifier", a, {F({1, 0, -1, 1}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 9);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 4);
  ExpectValues((*r)[1], {0.6, 0.4, 1.4, -0.4});
}

TEST(LinearClassifierTest, MulticlassSoftmax) {
  std::vector<Attribute> a = {Attribute::Floats("coefficients", {1, 0, 0, 1, 0, 0}),
                              Attribute::Floats("intercepts", {0, 0, 1}),
                              Attribute::Strings("classlabels_strings", {"a", "b", "c"}),
                              Attribute::String("post_transform", "SOFTMAX")};
  auto r = RunMl("LinearClassifier", a, {F({2, 0}, {2})}, 2);  // a rank-1 X is one row
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].strings(), (std::vector<std::string>{"a"}));
  const double d = std::exp(2) + 1 + std::exp(1);
  ExpectValues((*r)[1], {std::exp(2) / d, 1 / d, std::exp(1) / d});
  a[2] = Attribute::Strings("classlabels_strings", {"a", "b"});
  ExpectError(RunMl("LinearClassifier", a, {F({2, 0}, {2})}, 2), "LinearClassifier", "3 score rows but 2 class labels");
}

TEST(LinearRegressorTest, TwoTargets) {
  std::vector<Attribute> a = {Attribute::Floats("coefficients", {1, 2, -1, 0}), Attribute::Floats("intercepts", {0.5f, 1}),
                              Attribute::Int("targets", 2)};
  auto r = RunMl("LinearRegressor", a, {F({1, 1, 2, -1}, {2, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {3.5, 0, 0.5, -1});
  ExpectError(RunMl("LinearRegressor", a, {F({1, 1, 1}, {1, 3})}), "LinearRegressor", "X has 3 features, the model 2");
  a[0] = Attribute::Floats("coefficients", {1, 2, 3});
  ExpectError(RunMl("LinearRegressor", a, {F({1, 1}, {1, 2})}), "LinearRegressor", "do not split into 2 rows");
}

// ---- SVMs ----

TEST(SvmRegressorTest, KernelsAndOneClass) {
  // Two support vectors (1, 0) and (0, 1); RBF γ = 0.5 at x = (1, 1): both e^−0.5.
  std::vector<Attribute> a = {Attribute::String("kernel_type", "RBF"), Attribute::Floats("kernel_params", {0.5f, 0, 3}),
                              Attribute::Floats("support_vectors", {1, 0, 0, 1}), Attribute::Int("n_supports", 2),
                              Attribute::Floats("coefficients", {2, -0.5f}), Attribute::Floats("rho", {0.1f})};
  auto r = RunMl("SVMRegressor", a, {F({1, 1}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {1.5 * std::exp(-0.5) + 0.1});
  a.push_back(Attribute::Int("one_class", 1));
  r = RunMl("SVMRegressor", a, {F({1, 1, -9, -9}, {2, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {1, 1});  // the far point still gets ρ = 0.1 > 0
  // POLY (γ·x·sv + c0)^d with γ = 1, c0 = 1, d = 2 at x = (1, 2): (1+1)², (2+1)².
  std::vector<Attribute> poly = {Attribute::String("kernel_type", "POLY"), Attribute::Floats("kernel_params", {1, 1, 2}),
                                 Attribute::Floats("support_vectors", {1, 0, 0, 1}), Attribute::Int("n_supports", 2),
                                 Attribute::Floats("coefficients", {1, 1}), Attribute::Floats("rho", {0})};
  r = RunMl("SVMRegressor", poly, {F({1, 2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues((*r)[0], {13});
  poly[4] = Attribute::Floats("coefficients", {1, 1, 1});
  ExpectError(RunMl("SVMRegressor", poly, {F({1, 2}, {1, 2})}), "SVMRegressor", "3 coefficients for 2 support vectors");
}

std::vector<Attribute> TwoClassSvc() {
  // Linear kernel, one vector per class: s = 1·(x·sv0) − 1·(x·sv1) + 0.1.
  return {Attribute::String("kernel_type", "LINEAR"), Attribute::Floats("support_vectors", {1, 0, 0, 1}),
          Attribute::Ints("vectors_per_class", {1, 1}), Attribute::Floats("coefficients", {1, -1}),
          Attribute::Floats("rho", {0.1f}), Attribute::Ints("classlabels_ints", {3, 8})};
}

TEST(SvmClassifierTest, BinaryVotesAndMargins) {
  // x = (1, 0): s = 1.1 votes class 0 (3); x = (0, 1): s = −0.9 votes 8. Z = [−s, s].
  auto r = RunMl("SVMClassifier", TwoClassSvc(), {F({1, 0, 0, 1}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 3);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 8);
  ExpectValues((*r)[1], {-1.1, 1.1, 0.9, -0.9});
}

TEST(SvmClassifierTest, PlattProbabilities) {
  // P(class 0) = 1 − σ(a·s + b); with two classes the coupling returns the
  // pair's probabilities (within its 0.0025 tolerance); the label still comes from votes.
  std::vector<Attribute> a = TwoClassSvc();
  a.push_back(Attribute::Floats("prob_a", {-2}));
  a.push_back(Attribute::Floats("prob_b", {0.5f}));
  auto r = RunMl("SVMClassifier", a, {F({1, 0}, {1, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  const double p0 = 1 - Sigmoid(-2 * 1.1 + 0.5);
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 3);
  ExpectValues((*r)[1], {p0, 1 - p0}, 3e-3);
}

TEST(SvmClassifierTest, ThreeClassesPairwise) {
  // Vectors e0, e1, e2 for classes 0..2; coefficients rows [classes − 1, 3].
  // Pair (0,1): c[0][0]·k0 + c[0][1]·k1 + ρ0 = k0 − k1; (0,2): k0 − k2; (1,2): k1 − k2.
  std::vector<Attribute> a = {Attribute::Floats("support_vectors", {1, 0, 0, 0, 1, 0, 0, 0, 1}),
                              Attribute::Ints("vectors_per_class", {1, 1, 1}),
                              Attribute::Floats("coefficients", {1, -1, -1, 1, 1, -1}), Attribute::Floats("rho", {0, 0, 0}),
                              Attribute::Strings("classlabels_strings", {"x", "y", "z"})};
  auto r = RunMl("SVMClassifier", a, {F({0, 2, 1}, {1, 3})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  // Scores −2, −1, 1: votes y, z, y → y.
  EXPECT_EQ((*r)[0].strings(), (std::vector<std::string>{"y"}));
  ExpectValues((*r)[1], {-2, -1, 1});
  a[1] = Attribute::Ints("vectors_per_class", {1, 1});
  ExpectError(RunMl("SVMClassifier", a, {F({0, 2, 1}, {1, 3})}, 2), "SVMClassifier", "2 vectors_per_class entries for 3");
}

TEST(SvmClassifierTest, LiblinearBinaryRule) {
  // No support vectors: one score row per class, all offset by rho[0]. With a
  // negative weight, class 1 wins once the top score is > 0 (ORT's rule).
  std::vector<Attribute> a = {Attribute::Floats("coefficients", {0.3f, -0.2f, 0.5f, 0.5f}), Attribute::Floats("rho", {0.1f}),
                              Attribute::Ints("classlabels_ints", {3, 8})};
  auto r = RunMl("SVMClassifier", a, {F({1, 2, 0.3f, -0.7f}, {2, 2})}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0: [0, 1.6] → 8; row 1: [0.33, −0.1]: top 0.33 > 0 → 8.
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 8);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 8);
  ExpectValues((*r)[1], {0, 1.6, 0.33, -0.1});
}

// ---- preprocessing ----

TEST(ScalerTest, PerFeatureAndBroadcast) {
  auto r = RunMl("Scaler", {Attribute::Floats("offset", {1, 0}), Attribute::Floats("scale", {2, 0.5f})},
               {I({3, 4, 5, 6}, {2, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kFloat);
  ExpectValues((*r)[0], {4, 2, 8, 3});
  ExpectError(RunMl("Scaler", {Attribute::Floats("scale", {1, 2, 3})}, {F({1, 2}, {1, 2})}), "Scaler",
              "scale has 3 values for 2 features");
}

TEST(NormalizerTest, Norms) {
  Tensor x = F({3, -4, 0, 0, -3, -1}, {3, 2});
  auto l2 = RunMl("Normalizer", {Attribute::String("norm", "L2")}, {x});
  ASSERT_TRUE(l2.ok()) << l2.status();
  ExpectValues((*l2)[0], {0.6, -0.8, 0, 0, -3 / std::sqrt(10.0), -1 / std::sqrt(10.0)});
  auto l1 = RunMl("Normalizer", {Attribute::String("norm", "L1")}, {x});
  ASSERT_TRUE(l1.ok()) << l1.status();
  ExpectValues((*l1)[0], {3 / 7.0, -4 / 7.0, 0, 0, -0.75, -0.25});
  auto mx = RunMl("Normalizer", {Attribute::String("norm", "MAX")}, {x});  // divides by the max, sign kept
  ASSERT_TRUE(mx.ok()) << mx.status();
  ExpectValues((*mx)[0], {1, -4 / 3.0, 0, 0, 3, 1});
  ExpectError(RunMl("Normalizer", {Attribute::String("norm", "L3")}, {x}), "Normalizer", "L3");
}

TEST(ImputerTest, NaNAndIntegers) {
  auto f = RunMl("Imputer", {Attribute::Floats("imputed_value_floats", {9, 8}), Attribute::Float("replaced_value_float", NAN)},
               {F({1, NAN, NAN, 4}, {2, 2})});
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectValues((*f)[0], {1, 8, 9, 4});
  auto i = RunMl("Imputer", {Attribute::Ints("imputed_value_int64s", {7}), Attribute::Int("replaced_value_int64", -1)},
               {I({1, -1, -1, 5}, {2, 2})});
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ((*i)[0].dtype(), DType::kInt64);
  ExpectValues((*i)[0], {1, 7, 7, 5});
  ExpectError(RunMl("Imputer", {Attribute::Floats("imputed_value_floats", {9})}, {I({1}, {1, 1})}), "Imputer",
              "imputed_value_int64s must be set");
}

TEST(FeatureVectorizerTest, CutsAndPads) {
  // Widths 3 and 1: the 2-wide input is padded, the 2-wide second cut to 1.
  auto r = RunMl("FeatureVectorizer", {Attribute::Ints("inputdimensions", {3, 1})},
               {F({1, 2, 3, 4}, {2, 2}), I({5, 6, 7, 8}, {2, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{2, 4}));
  ExpectValues((*r)[0], {1, 2, 0, 5, 3, 4, 0, 7});
  ExpectError(RunMl("FeatureVectorizer", {Attribute::Ints("inputdimensions", {3, 1})}, {F({1, 2}, {1, 2}), F({1, 2}, {2, 1})}),
              "FeatureVectorizer", "has 2 rows, input 0 has 1");
}

// ---- encoders ----

TEST(OneHotEncoderTest, IntsStringsAndUnknown) {
  auto r = RunMl("OneHotEncoder", {Attribute::Ints("cats_int64s", {1, 2, 3})}, {F({1.7f, 3, 5}, {3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{3, 3}));
  ExpectValues((*r)[0], {1, 0, 0, 0, 0, 1, 0, 0, 0});  // 1.7 truncates to 1; 5 is unknown
  auto s = RunMl("OneHotEncoder", {Attribute::Strings("cats_strings", {"q", "a"})},
               {Tensor::FromStrings({"a", "q"}, {1, 2})});
  ASSERT_TRUE(s.ok()) << s.status();
  ExpectValues((*s)[0], {0, 1, 1, 0});
  ExpectError(RunMl("OneHotEncoder", {Attribute::Ints("cats_int64s", {1}), Attribute::Int("zeros", 0)}, {I({2}, {1})}),
              "OneHotEncoder", "not a known category and zeros = 0");
}

TEST(CategoryMapperTest, BothDirections) {
  std::vector<Attribute> a = {Attribute::Strings("cats_strings", {"a", "b"}), Attribute::Ints("cats_int64s", {5, 6}),
                              Attribute::Int("default_int64", -9), Attribute::String("default_string", "none")};
  auto s2i = RunMl("CategoryMapper", a, {Tensor::FromStrings({"b", "zz"}, {2})});
  ASSERT_TRUE(s2i.ok()) << s2i.status();
  ExpectValues((*s2i)[0], {6, -9});
  auto i2s = RunMl("CategoryMapper", a, {I({5, 7}, {2})});
  ASSERT_TRUE(i2s.ok()) << i2s.status();
  EXPECT_EQ((*i2s)[0].strings(), (std::vector<std::string>{"a", "none"}));
  a[1] = Attribute::Ints("cats_int64s", {5});
  ExpectError(RunMl("CategoryMapper", a, {I({5}, {1})}), "CategoryMapper", "cats_strings has 2 entries, cats_int64s 1");
}

// ---- ZipMap ----

TEST(ZipMapTest, RowsBecomeMapsOverTheLabels) {
  auto r = RunValues("ZipMap", {Attribute::Ints("classlabels_int64s", {7, 9})}, {F({0.25f, 0.75f, 1, 0}, {2, 2})}, 1, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  const RuntimeValue& z = (*r)[0];
  ASSERT_TRUE(z.is_map_sequence());
  ExpectValues(z.map_keys, {7, 9});
  EXPECT_EQ(z.map_values.dims(), (std::vector<int64_t>{2, 2}));  // map 1 is {7: 1, 9: 0}
  ExpectValues(z.map_values, {0.25, 0.75, 1, 0});
  auto types = Infer("ZipMap", {Attribute::Strings("classlabels_strings", {"a", "b"})}, {F({0, 1}, {1, 2})});
  ASSERT_TRUE(types.ok()) << types.status();
  const TypeInfo& seq = (*types)[0];  // seq(map(string, float))
  ASSERT_EQ(seq.kind, TypeInfo::Kind::kSequence);
  ASSERT_EQ(seq.element->kind, TypeInfo::Kind::kMap);
  EXPECT_EQ(seq.element->dtype, DType::kString);
  EXPECT_EQ(seq.element->element->dtype, DType::kFloat);
  ExpectError(RunMl("ZipMap", {Attribute::Strings("classlabels_strings", {"a", "b", "c"})}, {F({0, 1}, {1, 2})}),
              "ZipMap", "X has 2 columns for 3 labels");
}

// ---- metadata ----

TEST(MlOpsTest, EveryOpHasItsHooks) {
  for (const char* op : {"TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble", "LinearClassifier",
                         "LinearRegressor", "SVMClassifier", "SVMRegressor", "Scaler", "Normalizer", "Imputer",
                         "FeatureVectorizer", "OneHotEncoder", "CategoryMapper", "ZipMap"}) {
    const OpDef* def = OpRegistry::Global().Find(kMlDomain, op, 5);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_TRUE(def->infer && def->traits && def->cost && def->kernel) << op;
  }
  // Classic tree ops at both opsets; TreeEnsemble only from 5.
  EXPECT_EQ(OpRegistry::Global().Find(kMlDomain, "TreeEnsembleClassifier", 2)->since_version, 1);
  EXPECT_EQ(OpRegistry::Global().Find(kMlDomain, "TreeEnsembleRegressor", 4)->since_version, 3);
  EXPECT_EQ(OpRegistry::Global().Find(kMlDomain, "TreeEnsemble", 4), nullptr);
  auto types = Infer("SVMClassifier", TwoClassSvc(), {F({1, 0, 0, 1}, {2, 2})}, 2);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].dtype, DType::kInt64);
  EXPECT_EQ((*types)[1].shape, Shape({2, 2}));
}

}  // namespace
}  // namespace aic

// The ai.onnx.ml lowerings (exec/cpu/ops_native_ml.cc) against the
// reference kernels, bit for bit, on random forests and random inputs:
// every split mode, missing-value tracking with NaN features, multi-class
// and binary classifiers (ONNX Runtime's one-score-column cases), each
// post_transform, SUM / AVERAGE / MIN / MAX, base values, sparse leaves,
// double thresholds (opset 3 *_as_tensor), TreeEnsemble-5; Scaler,
// Normalizer, Linear* and ArrayFeatureExtractor. Each case checks the plan
// took no reference step, except string class labels, which stay on the
// reference kernel (the arena holds no strings). Last, the five skl2onnx
// models of the zoo (build/zoo, made by bench/zoo/make_zoo.py; skipped
// without it) compile with no reference step. SVMs agree to 1e-6 (their
// lowering's kernel row is not the reference's operation for operation).
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "onnx_io/load.h"
#include "ops/infer_shapes.h"
#include "ops/ml/ml_ops.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

using Dims = std::vector<int64_t>;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One ai.onnx.ml node over input "x" at ml opset `opset`.
std::unique_ptr<Model> MlModel(const std::string& op, std::vector<Attribute> attrs, DType x_dtype, const Dims& x_dims,
                               size_t outputs, int64_t opset = 1) {
  GraphBuilder b;
  Value* x = b.Input("x", x_dtype, D(x_dims));
  std::vector<Value*> outs = b.OpN(op, {x}, outputs, std::move(attrs), kMlDomain);
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i]->set_name(absl::StrCat("out", i));
    b.Output(outs[i]);
  }
  std::unique_ptr<Model> m = b.Build(17);
  m->opset_imports.push_back({kMlDomain, opset});
  return m;
}

// X on a grid of halves in [-2, 2] (so BRANCH_EQ / NEQ splits, taken from
// the same grid, are hit), with a share of NaNs when `nan` is set.
Tensor GridX(const Dims& dims, uint32_t seed, bool nan) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> step(-4, 4);
  std::uniform_real_distribution<float> u(0, 1);
  for (float& v : t.mutable_span<float>()) v = nan && u(rng) < 0.1f ? kNaN : 0.5f * static_cast<float>(step(rng));
  return t;
}

bool RanNatively(const std::string& plan, const std::string& kind) {
  return plan.rfind(kind + "\t", 0) == 0 || plan.find("\n" + kind + "\t") != std::string::npos;
}

// A random forest in the classic encoding (nodes_* and PREFIX_* attributes).
struct ForestSpec {
  int trees = 5;
  int depth = 4;
  int features = 6;
  int targets = 3;                                // classes or regression targets
  std::vector<std::string> modes = {"BRANCH_LEQ"};  // drawn per node
  bool missing = false;                           // random missing-value tracks
  bool dense = true;                              // every leaf weighs every target
  std::vector<int> only_targets;                  // if set, leaves weigh only these targets
  bool positive = true;                           // weights ≥ 0
  bool double_tensors = false;                    // opset 3: nodes_values / weights as double tensors
  uint32_t seed = 1;
};

std::vector<Attribute> ForestAttrs(const ForestSpec& s, const std::string& prefix) {
  std::mt19937 rng(s.seed);
  std::uniform_int_distribution<int> feature(0, s.features - 1), grid(-4, 4), mode(0, static_cast<int>(s.modes.size()) - 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids, missing, w_tree, w_node, w_target;
  std::vector<std::string> modes;
  std::vector<double> values, weights;
  for (int tree = 0; tree < s.trees; ++tree) {
    int64_t next = 0;
    // Pre-order: a node's id is assigned before its children's.
    std::function<int64_t(int)> grow = [&](int depth) -> int64_t {
      const int64_t id = next++;
      const size_t at = tree_ids.size();
      tree_ids.push_back(tree);
      node_ids.push_back(id);
      feature_ids.push_back(0);
      true_ids.push_back(0);
      false_ids.push_back(0);
      missing.push_back(0);
      modes.push_back("LEAF");
      values.push_back(0);
      if (depth == s.depth || (depth > 0 && u(rng) < 0.2)) {
        std::vector<int> targets;
        if (!s.only_targets.empty()) {
          targets = s.only_targets;
        } else {
          for (int t = 0; t < s.targets; ++t) {
            if (s.dense || u(rng) < 0.5) targets.push_back(t);
          }
          if (targets.empty()) targets.push_back(0);
        }
        for (int t : targets) {
          w_tree.push_back(tree);
          w_node.push_back(id);
          w_target.push_back(t);
          const double w = s.positive ? u(rng) : 2 * u(rng) - 1;
          weights.push_back(s.double_tensors ? w : static_cast<double>(static_cast<float>(w)));
        }
        return id;
      }
      modes[at] = s.modes[static_cast<size_t>(mode(rng))];
      feature_ids[at] = feature(rng);
      // On the grid, plus a non-float offset for double thresholds.
      values[at] = 0.5 * grid(rng) + (s.double_tensors && u(rng) < 0.5 ? 1e-12 : 0.0);
      missing[at] = s.missing && u(rng) < 0.5 ? 1 : 0;
      true_ids[at] = grow(depth + 1);
      false_ids[at] = grow(depth + 1);
      return id;
    };
    grow(0);
  }
  std::vector<Attribute> a = {
      Attribute::Ints("nodes_treeids", tree_ids),      Attribute::Ints("nodes_nodeids", node_ids),
      Attribute::Ints("nodes_featureids", feature_ids), Attribute::Ints("nodes_truenodeids", true_ids),
      Attribute::Ints("nodes_falsenodeids", false_ids), Attribute::Strings("nodes_modes", modes),
      Attribute::Ints(prefix + "_treeids", w_tree),    Attribute::Ints(prefix + "_nodeids", w_node),
      Attribute::Ints(prefix + "_ids", w_target),
  };
  if (s.missing) a.push_back(Attribute::Ints("nodes_missing_value_tracks_true", missing));
  auto floats = [&](const std::string& name, const std::vector<double>& v) {
    if (s.double_tensors) {
      a.push_back(Attribute::TensorValue(name + "_as_tensor",
                                         Tensor::FromVector<double>(v, {static_cast<int64_t>(v.size())})));
    } else {
      a.push_back(Attribute::Floats(name, std::vector<float>(v.begin(), v.end())));
    }
  };
  floats("nodes_values", values);
  floats(prefix + "_weights", weights);
  return a;
}

// Equal values element by element (infinities included), or both NaN.
void ExpectSame(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (std::isnan(b)) {
      ASSERT_TRUE(std::isnan(a)) << "element " << i << ": " << a;
    } else {
      ASSERT_EQ(a, b) << "element " << i;
    }
  }
}

// Runs on both executors: outputs exactly equal, no reference step; returns the plan.
std::string RunExact(const Model& model, const std::map<std::string, RuntimeValue>& feeds) {
  auto want = ReferenceExecutor(model).Run(feeds);
  EXPECT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(model);
  auto got = cpu.Run(feeds);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok()) return "";
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size() && i < want->size(); ++i) ExpectSame((*got)[i].tensor, (*want)[i].tensor);
  auto plan = cpu.PlanFor(feeds);
  EXPECT_TRUE(plan.ok());
  if (!plan.ok()) return "";
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 0) << DescribePlan(**plan);
  return DescribePlan(**plan);
}

// Runs X through both executors, exactly equal, and checks the plan ran `kind` natively.
void ExpectExact(const Model& model, const Tensor& x, const std::string& kind = "tree_ensemble") {
  std::string plan = RunExact(model, {{"x", RuntimeValue(x)}});
  EXPECT_TRUE(RanNatively(plan, kind)) << plan;
}

std::unique_ptr<Model> Classifier(const ForestSpec& s, const std::string& post, std::vector<float> base,
                                  const Dims& x_dims, std::vector<Attribute> extra = {}) {
  std::vector<Attribute> a = ForestAttrs(s, "class");
  std::vector<int64_t> labels;
  for (int c = 0; c < s.targets; ++c) labels.push_back(10 + c);
  a.push_back(Attribute::Ints("classlabels_int64s", labels));
  a.push_back(Attribute::String("post_transform", post));
  if (!base.empty()) a.push_back(Attribute::Floats("base_values", base));
  for (Attribute& e : extra) a.push_back(std::move(e));
  return MlModel("TreeEnsembleClassifier", std::move(a), DType::kFloat, x_dims, 2, s.double_tensors ? 3 : 1);
}

std::unique_ptr<Model> Regressor(const ForestSpec& s, const std::string& post, const std::string& agg,
                                 std::vector<float> base, const Dims& x_dims) {
  std::vector<Attribute> a = ForestAttrs(s, "target");
  a.push_back(Attribute::Int("n_targets", s.targets));
  a.push_back(Attribute::String("post_transform", post));
  a.push_back(Attribute::String("aggregate_function", agg));
  if (!base.empty()) a.push_back(Attribute::Floats("base_values", base));
  return MlModel("TreeEnsembleRegressor", std::move(a), DType::kFloat, x_dims, 1, s.double_tensors ? 3 : 1);
}

const std::vector<std::string> kModes = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                                         "BRANCH_GT",  "BRANCH_EQ", "BRANCH_NEQ"};
const std::vector<std::string> kPosts = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};

TEST(MlTreeLoweringTest, EverySplitModeAlone) {
  for (const std::string& mode : kModes) {
    SCOPED_TRACE(mode);
    ForestSpec s;
    s.modes = {mode};
    s.seed = 3;
    ExpectExact(*Classifier(s, "NONE", {}, {40, 6}), GridX({40, 6}, 4, /*nan=*/true));
  }
}

TEST(MlTreeLoweringTest, MixedModesWithMissingValueTracks) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    ForestSpec s;
    s.modes = kModes;
    s.missing = true;
    s.trees = 7;
    s.depth = 6;
    s.seed = seed;
    ExpectExact(*Classifier(s, "SOFTMAX", {}, {64, 6}), GridX({64, 6}, seed + 10, /*nan=*/true));
    ExpectExact(*Regressor(s, "NONE", "SUM", {}, {64, 6}), GridX({64, 6}, seed + 20, /*nan=*/true));
  }
}

TEST(MlTreeLoweringTest, MultiClassEveryPostTransformAndBase) {
  for (const std::string& post : kPosts) {
    for (bool base : {false, true}) {
      for (bool dense : {true, false}) {
        SCOPED_TRACE(absl::StrCat(post, base ? " base" : "", dense ? " dense" : " sparse"));
        ForestSpec s;
        s.targets = 4;
        s.dense = dense;
        s.positive = false;
        s.seed = 7;
        ExpectExact(*Classifier(s, post, base ? std::vector<float>{0.5f, -0.25f, 0.f, 1.f} : std::vector<float>{},
                                {33, 6}),
                    GridX({33, 6}, 8, false));
      }
    }
  }
}

// Two classes: weights for one class only (skl2onnx's binary forests and
// boosters, ORT's one-score-column path), positive or signed, with zero,
// one or two base values; and weights for both classes.
TEST(MlTreeLoweringTest, BinaryClassifiers) {
  for (const std::string& post : kPosts) {
    for (int only : {-1, 0, 1}) {
      for (bool positive : {true, false}) {
        for (int base : {0, 1, 2}) {
          SCOPED_TRACE(absl::StrCat(post, " only ", only, positive ? " positive" : " signed", " base ", base));
          ForestSpec s;
          s.targets = 2;
          s.positive = positive;
          if (only >= 0) s.only_targets = {only};
          s.seed = 11;
          std::vector<float> b = base == 0 ? std::vector<float>{} : base == 1 ? std::vector<float>{0.3f}
                                                                               : std::vector<float>{0.3f, -0.2f};
          ExpectExact(*Classifier(s, post, b, {50, 6}), GridX({50, 6}, 12, false));
        }
      }
    }
  }
}

TEST(MlTreeLoweringTest, SingleClass) {
  ForestSpec s;
  s.targets = 1;
  s.positive = false;
  ExpectExact(*Classifier(s, "NONE", {0.1f}, {20, 6}), GridX({20, 6}, 5, false));
}

TEST(MlTreeLoweringTest, RegressorAggregatesPostTransformsAndBase) {
  for (const char* agg : {"SUM", "AVERAGE", "MIN", "MAX"}) {
    for (const std::string& post : kPosts) {
      for (int targets : {1, 3}) {
        for (bool dense : {true, false}) {
          SCOPED_TRACE(absl::StrCat(agg, " ", post, " targets ", targets, dense ? " dense" : " sparse"));
          ForestSpec s;
          s.targets = targets;
          s.dense = dense;
          s.positive = false;
          s.seed = 13;
          std::vector<float> base = targets == 1 ? std::vector<float>{0.25f} : std::vector<float>{0.25f, -1.f, 2.f};
          ExpectExact(*Regressor(s, post, agg, base, {45, 6}), GridX({45, 6}, 14, false));
          ExpectExact(*Regressor(s, post, agg, {}, {45, 6}), GridX({45, 6}, 15, false));
        }
      }
    }
  }
}

// Opset 3's double thresholds and weights (not all floats): compared in double.
TEST(MlTreeLoweringTest, DoubleTensorAttributes) {
  ForestSpec s;
  s.double_tensors = true;
  s.modes = kModes;
  s.seed = 17;
  ExpectExact(*Classifier(s, "NONE", {}, {40, 6}), GridX({40, 6}, 18, true));
  ExpectExact(*Regressor(s, "NONE", "AVERAGE", {}, {40, 6}), GridX({40, 6}, 19, true));
}

// Enough rows and trees to be spread over threads; a rank-1 X is one row.
TEST(MlTreeLoweringTest, LargeBatchAndOneRow) {
  ForestSpec s;
  s.trees = 40;
  s.depth = 8;
  s.targets = 5;
  s.features = 16;
  ExpectExact(*Classifier(s, "NONE", {}, {3001, 16}), RandomF32({3001, 16}, 21, -2, 2));
  ExpectExact(*Regressor(s, "NONE", "AVERAGE", {}, {3001, 16}), RandomF32({3001, 16}, 22, -2, 2));
  ExpectExact(*Regressor(s, "NONE", "SUM", {}, {16}), RandomF32({16}, 23, -2, 2));
}

// String labels: the reference kernel runs (one fallback step), same result.
TEST(MlTreeLoweringTest, StringLabelsStayOnTheReference) {
  ForestSpec s;
  s.targets = 3;
  std::vector<Attribute> a = ForestAttrs(s, "class");
  a.push_back(Attribute::Strings("classlabels_strings", {"a", "b", "c"}));
  auto model = MlModel("TreeEnsembleClassifier", std::move(a), DType::kFloat, {10, 6}, 2);
  std::map<std::string, RuntimeValue> feeds = {{"x", RuntimeValue(GridX({10, 6}, 3, false))}};
  auto want = ReferenceExecutor(*model).Run(feeds);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuExecutor cpu(*model);
  auto got = cpu.Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].tensor.strings(), (*want)[0].tensor.strings());
  ExpectSame((*got)[1].tensor, (*want)[1].tensor);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(StatsOf(**plan).fallback_steps, 1);
}

// TreeEnsemble (ml opset 5): interior nodes and leaves in their own lists.
TEST(MlTreeLoweringTest, TreeEnsembleOpset5) {
  // Tree 0: x0 <= 0 ? (x1 < 0.5 ? leaf0 : leaf1) : leaf2; tree 1: x2 == 1 ? leaf3 : leaf4 (missing → true).
  auto doubles = [](std::vector<double> v) { return Tensor::FromVector<double>(v, {static_cast<int64_t>(v.size())}); };
  Tensor modes = Tensor::FromVector<uint8_t>({0, 1, 4}, {3});
  for (int64_t agg : {0, 1, 2, 3}) {
    for (int64_t post : {0, 1, 2, 3, 4}) {
      std::vector<Attribute> a = {
          Attribute::Int("n_targets", 2),
          Attribute::Int("aggregate_function", agg),
          Attribute::Int("post_transform", post),
          Attribute::TensorValue("nodes_modes", modes),
          Attribute::TensorValue("nodes_splits", doubles({0.0, 0.5, 1.0})),
          Attribute::Ints("nodes_featureids", {0, 1, 2}),
          Attribute::Ints("nodes_truenodeids", {1, 0, 3}),
          Attribute::Ints("nodes_trueleafs", {0, 1, 1}),
          Attribute::Ints("nodes_falsenodeids", {2, 1, 4}),
          Attribute::Ints("nodes_falseleafs", {1, 1, 1}),
          Attribute::Ints("nodes_missing_value_tracks_true", {0, 0, 1}),
          Attribute::Ints("tree_roots", {0, 2}),
          Attribute::Ints("leaf_targetids", {0, 1, 0, 1, 0}),
          Attribute::TensorValue("leaf_weights", doubles({0.5, -1.5, 2.0, 0.25, -0.75})),
      };
      SCOPED_TRACE(absl::StrCat("aggregate ", agg, " post ", post));
      ExpectExact(*MlModel("TreeEnsemble", std::move(a), DType::kFloat, {30, 3}, 1, 5), GridX({30, 3}, 9, true));
    }
  }
}

// ---- the per-row models ----

TEST(MlRowLoweringTest, ScalerPerFeatureAndBroadcast) {
  const Tensor x = RandomF32({17, 5}, 1);
  ExpectExact(*MlModel("Scaler", {Attribute::Floats("scale", {0.5f, 2.f, -1.f, 3.f, 0.1f}),
                                  Attribute::Floats("offset", {1.f, 0.f, -2.f, 0.3f, 5.f})},
                       DType::kFloat, {17, 5}, 1),
              x, "scaler");
  ExpectExact(*MlModel("Scaler", {Attribute::Floats("scale", {0.7f}), Attribute::Floats("offset", {-0.1f})},
                       DType::kFloat, {17, 5}, 1),
              x, "scaler");
  ExpectExact(*MlModel("Scaler", {Attribute::Floats("scale", {0.7f})}, DType::kFloat, {5}, 1), RandomF32({5}, 2),
              "scaler");
}

TEST(MlRowLoweringTest, NormalizerEveryNorm) {
  Tensor x = RandomF32({19, 6}, 3);
  for (int64_t j = 0; j < 6; ++j) x.mutable_data<float>()[6 + j] = 0;  // a zero row stays as it is
  for (const char* norm : {"MAX", "L1", "L2"}) {
    SCOPED_TRACE(norm);
    ExpectExact(*MlModel("Normalizer", {Attribute::String("norm", norm)}, DType::kFloat, {19, 6}, 1), x, "normalizer");
  }
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (float& f : v) f = d(rng);
  return v;
}

TEST(MlRowLoweringTest, LinearClassifierMultiClassAndBinary) {
  for (const std::string& post : kPosts) {
    for (int classes : {2, 3, 5, 6}) {
      for (bool intercepts : {true, false}) {
        // Two labels over one coefficient row is the binary form.
        const int rows = classes == 2 ? 1 : classes;
        SCOPED_TRACE(absl::StrCat(post, " classes ", classes, intercepts ? "" : " no intercepts"));
        std::vector<Attribute> a = {Attribute::Floats("coefficients", RandomFloats(static_cast<size_t>(rows * 7), 5)),
                                    Attribute::String("post_transform", post)};
        if (intercepts) a.push_back(Attribute::Floats("intercepts", RandomFloats(static_cast<size_t>(rows), 6)));
        std::vector<int64_t> labels;
        for (int c = 0; c < classes; ++c) labels.push_back(100 - c);
        a.push_back(Attribute::Ints("classlabels_ints", labels));
        if (!intercepts && classes == 2) continue;  // one row needs its intercept count to say so
        ExpectExact(*MlModel("LinearClassifier", std::move(a), DType::kFloat, {23, 7}, 2), RandomF32({23, 7}, 7),
                    "linear_model");
      }
    }
  }
}

TEST(MlRowLoweringTest, LinearRegressorTargetsAndPostTransforms) {
  for (const std::string& post : kPosts) {
    for (int targets : {1, 3, 4, 6}) {
      SCOPED_TRACE(absl::StrCat(post, " targets ", targets));
      std::vector<Attribute> a = {Attribute::Floats("coefficients", RandomFloats(static_cast<size_t>(targets * 9), 8)),
                                  Attribute::Floats("intercepts", RandomFloats(static_cast<size_t>(targets), 9)),
                                  Attribute::Int("targets", targets), Attribute::String("post_transform", post)};
      ExpectExact(*MlModel("LinearRegressor", std::move(a), DType::kFloat, {21, 9}, 1), RandomF32({21, 9}, 10),
                  "linear_model");
    }
  }
}

// skl2onnx's label lookup: classes[argmax] for a constant class table.
TEST(MlRowLoweringTest, ArrayFeatureExtractorGathersAndChecksIndices) {
  GraphBuilder b;
  Value* idx = b.Input("idx", DType::kInt64, {8, 1});
  Value* classes = b.Constant("classes", Tensor::FromVector<int64_t>({7, 8, 9, 10, 11}, {5}));
  b.Output(b.OpN("ArrayFeatureExtractor", {classes, idx}, 1, {}, kMlDomain)[0]);
  Value* x = b.Input("x", DType::kFloat, {3, 6});
  b.Output(b.OpN("ArrayFeatureExtractor", {x, b.Constant("cols", Tensor::FromVector<int64_t>({5, 0, 2}, {3}))}, 1, {},
                 kMlDomain)[0]);
  auto model = b.Build(17);
  model->opset_imports.push_back({kMlDomain, 1});
  std::map<std::string, RuntimeValue> feeds = {{"idx", RuntimeValue(RandomInts<int64_t>({8, 1}, 1, 0, 4))},
                                               {"x", RuntimeValue(RandomF32({3, 6}, 2))}};
  std::string plan = RunExact(*model, feeds);
  EXPECT_TRUE(RanNatively(plan, "gather")) << plan;
  feeds["idx"] = RuntimeValue(Tensor::FromVector<int64_t>({0, 1, 2, 3, 4, 5, 0, 0}, {8, 1}));
  auto bad = CpuExecutor(*model).Run(feeds);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("index 5 out of range for 5 features"), std::string::npos) << bad.status();
}

// SVMs: the plan's "svm" step against the reference kernel for every kernel
// type, classifiers with and without Platt probabilities (2 and 3 classes,
// 17 support vectors: two full groups of 8 and a tail), liblinear models,
// regressors (one-class too). Scores agree to 1e-6 relative, not bit for
// bit: the native kernel row fuses multiply-adds and RBF's exp is within 2
// ulp of libm's. Labels must be equal.
void ExpectSvmAgrees(std::unique_ptr<Model> model, const Dims& x_dims) {
  Tensor x = RandomF32(x_dims, 31, -1.5f, 1.5f);
  std::string plan = RunBoth(*model, {{"x", RuntimeValue(x)}}, 0, 1e-6, 1e-6);
  EXPECT_TRUE(RanNatively(plan, "svm")) << plan;
}

std::vector<float> SvmKernelParams(const std::string& kernel) {
  if (kernel == "POLY") return {0.3f, 0.5f, 3.0f};
  if (kernel == "SIGMOID") return {0.2f, -0.1f, 0.0f};
  return {0.7f, 0.0f, 0.0f};
}

TEST(MlRowLoweringTest, SvmClassifierEveryKernelWithAndWithoutProbabilities) {
  const int64_t features = 5;
  for (const std::string kernel : {"LINEAR", "POLY", "RBF", "SIGMOID"}) {
    for (int classes : {2, 3}) {
      for (bool proba : {false, true}) {
        SCOPED_TRACE(absl::StrCat(kernel, " classes ", classes, proba ? " with probabilities" : ""));
        const std::vector<int64_t> per_class = classes == 2 ? std::vector<int64_t>{9, 8} : std::vector<int64_t>{5, 9, 3};
        const int64_t vectors = 17, pairs = classes * (classes - 1) / 2;
        std::vector<int64_t> labels;
        for (int c = 0; c < classes; ++c) labels.push_back(10 + c);
        std::vector<Attribute> a = {
            Attribute::Ints("classlabels_ints", labels), Attribute::Ints("vectors_per_class", per_class),
            Attribute::Floats("support_vectors", RandomFloats(static_cast<size_t>(vectors * features), 11)),
            Attribute::Floats("coefficients", RandomFloats(static_cast<size_t>((classes - 1) * vectors), 12)),
            Attribute::Floats("rho", RandomFloats(static_cast<size_t>(pairs), 13)),
            Attribute::String("kernel_type", kernel), Attribute::Floats("kernel_params", SvmKernelParams(kernel))};
        if (proba) {
          a.push_back(Attribute::Floats("prob_a", RandomFloats(static_cast<size_t>(pairs), 14)));
          a.push_back(Attribute::Floats("prob_b", RandomFloats(static_cast<size_t>(pairs), 15)));
        }
        ExpectSvmAgrees(MlModel("SVMClassifier", std::move(a), DType::kFloat, {37, features}, 2), {37, features});
      }
    }
  }
  // liblinear: one coefficient row per class, no support vectors.
  std::vector<Attribute> a = {Attribute::Ints("classlabels_ints", {1, 2, 3}),
                              Attribute::Floats("coefficients", RandomFloats(3 * 4, 16)),
                              Attribute::Floats("rho", {0.25f}), Attribute::String("post_transform", "SOFTMAX")};
  ExpectSvmAgrees(MlModel("SVMClassifier", std::move(a), DType::kFloat, {9, 4}, 2), {9, 4});
}

TEST(MlRowLoweringTest, SvmRegressorEveryKernelAndOneClass) {
  for (const std::string kernel : {"LINEAR", "POLY", "RBF", "SIGMOID"}) {
    for (int one_class : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(kernel, one_class ? " one-class" : ""));
      std::vector<Attribute> a = {Attribute::Int("n_supports", 11), Attribute::Int("one_class", one_class),
                                  Attribute::Floats("support_vectors", RandomFloats(11 * 6, 17)),
                                  Attribute::Floats("coefficients", RandomFloats(11, 18)), Attribute::Floats("rho", {0.1f}),
                                  Attribute::String("kernel_type", kernel),
                                  Attribute::Floats("kernel_params", SvmKernelParams(kernel))};
      ExpectSvmAgrees(MlModel("SVMRegressor", std::move(a), DType::kFloat, {300, 6}, 1), {300, 6});
    }
  }
  std::vector<Attribute> a = {Attribute::Floats("coefficients", RandomFloats(6, 19)), Attribute::Floats("rho", {-0.3f}),
                              Attribute::String("post_transform", "PROBIT")};
  ExpectSvmAgrees(MlModel("SVMRegressor", std::move(a), DType::kFloat, {7, 6}, 1), {7, 6});
}

// The threads decision weighs an ml op's flops as scalar work: a 256-row
// RBF SVM of 200 support vectors (2 M flops by its cost hook, few MACs by a
// GEMM's measure) takes both threads at --threads 2 and agrees there too.
TEST(MlRowLoweringTest, LargeSvmBatchTakesTheThreads) {
  std::vector<Attribute> a = {Attribute::Int("n_supports", 200), Attribute::Floats("support_vectors", RandomFloats(200 * 20, 21)),
                              Attribute::Floats("coefficients", RandomFloats(200, 22)), Attribute::Floats("rho", {0.1f}),
                              Attribute::String("kernel_type", "RBF"), Attribute::Floats("kernel_params", {0.05f, 0.0f, 0.0f})};
  auto model = MlModel("SVMRegressor", std::move(a), DType::kFloat, {256, 20}, 1);
  std::map<std::string, RuntimeValue> feeds = {{"x", RuntimeValue(RandomF32({256, 20}, 23, -1.5f, 1.5f))}};
  CpuOptions options;
  options.threads = 2;
  CpuExecutor cpu(*model, options);
  auto plan = cpu.PlanFor(feeds);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(ThreadsOf(**plan), 2);
  auto want = ReferenceExecutor(*model).Run(feeds);
  auto got = cpu.Run(feeds);
  ASSERT_TRUE(want.ok() && got.ok());
  ExpectClose((*got)[0].tensor, (*want)[0].tensor, 1e-6, 1e-6);
}

// The skl2onnx models of bench/zoo run on our kernels, with no reference step.
TEST(MlZooTest, SklearnModelsCompileWithoutReferenceSteps) {
  const std::string zoo = std::string(AIC_BINARY_DIR) + "/zoo";
  const std::map<std::string, std::pair<int64_t, std::vector<std::string>>> models = {
      {"sk_random_forest", {32, {}}},   {"sk_gradient_boosting", {16, {}}}, {"sk_scaler_logreg", {20, {}}},
      {"sk_mlp", {32, {}}},             {"sk_pca_svc", {24, {}}},
  };
  int found = 0;
  for (const auto& [name, spec] : models) {
    const std::string path = zoo + "/" + name + ".onnx";
    if (!std::filesystem::exists(path)) continue;
    ++found;
    SCOPED_TRACE(name);
    auto model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(InferShapes(**model).ok());
    std::map<std::string, RuntimeValue> feeds = {{"input", RuntimeValue(RandomF32({256, spec.first}, 3, -2, 2))}};
    CpuExecutor cpu(**model);
    auto plan = cpu.PlanFor(feeds);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(StatsOf(**plan).fallback_ops, spec.second) << DescribePlan(**plan);
    // And the reference executor's outputs: bit for bit from the tree and
    // linear ml ops; sk_mlp's and sk_pca_svc's MatMuls (oneDNN) and the SVM's
    // kernel row round their own way.
    auto want = ReferenceExecutor(**model).Run(feeds);
    auto got = cpu.Run(feeds);
    ASSERT_TRUE(want.ok() && got.ok());
    for (size_t i = 0; i < want->size(); ++i) ExpectClose((*got)[i].tensor, (*want)[i].tensor, 1e-5, 1e-5);
  }
  if (found == 0) GTEST_SKIP() << "no skl2onnx models in " << zoo << " (bench/zoo/make_zoo.py makes them)";
}

}  // namespace
}  // namespace aic::cpu

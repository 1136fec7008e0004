// Numbers the report must get right on generated models: the BERT-style
// encoder and the ResNet-style CNN of testdata/make_analysis_models.py (weights
// built with a known rank), and small graphs built here (ReLU on positive
// inputs, dead units, merge candidates, a model the executor cannot run).
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/analyze.h"
#include "analysis/render.h"
#include "analysis/symbolic_cost.h"
#include "graph/builder.h"
#include "tests/analysis/analysis_test_util.h"

namespace aic::analysis {
namespace {

using testing::LoadTestModel;

const ReportNode* FindLayer(const Report& r, const std::string& weight) {
  for (const ReportNode& n : r.nodes) {
    if (n.is_layer && n.weight_name == weight) return &n;
  }
  return nullptr;
}

int Count(const Report& r, const std::string& name) {
  int c = 0;
  for (const ReportNode& n : r.nodes) c += n.name == name;
  return c;
}

TEST(EncoderReport, SymbolicDimsByName) {
  auto model = LoadTestModel("testdata/encoder.onnx");
  AnalysisOptions options;
  options.spectra = false;
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->nodes.empty());
  EXPECT_EQ(r->nodes[0].name, "Linear");
  EXPECT_EQ(r->nodes[0].input_shapes[0].ToString(), "[1, 128, 256]");
  EXPECT_EQ(r->nodes[0].symbolic_input_shapes[0].ToString(), "[batch, 128, 256]");
  // Analysed at the default batch 1, said so, and every cost is also an
  // expression in batch: linear, through zero (nothing here is per-model).
  EXPECT_EQ(r->uncounted_nodes, 0);
  ASSERT_TRUE(r->peak_activation_bytes.has_value());
  ASSERT_TRUE(r->symbolic.has_value());
  const SymbolicCosts& sc = *r->symbolic;
  EXPECT_EQ(sc.symbols, std::vector<std::string>{"batch"});
  EXPECT_EQ(sc.values, std::vector<int64_t>{1});
  EXPECT_FALSE(sc.given[0]);
  ASSERT_TRUE(sc.fitted) << sc.why_not;
  ASSERT_TRUE(sc.macs && sc.params);
  EXPECT_TRUE(sc.Holds(sc.macs, r->total_macs));
  ASSERT_EQ(sc.macs->terms.size(), 1u);
  EXPECT_EQ(sc.macs->terms[0].exponents, std::vector<int>{1});
  EXPECT_EQ(sc.macs->terms[0].coefficient, static_cast<double>(r->total_macs));
  EXPECT_TRUE(sc.params->IsConstant());
  EXPECT_EQ(sc.params->Evaluate({7}), static_cast<double>(r->total_params));
  ASSERT_TRUE(sc.peak_activation_bytes.has_value());
  EXPECT_EQ(sc.peak_activation_bytes->Evaluate({1}), static_cast<double>(*r->peak_activation_bytes));
  ASSERT_TRUE(r->nodes[0].macs_expression.has_value());
  EXPECT_EQ(r->nodes[0].macs_expression->ToString(), "8.39 M·batch");  // 128·256·256
  std::string text = RenderText(*r);
  EXPECT_NE(text.find("Input shape: [batch, 128, 256]"), std::string::npos);
  EXPECT_NE(text.find("MACs: 8388608 ≈ 8.39 M·batch"), std::string::npos) << text;
  EXPECT_NE(text.find("symbolic dims analysed at batch=1 (default)"), std::string::npos);
}

// The same report at batch 4 (by --shape) gives 4x the MACs, and the
// expression is unchanged.
TEST(EncoderReport, GivenSizesScaleTheNumbersNotTheExpression) {
  auto model = LoadTestModel("testdata/encoder.onnx");
  AnalysisOptions options;
  options.spectra = false;
  auto one = Analyze(*model, options);
  ASSERT_TRUE(one.ok()) << one.status();
  auto model4 = LoadTestModel("testdata/encoder.onnx");
  options.input_shapes = {{"x", {4, 128, 256}}};
  auto four = Analyze(*model4, options);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->total_macs, 4 * one->total_macs);
  ASSERT_TRUE(four->symbolic && four->symbolic->fitted);
  EXPECT_TRUE(four->symbolic->given[0]);
  ASSERT_TRUE(four->symbolic->macs && one->symbolic->macs);
  EXPECT_EQ(four->symbolic->macs->ToString(), one->symbolic->macs->ToString());
  EXPECT_TRUE(four->symbolic->Holds(four->symbolic->macs, four->total_macs));
}

TEST(EncoderReport, CostsRanksAndSharedWeights) {
  auto model = LoadTestModel("testdata/encoder.onnx");
  AnalysisOptions options;
  options.input_shapes = {{"x", {1, 128, 256}}};
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Count(*r, "Linear"), 36);  // 6 per layer, MatMul + Add each
  EXPECT_EQ(r->uncounted_nodes, 0);
  int64_t linear_macs = 0, linear_params = 0;
  for (const ReportNode& n : r->nodes) {
    if (n.name == "Linear") {
      linear_macs += n.macs;
      linear_params += n.params;
    }
  }
  // Per layer: q, k, v, o 128·256·256 each, FFN 2·128·256·1024.
  EXPECT_EQ(linear_macs, 6 * (4 * 128 * 256 * 256 + 2 * 128 * 256 * 1024));
  // Shared attention/FFN weights count once; each LayerNorm has its own.
  const int64_t shared = 4 * (256 * 256 + 256) + (256 * 1024 + 1024) + (1024 * 256 + 256);
  const int64_t layer_norms = 6 * 2 * (256 + 256);
  EXPECT_EQ(linear_params, 6 * shared);
  EXPECT_EQ(r->total_params, shared + layer_norms);
  // W_q was built with rank 16; the others are full rank.
  const ReportNode* q = FindLayer(*r, "enc.attn.q.weight");
  ASSERT_NE(q, nullptr);
  ASSERT_TRUE(q->spectrum.has_value());
  EXPECT_EQ(q->spectrum->numerical_rank, 16);
  ASSERT_TRUE(q->low_rank.has_value());
  EXPECT_LE(q->low_rank->rank, 16);
  EXPECT_TRUE(q->low_rank->pays);
  const ReportNode* k = FindLayer(*r, "enc.attn.k.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->spectrum->numerical_rank, 256);
  const ReportNode* ff1 = FindLayer(*r, "enc.ffn.fc1.weight");
  ASSERT_NE(ff1, nullptr);
  EXPECT_EQ(ff1->in_features, 256);
  EXPECT_EQ(ff1->out_features, 1024);
  EXPECT_EQ(ff1->spectrum->rows, 1024);
  EXPECT_EQ(ff1->spectrum->cols, 256);
  // FFN: 256 → 1024 then 1024 → 256, six times.
  int expansions = 0, contractions = 0;
  for (const Chain& c : r->chains) (c.expansion ? expansions : contractions) += 1;
  EXPECT_EQ(expansions, 6);
  EXPECT_EQ(contractions, 6);
  ASSERT_TRUE(r->peak_activation_bytes.has_value());
  EXPECT_GE(*r->peak_activation_bytes, 2 * 128 * 1024 * 4);  // FFN hidden, at least twice
}

TEST(CnnReport, ConvRankBatchNormAndPatterns) {
  auto model = LoadTestModel("testdata/resnet_cnn.onnx");
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Count(*r, "Conv"), 7);
  EXPECT_EQ(Count(*r, "BatchNorm"), 7);
  const ReportNode* mid = FindLayer(*r, "block0.mid.weight");
  ASSERT_NE(mid, nullptr);
  ASSERT_TRUE(mid->spectrum.has_value());
  EXPECT_EQ(mid->spectrum->rows, 64);
  EXPECT_EQ(mid->spectrum->cols, 64 * 9);
  EXPECT_EQ(mid->spectrum->numerical_rank, 8);
  const ReportNode* stem = FindLayer(*r, "stem.weight");
  ASSERT_NE(stem, nullptr);
  EXPECT_EQ(stem->macs, int64_t{16} * 112 * 112 * 3 * 49);
  EXPECT_EQ(stem->params, 16 * 3 * 49);
  // Each block: 1×1 16 → 64, ReLU, 3×3 64 → 64, ReLU, 1×1 64 → 16.
  EXPECT_EQ(r->expand_collapse.size(), 2u);
  for (const ExpandCollapse& p : r->expand_collapse) {
    EXPECT_EQ(r->nodes[p.wide].out_features, 64);
    EXPECT_EQ(r->nodes[p.collapse].name, "ReLU");
    EXPECT_EQ(r->nodes[p.narrow].out_features, 16);
  }
  EXPECT_GE(r->collapse_points.size(), 7u);  // ReLUs, plus pooling
  ASSERT_TRUE(r->peak_activation_bytes.has_value());
  EXPECT_GE(*r->peak_activation_bytes, 3 * 224 * 224 * 4);
}

TEST(CnnReport, CalibrationMeasuresChannels) {
  auto model = LoadTestModel("testdata/resnet_cnn.onnx");
  AnalysisOptions options;
  options.spectra = false;
  options.calibration = testing::RandomData(*model, 1, 3);
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->calibration.ran) << r->calibration.note;
  int measured = 0;
  for (const ReportNode& n : r->nodes) {
    if (!n.activation) continue;
    ++measured;
    EXPECT_EQ(n.activation->unit_axis, 1);  // channels of NCHW
    EXPECT_GT(n.activation->active_ratio, 0.0);
    EXPECT_LT(n.activation->active_ratio, 1.0);
  }
  EXPECT_EQ(measured, 7);
}

// x → Abs → ReLU: every input of the ReLU is positive, so nothing collapses.
TEST(Calibration, ReluOnPositiveInputsIsFullyActive) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 16});
  Value* a = b.Op("Abs", {x});
  b.Output(b.Op("Relu", {a}));
  auto model = b.Build();
  AnalysisOptions options;
  options.calibration = testing::RandomData(*model, 5, 11);
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const ReportNode& relu = r->nodes.back();
  ASSERT_EQ(relu.name, "ReLU");
  ASSERT_TRUE(relu.activation.has_value());
  EXPECT_EQ(relu.activation->active_ratio, 1.0);
  EXPECT_EQ(relu.activation->dead_units, 0);
  EXPECT_EQ(relu.activation->units, 16);
  EXPECT_EQ(relu.activation->remaining_width, 16);
}

// x·W with W's first two columns negative and x > 0: those units never fire.
TEST(Calibration, DeadUnitsAndHiddenReduction) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 4});
  std::vector<float> w(4 * 6);
  for (int i = 0; i < 24; ++i) w[i] = 0.3f + 0.05f * static_cast<float>(i);  // no ties
  for (int i = 0; i < 4; ++i) w[i * 6 + 0] = w[i * 6 + 1] = -1.0f;
  Value* wv = b.Constant("w", Tensor::FromVector<float>(w, {4, 6}));
  Value* h = b.Op("MatMul", {b.Op("Abs", {x}), wv});
  Value* relu = b.Op("Relu", {h});
  Value* w2 = b.Constant("w2", Tensor::FromVector<float>(std::vector<float>(6 * 2, 0.1f), {6, 2}));
  b.Output(b.Op("MatMul", {relu, w2}));
  auto model = b.Build();
  AnalysisOptions options;
  options.calibration = testing::RandomData(*model, 4, 5);
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const ReportNode* relu_node = nullptr;
  for (const ReportNode& n : r->nodes) {
    if (n.name == "ReLU") relu_node = &n;
  }
  ASSERT_NE(relu_node, nullptr);
  ASSERT_TRUE(relu_node->activation.has_value());
  EXPECT_EQ(relu_node->activation->dead_units, 2);
  EXPECT_NEAR(relu_node->activation->active_ratio, 4.0 / 6.0, 1e-12);
  ASSERT_EQ(r->hidden_reductions.size(), 1u);
  EXPECT_EQ(r->hidden_reductions[0].width, 6);
  EXPECT_EQ(r->hidden_reductions[0].remaining, 4);
  EXPECT_GE(r->hidden_reductions[0].producer, 0);
  std::string text = RenderText(*r);
  EXPECT_NE(text.find("consider hidden dimension reduction: 2 of 6 units dead"), std::string::npos)
      << text;
}

TEST(Structure, MergeCandidatesPayOnlyWhenHiddenIsWide) {
  for (int64_t hidden : {64, 4}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 10});
    Value* w1 = b.Constant("w1", Tensor(DType::kFloat, {10, hidden}));
    Value* b1 = b.Constant("b1", Tensor(DType::kFloat, {hidden}));
    Value* w2 = b.Constant("w2", Tensor(DType::kFloat, {hidden, 10}));
    Value* h = b.Op("Add", {b.Op("MatMul", {x, w1}), b1});
    b.Output(b.Op("MatMul", {h, w2}));
    auto model = b.Build();
    auto r = Analyze(*model, AnalysisOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->merges.size(), 1u) << "hidden " << hidden;
    const MergeCandidate& m = r->merges[0];
    EXPECT_EQ(m.n, 10);
    EXPECT_EQ(m.h, hidden);
    EXPECT_EQ(m.m, 10);
    EXPECT_NEAR(m.break_even, 5.0, 1e-12);
    EXPECT_EQ(m.pays, hidden > 5);
  }
}

TEST(Structure, NoMergeAcrossANonlinearity) {
  auto model = LoadTestModel("testdata/seed_mlp.onnx");
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->merges.empty());
}

TEST(Structure, SharedWeightCountsOnce) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8});
  Value* w = b.Constant("w", Tensor(DType::kFloat, {8, 8}));
  Value* h = b.Op("Relu", {b.Op("MatMul", {x, w})});
  b.Output(b.Op("MatMul", {h, w}));
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodes[0].params + r->nodes[2].params, 128);
  EXPECT_EQ(r->total_params, 64);
}

// An op without a reference kernel: calibration cannot run, the report is
// still produced, statically, and says why.
TEST(Calibration, UnrunnableModelDegradesToStaticAnalysis) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4});
  Value* r1 = b.Op("Relu", {x});
  std::vector<Value*> outs = b.OpN("MysteryOp", {r1}, 1, {}, "com.example");
  b.Output(outs[0]);
  auto model = b.Build();
  model->opset_imports.push_back({"com.example", 1});
  AnalysisOptions options;
  options.calibration = testing::RandomData(*model, 2, 1);
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->calibration.ran);
  EXPECT_NE(r->calibration.note.find("static analysis only"), std::string::npos)
      << r->calibration.note;
  EXPECT_EQ(r->nodes.size(), 2u);
  std::string text = RenderText(*r);
  EXPECT_NE(text.find("Note: calibration skipped, static analysis only"), std::string::npos)
      << text;
  EXPECT_NE(text.find("- measure ReLU activation ratio: not measured"), std::string::npos) << text;
}

// Feeds of the wrong shape make the run itself fail: same degradation.
TEST(Calibration, FailingRunDegradesToStaticAnalysis) {
  auto model = LoadTestModel("testdata/seed_mlp.onnx");
  AnalysisOptions options;
  CalibrationData data;
  data.samples = 3;
  data.source = "bad";
  data.feed = [](int64_t) -> absl::StatusOr<Feeds> {
    Feeds f;
    f["input"] = RuntimeValue(Tensor(DType::kFloat, {1, 7}));
    return f;
  };
  options.calibration = data;
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->calibration.ran);
  EXPECT_NE(r->calibration.note.find("calibration failed, static analysis only"), std::string::npos)
      << r->calibration.note;
  EXPECT_FALSE(r->nodes[1].activation.has_value());
}

}  // namespace
}  // namespace aic::analysis

namespace aic::analysis {
namespace {

TEST(BindInputSymbols, ChecksNamesRanksAndKnownDims) {
  auto model = testing::LoadTestModel("testdata/encoder.onnx");
  EXPECT_FALSE(BindInputSymbols(*model, {{"nope", {1, 128, 256}}}).ok());
  EXPECT_FALSE(BindInputSymbols(*model, {{"x", {1, 128}}}).ok());
  auto fixed = BindInputSymbols(*model, {{"x", {1, 64, 256}}});  // 128 is fixed
  ASSERT_FALSE(fixed.ok());
  EXPECT_EQ(fixed.status().message(), "input 'x' dim 1 is 128, the shape given has 64");
  auto bound = BindInputSymbols(*model, {{"x", {2, 128, 256}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->names, std::vector<std::string>{"batch"});
  EXPECT_EQ(bound->values, std::vector<int64_t>{2});
  SetInputSizes(*bound, bound->values);
  EXPECT_EQ(model->graph->inputs()[0]->shape().ToString(), "[2, 128, 256]");
}

// One symbol on two inputs takes one size: given once, it binds both; given
// twice with different sizes, it is refused with both named.
TEST(BindInputSymbols, OneSymbolOneSize) {
  auto make = [] {
    GraphBuilder b;
    Value* ids = b.Input("ids", DType::kInt64, {Dim::Symbol("batch"), Dim::Symbol("sequence")});
    Value* mask = b.Input("mask", DType::kInt64, {Dim::Symbol("batch"), Dim::Symbol("sequence")});
    b.Output(b.Op("Add", {ids, mask}));
    return b.Build();
  };
  auto model = make();
  auto bound = BindInputSymbols(*model, {{"ids", {2, 64}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->values, (std::vector<int64_t>{2, 64}));
  SetInputSizes(*bound, bound->values);
  EXPECT_EQ(model->graph->inputs()[1]->shape().ToString(), "[2, 64]");
  auto clash = BindInputSymbols(*make(), {{"ids", {2, 64}}, {"mask", {3, 64}}});
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().message(),
            "symbolic dim 'batch' is given as 2 and as 3 (input 'mask' dim 0)");
}

}  // namespace
}  // namespace aic::analysis

// `opt --apply`: each approximate transformation on a constructed model with
// a known answer (a weight built with rank 3 factors to exactly rank 3 with
// error at rounding level; two linears with only a bias between them merge
// into one with the same outputs; units dead by construction go and the
// outputs stay), and refusal past the error budget leaves the model as it
// was.
#include "analysis/approximate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "analysis/analyze.h"
#include "analysis/calibration_sources.h"
#include "graph/builder.h"
#include "graph/clone.h"
#include "session/session.h"

namespace aic::analysis {
namespace {

std::vector<float> Normal(int64_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(normal(rng));
  return v;
}

// A [rows, cols] matrix of rank exactly r (U·V, U and V random normal).
std::vector<float> RankR(int64_t rows, int64_t cols, int64_t r, uint64_t seed) {
  std::vector<float> u = Normal(rows * r, seed), v = Normal(r * cols, seed + 1), m(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < r; ++k) s += double{u[i * r + k]} * v[k * cols + j];
      m[i * cols + j] = static_cast<float>(s);
    }
  }
  return m;
}

Tensor F(const std::vector<float>& v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, std::move(dims)); }

int CountOps(const Model& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph->nodes()) n += node->op_type == op;
  return n;
}

// x [rows, in] · w [in, out]: one MatMul layer.
std::unique_ptr<Model> OneMatMul(int64_t rows, const std::vector<float>& w, int64_t in, int64_t out) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {rows, in});
  b.Output(b.Op("MatMul", {x, b.Constant("w", F(w, {in, out}))}));
  return b.Build(17);
}

struct Applied {
  ApproximateResult result;
  std::unique_ptr<Model> model;
  double max_abs_change = 0;  // of the outputs, on fresh random inputs
};

// Applies `options` (on 4 random samples) and compares the result with the
// original on 2 other random inputs.
Applied Apply(const Model& original, ApproximateOptions options) {
  Applied a;
  a.model = CloneModel(original);
  options.calibration = RandomCalibration(original, 4, 7);
  options.measure_latency = false;
  auto r = ApplyApproximations(original, a.model, options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return a;
  a.result = *r;
  auto s0 = session::Session::Create(original);
  auto s1 = session::Session::Create(*a.model);
  EXPECT_TRUE(s0.ok() && s1.ok());
  CalibrationData fresh = RandomCalibration(original, 2, 99);
  for (int64_t i = 0; i < fresh.samples; ++i) {
    auto feeds = fresh.feed(i);
    auto y0 = (*s0)->Run(*feeds);
    auto y1 = (*s1)->Run(*feeds);
    EXPECT_TRUE(y0.ok() && y1.ok());
    for (size_t o = 0; o < y0->size(); ++o) {
      const Tensor& t0 = (*y0)[o].tensor;
      const Tensor& t1 = (*y1)[o].tensor;
      EXPECT_EQ(t0.dims(), t1.dims());
      if (t0.dtype() == DType::kString) continue;
      for (int64_t k = 0; k < t0.num_elements() && t0.dims() == t1.dims(); ++k) {
        a.max_abs_change = std::max(a.max_abs_change, std::abs(t0.ElementAsDouble(k) - t1.ElementAsDouble(k)));
      }
    }
  }
  return a;
}

const Tensor* WeightOf(const Model& m, const std::string& op, size_t which) {
  size_t seen = 0;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type == op && seen++ == which) return n->input(1)->initializer();
  }
  return nullptr;
}

TEST(ApplyLowRank, RankThreeMatMulBecomesExactlyRankThree) {
  std::unique_ptr<Model> m = OneMatMul(4, RankR(64, 48, 3, 1), 64, 48);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.energy = 1 - 1e-9;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.steps.size(), 1u);
  EXPECT_TRUE(a.result.steps[0].kept) << a.result.steps[0].refused;
  EXPECT_EQ(a.result.steps[0].params_before, 64 * 48);
  EXPECT_EQ(a.result.steps[0].params_after, 3 * (64 + 48));
  EXPECT_EQ(a.result.steps[0].macs_before, 4 * 64 * 48);
  EXPECT_EQ(CountOps(*a.model, "MatMul"), 2);
  ASSERT_NE(WeightOf(*a.model, "MatMul", 0), nullptr);
  EXPECT_EQ(WeightOf(*a.model, "MatMul", 0)->dims(), (std::vector<int64_t>{64, 3}));
  EXPECT_EQ(WeightOf(*a.model, "MatMul", 1)->dims(), (std::vector<int64_t>{3, 48}));
  int64_t stored = 0;  // the replaced weight is gone, not left unread
  for (const Value* v : a.model->graph->initializers()) stored += v->initializer()->num_elements();
  EXPECT_EQ(stored, 3 * (64 + 48));
  EXPECT_LT(a.result.steps[0].error, 1e-5);
  EXPECT_LT(a.max_abs_change, 1e-3);
}

// Automatic rank: each layer offered at the ranks of 80/90/95/99% energy,
// each measured alone; a rank-3 weight with a little noise keeps rank 3
// (ranks 1 and 2 cost a third of the output and more).
TEST(ApplyLowRank, AutomaticRankFindsTheRankTheBudgetAllows) {
  std::vector<float> w = RankR(64, 48, 3, 1), noise = Normal(64 * 48, 2, 1e-3);
  for (size_t i = 0; i < w.size(); ++i) w[i] += noise[i];
  std::unique_ptr<Model> m = OneMatMul(4, w, 64, 48);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.automatic = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  const ApproximateStep* kept = nullptr;
  for (const ApproximateStep& s : a.result.steps) {
    if (s.kept) kept = &s;
  }
  EXPECT_NE(kept->detail.find("rank 3 of 48"), std::string::npos) << kept->detail;
  EXPECT_LT(a.result.final_error, 1e-2);
}

TEST(ApplyLowRank, GemmWithAlphaTransBAndBiasKeepsItsFunction) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 40});
  Value* w = b.Constant("w", F(RankR(50, 40, 3, 2), {50, 40}));  // transB: [out, in]
  Value* c = b.Constant("c", F(Normal(50, 3), {50}));
  b.Output(b.Op("Gemm", {x, w, c}, {Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 2.0f)}));
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.rank = 3;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  EXPECT_EQ(CountOps(*a.model, "MatMul"), 1);  // x·F₁ᵀ: a Gemm only where it transposes x
  EXPECT_EQ(CountOps(*a.model, "Gemm"), 1);
  EXPECT_LT(a.result.final_error, 1e-5);
  EXPECT_LT(a.max_abs_change, 1e-3);
}

// Before opset 11 Gemm's C is required: no Gemm of the result lacks one.
TEST(ApplyLowRank, GemmAtOpsetTenKeepsCWhereTheOpsetNeedsIt) {
  for (bool trans_a : {false, true}) {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, trans_a ? std::vector<Dim>{40, 3} : std::vector<Dim>{3, 40});
    Value* w = b.Constant("w", F(RankR(40, 50, 3, 2), {40, 50}));
    Value* c = b.Constant("c", F(Normal(50, 3), {50}));
    b.Output(b.Op("Gemm", {x, w, c}, {Attribute::Int("transA", trans_a ? 1 : 0)}));
    std::unique_ptr<Model> m = b.Build(10);
    ApproximateOptions o;
    o.low_rank = true;
    o.rank.rank = 3;
    Applied a = Apply(*m, o);
    ASSERT_EQ(a.result.kept(), 1) << trans_a;
    for (const auto& n : a.model->graph->nodes()) {
      if (n->op_type == "Gemm") {
        EXPECT_EQ(n->num_inputs(), 3u) << trans_a;
      }
    }
    EXPECT_LT(a.max_abs_change, 1e-3);
  }
}

// Before IR 4 every initializer is listed as a graph input: the factors are
// too, the replaced weight leaves both lists, and string outputs compare.
TEST(ApplyLowRank, IrThreeListsTheNewWeightsAsInputsAndDropsTheOld) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 64});
  Value* y = b.Op("MatMul", {x, b.Constant("w", F(RankR(64, 48, 3, 1), {64, 48}))});
  b.Output(y);
  b.Output(b.Op("Cast", {y}, {Attribute::Int("to", static_cast<int64_t>(DType::kString))}));
  std::unique_ptr<Model> m = b.Build(/*opset=*/9, /*ir_version=*/3);
  for (Value* v : m->graph->initializers()) m->graph->AddInput(v);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.rank = 3;
  o.max_error = 1;  // the strings of the cast differ in their last digits
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1) << (a.result.steps.empty() ? "" : a.result.steps[0].refused);
  EXPECT_EQ(a.model->graph->initializers().size(), 2u);
  for (const Value* v : a.model->graph->initializers()) EXPECT_TRUE(v->is_graph_input()) << v->name();
  for (const Value* v : a.model->graph->inputs()) EXPECT_NE(v->name(), "w");
}

TEST(ApplyLowRank, StridedPaddedConvSplitsIntoConvAndPointwiseConv) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 9, 9});
  Value* w = b.Constant("w", F(RankR(24, 8 * 9, 3, 4), {24, 8, 3, 3}));
  Value* bias = b.Constant("b", F(Normal(24, 5), {24}));
  b.Output(b.Op("Conv", {x, w, bias}, {Attribute::Ints("strides", {2, 2}), Attribute::Ints("pads", {1, 1, 1, 1}),
                                      Attribute::Ints("kernel_shape", {3, 3})}));
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.energy = 1 - 1e-9;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1) << (a.result.steps.empty() ? "" : a.result.steps[0].refused);
  ASSERT_EQ(CountOps(*a.model, "Conv"), 2);
  EXPECT_EQ(WeightOf(*a.model, "Conv", 0)->dims(), (std::vector<int64_t>{3, 8, 3, 3}));
  EXPECT_EQ(WeightOf(*a.model, "Conv", 1)->dims(), (std::vector<int64_t>{24, 3, 1, 1}));
  EXPECT_LT(a.result.final_error, 1e-5);
  EXPECT_LT(a.max_abs_change, 1e-3);
}

TEST(ApplyLowRank, RefusedPastTheErrorBudgetLeavesTheModel) {
  std::unique_ptr<Model> m = OneMatMul(4, Normal(64 * 48, 8), 64, 48);  // full rank
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.rank = 2;
  o.max_error = 1e-2;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.steps.size(), 1u);
  EXPECT_FALSE(a.result.steps[0].kept);
  EXPECT_GT(a.result.steps[0].error, 0.5);
  EXPECT_NE(a.result.steps[0].refused.find("budget"), std::string::npos) << a.result.steps[0].refused;
  EXPECT_EQ(CountOps(*a.model, "MatMul"), 1);
  EXPECT_EQ(a.max_abs_change, 0);
  EXPECT_EQ(a.result.final_error, 0);
}

TEST(ApplyLowRank, NotOfferedWhereItDoesNotPay) {
  std::unique_ptr<Model> m = OneMatMul(4, RankR(16, 16, 9, 9), 16, 16);  // break-even rank 8
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.energy = 1 - 1e-9;
  Applied a = Apply(*m, o);
  EXPECT_TRUE(a.result.steps.empty());
}

// The report's "what if" table is what --apply low-rank would do: a rank-3
// weight shows rank 3 at 99.9% energy, paying, with σ₄ at rounding level.
TEST(ReportWhatIf, RankThreeWeightPaysAtRankThree) {
  std::unique_ptr<Model> m = OneMatMul(4, RankR(64, 48, 3, 1), 64, 48);
  auto report = Analyze(*m, AnalysisOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  const ReportNode* layer = nullptr;
  for (const ReportNode& n : report->nodes) {
    if (n.is_layer) layer = &n;
  }
  ASSERT_NE(layer, nullptr);
  ASSERT_FALSE(layer->what_if.empty());
  const LowRank& full = layer->what_if.back();
  EXPECT_EQ(full.rank, 3);
  EXPECT_TRUE(full.pays);
  EXPECT_EQ(full.params_before - full.params_after, 64 * 48 - 3 * (64 + 48));
  EXPECT_LT(full.spectral_error, 1e-4 * layer->spectrum->singular_values[0]);
  for (size_t i = 1; i < layer->what_if.size(); ++i) EXPECT_GT(layer->what_if[i].rank, layer->what_if[i - 1].rank);
}

TEST(ApplyMergeLinear, MatMulBiasMatMulBecomesOneLayer) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 5, 8});
  Value* w1 = b.Constant("w1", F(Normal(8 * 64, 10, 0.3), {8, 64}));
  Value* b1 = b.Constant("b1", F(Normal(64, 11), {64}));
  Value* w2 = b.Constant("w2", F(Normal(64 * 6, 12, 0.3), {64, 6}));
  Value* b2 = b.Constant("b2", F(Normal(6, 13), {6}));
  Value* h = b.Op("Add", {b.Op("MatMul", {x, w1}), b1});
  b.Output(b.Op("Add", {b.Op("MatMul", {h, w2}), b2}));
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.merge_linear = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  EXPECT_EQ(a.result.steps[0].params_before, 64 * (8 + 6));
  EXPECT_EQ(a.result.steps[0].params_after, 8 * 6);
  EXPECT_EQ(CountOps(*a.model, "MatMul"), 1);
  EXPECT_EQ(WeightOf(*a.model, "MatMul", 0)->dims(), (std::vector<int64_t>{8, 6}));
  EXPECT_LT(a.result.final_error, 1e-5);
  EXPECT_LT(a.max_abs_change, 1e-4);
}

TEST(ApplyMergeLinear, GemmsWithTransposesMergeIntoAGemm) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 6});
  Value* w1 = b.Constant("w1", F(Normal(40 * 6, 20, 0.3), {40, 6}));  // transB
  Value* c1 = b.Constant("c1", F(Normal(40, 21), {1, 40}));
  Value* w2 = b.Constant("w2", F(Normal(40 * 5, 22, 0.3), {40, 5}));
  Value* h = b.Op("Gemm", {x, w1, c1}, {Attribute::Int("transB", 1), Attribute::Float("alpha", 2.0f)});
  b.Output(b.Op("Gemm", {h, w2}, {Attribute::Float("alpha", 0.5f)}));
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.merge_linear = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  EXPECT_EQ(CountOps(*a.model, "Gemm"), 1);
  EXPECT_LT(a.max_abs_change, 1e-4);
}

TEST(ApplyMergeLinear, GemmsWithoutBiasAtOpsetTenMergeIntoAGemmWithC) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 6});
  Value* zero40 = b.Constant("z1", F(std::vector<float>(40, 0.0f), {40}));
  Value* zero5 = b.Constant("z2", F(std::vector<float>(5, 0.0f), {5}));
  Value* h = b.Op("Gemm", {x, b.Constant("w1", F(Normal(6 * 40, 20, 0.3), {6, 40})), zero40});
  b.Output(b.Op("Gemm", {h, b.Constant("w2", F(Normal(40 * 5, 22, 0.3), {40, 5})), zero5}));
  std::unique_ptr<Model> m = b.Build(10);
  ApproximateOptions o;
  o.merge_linear = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  ASSERT_EQ(CountOps(*a.model, "Gemm"), 1);
  for (const auto& n : a.model->graph->nodes()) {
    if (n->op_type == "Gemm") {
      EXPECT_EQ(n->num_inputs(), 3u);
    }
  }
  EXPECT_LT(a.max_abs_change, 1e-4);
}

TEST(ApplyMergeLinear, ConvThenPointwiseConvMergesButNotWhereItDoesNotPay) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 7, 7});
  Value* w1 = b.Constant("w1", F(Normal(32 * 4 * 9, 30, 0.2), {32, 4, 3, 3}));
  Value* b1 = b.Constant("b1", F(Normal(32, 31), {32}));
  Value* w2 = b.Constant("w2", F(Normal(4 * 32, 32, 0.2), {4, 32, 1, 1}));
  Value* h = b.Op("Conv", {x, w1, b1}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* y = b.Op("Conv", {h, w2});
  // A narrow pair that would grow if merged: 4 → 2 → 4 at 3×3 (n = 36).
  Value* w3 = b.Constant("w3", F(Normal(2 * 4 * 9, 33, 0.2), {2, 4, 3, 3}));
  Value* w4 = b.Constant("w4", F(Normal(4 * 2, 34, 0.2), {4, 2, 1, 1}));
  b.Output(b.Op("Conv", {b.Op("Conv", {y, w3}, {Attribute::Ints("pads", {1, 1, 1, 1})}), w4}));
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.merge_linear = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.steps.size(), 1u);
  EXPECT_TRUE(a.result.steps[0].kept);
  EXPECT_EQ(CountOps(*a.model, "Conv"), 3);
  EXPECT_EQ(WeightOf(*a.model, "Conv", 0)->dims(), (std::vector<int64_t>{4, 4, 3, 3}));
  EXPECT_LT(a.max_abs_change, 1e-4);
}

TEST(ApplyMergeLinear, NotAcrossANonlinearityOrASecondReader) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 8});
  Value* w1 = b.Constant("w1", F(Normal(8 * 64, 40), {8, 64}));
  Value* w2 = b.Constant("w2", F(Normal(64 * 6, 41), {64, 6}));
  Value* w3 = b.Constant("w3", F(Normal(8 * 64, 42), {8, 64}));
  Value* w4 = b.Constant("w4", F(Normal(64 * 6, 43), {64, 6}));
  Value* h1 = b.Op("MatMul", {x, w1});
  Value* y1 = b.Op("MatMul", {b.Op("Relu", {h1}), w2});
  Value* h2 = b.Op("MatMul", {x, w3});
  Value* y2 = b.Op("MatMul", {h2, w4});
  b.Output(y1);
  b.Output(y2);
  b.Output(h2);  // h2 is read outside the pair
  std::unique_ptr<Model> m = b.Build(17);
  ApproximateOptions o;
  o.merge_linear = true;
  Applied a = Apply(*m, o);
  EXPECT_TRUE(a.result.steps.empty());
}

// Conv → ReLU → MaxPool → Conv where 5 of the 16 channels have zero weights
// and a bias of -1: dead on any input.
std::unique_ptr<Model> ConvWithDeadChannels(bool residual) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 3, 8, 8});
  std::vector<float> w1 = Normal(16 * 3 * 9, 50, 0.3), b1 = Normal(16, 51, 0.1);
  for (int c : {1, 4, 5, 9, 15}) {
    for (int k = 0; k < 27; ++k) w1[c * 27 + k] = 0;
    b1[c] = -1;
  }
  Value* h = b.Op("Conv", {x, b.Constant("w1", F(w1, {16, 3, 3, 3})), b.Constant("b1", F(b1, {16}))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* r = b.Op("Relu", {h});
  Value* p = b.Op("MaxPool", {r}, {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  Value* y = b.Op("Conv", {p, b.Constant("w2", F(Normal(8 * 16 * 9, 52, 0.3), {8, 16, 3, 3}))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(y);
  if (residual) b.Output(b.Op("Add", {r, r}));
  return b.Build(17);
}

TEST(ApplyPruneDead, DeadChannelsLeaveBothLayersAndOutputsStay) {
  std::unique_ptr<Model> m = ConvWithDeadChannels(false);
  ApproximateOptions o;
  o.prune_dead = true;
  o.max_error = 0;  // dead units contribute exact zeros
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1) << (a.result.steps.empty() ? "" : a.result.steps[0].refused);
  EXPECT_NE(a.result.steps[0].detail.find("5 dead"), std::string::npos) << a.result.steps[0].detail;
  EXPECT_EQ(WeightOf(*a.model, "Conv", 0)->dims(), (std::vector<int64_t>{11, 3, 3, 3}));
  EXPECT_EQ(WeightOf(*a.model, "Conv", 1)->dims(), (std::vector<int64_t>{8, 11, 3, 3}));
  EXPECT_EQ(a.result.steps[0].params_before, 16 * 27 + 8 * 16 * 9);
  EXPECT_EQ(a.result.steps[0].params_after, 11 * 27 + 8 * 11 * 9);
  EXPECT_LT(a.max_abs_change, 1e-5);
  // The types say the new width (what a file's value_info and other runtimes read).
  for (const auto& n : a.model->graph->nodes()) {
    if (n->op_type == "Relu" || n->op_type == "MaxPool") {
      ASSERT_TRUE(n->output(0)->shape().has_rank());
      EXPECT_EQ(n->output(0)->shape().dims()[1].value(), 11) << n->op_type;
    }
    if (n->op_type == "Conv") {
      EXPECT_EQ(n->input(1)->shape().dims()[0].value(), n->input(1)->initializer()->dim(0));
    }
  }
}

TEST(ApplyPruneDead, UnitsReadByAResidualStay) {
  std::unique_ptr<Model> m = ConvWithDeadChannels(true);
  EXPECT_TRUE(FindPrunableUnits(GraphsOf(*m)[0]).empty());
  ApproximateOptions o;
  o.prune_dead = true;
  Applied a = Apply(*m, o);
  EXPECT_EQ(a.result.kept(), 0);
  EXPECT_EQ(WeightOf(*a.model, "Conv", 0)->dims(), (std::vector<int64_t>{16, 3, 3, 3}));
}

// x [rows, 10] → MatMul → Add → Relu → MatMul, unit 7 dead by construction.
std::unique_ptr<Model> MlpWithADeadUnit(int64_t rows) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {rows, 10});
  std::vector<float> w1 = Normal(10 * 32, 60, 0.3), b1 = Normal(32, 61, 0.1);
  for (int k = 0; k < 10; ++k) w1[k * 32 + 7] = 0;  // unit 7: weight 0, bias -2: dead
  b1[7] = -2;
  Value* h = b.Op("Add", {b.Op("MatMul", {x, b.Constant("w1", F(w1, {10, 32}))}), b.Constant("b1", F(b1, {32}))});
  Value* y = b.Op("MatMul", {b.Op("Relu", {h}), b.Constant("w2", F(Normal(32 * 4, 62, 0.3), {32, 4}))});
  b.Output(y);
  return b.Build(17);
}

TEST(ApplyPruneDead, MlpThroughABiasAddAndRareUnitsMeasured) {
  std::unique_ptr<Model> m = MlpWithADeadUnit(16);  // 4 samples × 16 rows: 64 positions a unit
  ApproximateOptions o;
  o.prune_dead = true;
  Applied a = Apply(*m, o);
  ASSERT_EQ(a.result.kept(), 1);
  EXPECT_EQ(WeightOf(*a.model, "MatMul", 0)->dims(), (std::vector<int64_t>{10, 31}));
  EXPECT_EQ(WeightOf(*a.model, "MatMul", 1)->dims(), (std::vector<int64_t>{31, 4}));
  EXPECT_LT(a.max_abs_change, 1e-5);

  // Units active on up to 60% of positions go too: the outputs change, and
  // a budget of 1e-6 refuses it.
  o.min_activation = 0.6;
  o.max_error = 1e-6;
  Applied strict = Apply(*m, o);
  ASSERT_EQ(strict.result.steps.size(), 1u);
  EXPECT_FALSE(strict.result.steps[0].kept);
  EXPECT_NE(strict.result.steps[0].detail.find("rarely active"), std::string::npos);
}

// From 8 samples on, every 4th is held out: not decided on, the result's
// error on them is reported (dead units: exactly 0 there too).
TEST(ApplyPruneDead, HeldOutSamplesAreNotDecidedOnAndReported) {
  std::unique_ptr<Model> m = MlpWithADeadUnit(16);
  std::unique_ptr<Model> model = CloneModel(*m);
  ApproximateOptions o;
  o.prune_dead = true;
  o.measure_latency = false;
  o.calibration = RandomCalibration(*m, 8, 5);
  auto r = ApplyApproximations(*m, model, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->samples, 6);
  EXPECT_EQ(r->holdout_samples, 2);
  ASSERT_EQ(r->kept(), 1);
  EXPECT_EQ(r->holdout_error, 0);
  EXPECT_NE(r->data.find("6 decided on, 2 held out"), std::string::npos) << r->data;
}

TEST(ApplyPruneDead, UnitsSeenAtTooFewPositionsAreNotCalledDead) {
  std::unique_ptr<Model> m = MlpWithADeadUnit(6);  // 4 samples × 6 rows: 24 positions
  ApproximateOptions o;
  o.prune_dead = true;
  Applied a = Apply(*m, o);
  EXPECT_TRUE(a.result.steps.empty());
  ASSERT_EQ(a.result.notes.size(), 1u);
  EXPECT_NE(a.result.notes[0].find("fewer than 32 positions"), std::string::npos) << a.result.notes[0];
}

// A residual stream: conv0 → Relu → (block: conv1 → Relu → conv2) + stream →
// Relu → conv3. The stream's channels are written by conv0 and conv2 and read
// by conv1 and conv3; channels 2 and 6 are dead at both ReLUs the readers
// read (conv0's and conv2's rows zero, biases -1), so they leave all four
// layers. With `bn`, conv2's output passes a BatchNormalization first (the
// dead channels' shift -1 is there).
// `shared_bias`: conv0 and conv2 read one bias tensor (equal biases an
// exporter or CSE stored once); `bias_read_outside`: a node outside the group
// reads it too (an extra output adds it to x's last axis).
std::unique_ptr<Model> ResidualStream(bool bn, bool stream_is_output, bool shared_bias = false,
                                      bool bias_read_outside = false) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 3, 8, 8});
  auto conv = [&](Value* in, const std::string& name, int64_t out, int64_t cin, uint64_t seed, bool dead_rows, bool bias = true) {
    std::vector<float> w = Normal(out * cin * 9, seed, 0.3), c = Normal(out, seed + 1, 0.1);
    for (int d : {2, 6}) {
      if (!dead_rows) break;
      for (int64_t k = 0; k < cin * 9; ++k) w[d * cin * 9 + k] = 0;
      c[d] = -1;
    }
    std::vector<Value*> inputs = {in, b.Constant(name + "_w", F(w, {out, cin, 3, 3}))};
    if (bias && shared_bias && dead_rows) {
      Value* shared = b.graph().FindValue("shared_b");
      if (shared == nullptr) shared = b.Constant("shared_b", F(c, {out}));
      inputs.push_back(shared);
    } else if (bias) {
      inputs.push_back(b.Constant(name + "_b", F(c, {out})));
    }
    return b.Op("Conv", inputs, {Attribute::Ints("pads", {1, 1, 1, 1})});
  };
  Value* s0 = b.Op("Relu", {conv(x, "conv0", 8, 3, 70, true)});
  Value* h = b.Op("Relu", {conv(s0, "conv1", 4, 8, 72, false)});
  Value* r = conv(h, "conv2", 8, 4, 74, true, !bn);
  if (bn) {
    std::vector<float> shift = Normal(8, 76, 0.1);
    shift[2] = shift[6] = -1;
    std::vector<float> scale = Normal(8, 77, 0.2), mean(8, 0.0f), var(8, 1.0f);
    for (float& v : scale) v = 1 + std::abs(v);
    r = b.Op("BatchNormalization", {r, b.Constant("bn_scale", F(scale, {8})), b.Constant("bn_b", F(shift, {8})),
                                    b.Constant("bn_mean", F(mean, {8})), b.Constant("bn_var", F(var, {8}))});
  }
  Value* s1 = b.Op("Relu", {b.Op("Add", {r, s0})});
  b.Output(conv(s1, "conv3", 5, 8, 78, false));
  if (stream_is_output) b.Output(s1);
  if (bias_read_outside) b.Output(b.Op("Add", {x, b.graph().FindValue("shared_b")}));
  return b.Build(17);
}

const Tensor* NamedWeight(const Model& m, const std::string& name) {
  const Value* v = m.graph->FindValue(name);
  return v != nullptr ? v->initializer() : nullptr;
}

TEST(ApplyPruneDead, DeadChannelsOfAResidualStreamLeaveEveryLayerOnIt) {
  for (bool bn : {false, true}) {
    SCOPED_TRACE(bn ? "with BatchNormalization" : "bias in the conv");
    std::unique_ptr<Model> m = ResidualStream(bn, false);
    ApproximateOptions o;
    o.prune_dead = true;
    o.max_error = 0;
    Applied a = Apply(*m, o);
    // conv1 → Relu → conv2 is a group too (its units are alive).
    ASSERT_EQ(a.result.kept(), 1) << (a.result.steps.empty() ? "no step" : a.result.steps[0].refused);
    const ApproximateStep& step = a.result.steps[0];
    EXPECT_NE(step.detail.find("2 dead of 8 units"), std::string::npos) << step.detail;
    EXPECT_NE(step.where.find("1 residual Add (2 ReLU outputs read)"), std::string::npos) << step.where;
    EXPECT_EQ(NamedWeight(*a.model, "conv0_w")->dims(), (std::vector<int64_t>{6, 3, 3, 3}));
    EXPECT_EQ(NamedWeight(*a.model, "conv1_w")->dims(), (std::vector<int64_t>{4, 6, 3, 3}));
    EXPECT_EQ(NamedWeight(*a.model, "conv2_w")->dims(), (std::vector<int64_t>{6, 4, 3, 3}));
    EXPECT_EQ(NamedWeight(*a.model, "conv3_w")->dims(), (std::vector<int64_t>{5, 6, 3, 3}));
    EXPECT_EQ(NamedWeight(*a.model, "conv0_b")->dims(), (std::vector<int64_t>{6}));
    if (bn) {
      for (const char* c : {"bn_scale", "bn_b", "bn_mean", "bn_var"}) {
        EXPECT_EQ(NamedWeight(*a.model, c)->dims(), (std::vector<int64_t>{6})) << c;
      }
    }
    EXPECT_EQ(step.params_before, (8 * 27 + 4 * 8 * 9 + 8 * 4 * 9 + 5 * 8 * 9));
    EXPECT_EQ(step.params_after, (6 * 27 + 4 * 6 * 9 + 6 * 4 * 9 + 5 * 6 * 9));
    EXPECT_LT(a.max_abs_change, 1e-5);
  }
}

// A bias tensor two layers of the group share shrinks once; one that a node
// outside the group reads too stays whole there, the group's layers reading
// a pruned copy.
TEST(ApplyPruneDead, SharedBiasesShrinkOnceOrAreCopied) {
  for (bool outside : {false, true}) {
    SCOPED_TRACE(outside ? "read outside the group too" : "read by the group only");
    std::unique_ptr<Model> m = ResidualStream(false, false, /*shared_bias=*/true, outside);
    ApproximateOptions o;
    o.prune_dead = true;
    o.max_error = 0;
    Applied a = Apply(*m, o);
    ASSERT_EQ(a.result.kept(), 1) << (a.result.steps.empty() ? "no step" : a.result.steps[0].refused);
    EXPECT_EQ(NamedWeight(*a.model, "conv0_w")->dims(), (std::vector<int64_t>{6, 3, 3, 3}));
    EXPECT_EQ(NamedWeight(*a.model, "conv2_w")->dims(), (std::vector<int64_t>{6, 4, 3, 3}));
    std::vector<int64_t> bias_dims;
    for (const auto& n : a.model->graph->nodes()) {
      if (n->op_type == "Conv" && (n->input(1)->name() == "conv0_w" || n->input(1)->name() == "conv2_w")) {
        EXPECT_EQ(n->input(2)->initializer()->dims(), (std::vector<int64_t>{6}));
        EXPECT_EQ(n->input(2)->name() == "shared_b", !outside) << n->input(2)->name();
      }
    }
    EXPECT_EQ(NamedWeight(*a.model, "shared_b")->dims(), (std::vector<int64_t>{outside ? 8 : 6}));
    EXPECT_LT(a.max_abs_change, 1e-5);
  }
}

TEST(ApplyPruneDead, AStreamThatLeavesTheLayersStays) {
  // The stream is also a graph output: its channels cannot go.
  std::unique_ptr<Model> m = ResidualStream(false, true);
  ApproximateOptions o;
  o.prune_dead = true;
  Applied a = Apply(*m, o);
  EXPECT_EQ(a.result.kept(), 0);
  EXPECT_EQ(NamedWeight(*a.model, "conv0_w")->dims(), (std::vector<int64_t>{8, 3, 3, 3}));
}

// Layers inside If branches: a branch the calibration samples take is
// searched like the main graph; one no sample takes is left alone (a change
// there would go unmeasured) and said.
struct Branch {
  explicit Branch(Graph* parent) : graph(std::make_shared<Graph>(parent)), b(graph.get()) {}
  std::shared_ptr<Graph> graph;
  GraphBuilder b;
};

// y = cond ? then(x) : else(x), x [rows, in]; each branch built by its function.
std::unique_ptr<Model> IfModel(int64_t rows, int64_t in, int64_t out,
                               const std::function<Value*(GraphBuilder&, Value*)>& then_body,
                               const std::function<Value*(GraphBuilder&, Value*)>& else_body) {
  GraphBuilder b;
  Value* cond = b.Input("cond", TypeInfo::Tensor(DType::kBool, Shape::Scalar()));
  Value* x = b.Input("x", DType::kFloat, {rows, in});
  Branch then_b(&b.graph()), else_b(&b.graph());
  then_b.graph->name = "then";
  else_b.graph->name = "else";
  for (auto [branch, body] : {std::pair{&then_b, then_body}, std::pair{&else_b, else_body}}) {
    Value* y = body(branch->b, x);
    y->set_type(TypeInfo::Tensor(DType::kFloat, Shape::FromValues({rows, out})));
    branch->b.Output(y);
  }
  b.Output(b.Op("If", {cond},
                {Attribute::GraphValue("then_branch", then_b.graph), Attribute::GraphValue("else_branch", else_b.graph)},
                "y"));
  return b.Build(17);
}

// Samples that all take the then branch.
CalibrationData ThenSamples(const Model& m, int64_t n) {
  CalibrationData random = RandomCalibration(m, n, 7);
  CalibrationData c = random;
  c.feed = [random](int64_t i) -> absl::StatusOr<Feeds> {
    auto f = random.feed(i);
    if (f.ok()) (*f)["cond"] = RuntimeValue(Tensor::Scalar<bool>(true));
    return f;
  };
  return c;
}

// The outputs of `a` and `b` on random x, with cond = `cond`: the largest difference.
double MaxChange(const Model& a, const Model& b, bool cond, int64_t rows, int64_t in) {
  auto sa = session::Session::Create(a);
  auto sb = session::Session::Create(b);
  EXPECT_TRUE(sa.ok() && sb.ok());
  Feeds f = {{"cond", RuntimeValue(Tensor::Scalar<bool>(cond))}, {"x", RuntimeValue(F(Normal(rows * in, 5), {rows, in}))}};
  auto ya = (*sa)->Run(f);
  auto yb = (*sb)->Run(f);
  EXPECT_TRUE(ya.ok() && yb.ok());
  double change = 0;
  for (int64_t k = 0; k < (*ya)[0].tensor.num_elements(); ++k) {
    change = std::max(change, std::abs((*ya)[0].tensor.ElementAsDouble(k) - (*yb)[0].tensor.ElementAsDouble(k)));
  }
  return change;
}

// The weights of the If's `branch` (0 then, 1 else) read by `op` nodes, in order.
std::vector<std::vector<int64_t>> BranchWeightDims(const Model& m, size_t branch, const std::string& op) {
  std::vector<std::vector<int64_t>> dims;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type != "If") continue;
    for (const auto& inner : n->Subgraphs()[branch]->nodes()) {
      if (inner->op_type == op) dims.push_back(inner->input(1)->initializer()->dims());
    }
  }
  return dims;
}

TEST(ApplyInBranches, TheTakenBranchIsFactorizedAndTheOtherLeftAlone) {
  auto matmul = [](uint64_t seed) {
    return [seed](GraphBuilder& b, Value* x) { return b.Op("MatMul", {x, b.Constant("w", F(RankR(64, 48, 3, seed), {64, 48}))}); };
  };
  std::unique_ptr<Model> m = IfModel(4, 64, 48, matmul(1), matmul(3));
  // Both branches name their weight "w": the builder makes the names unique model-wide.
  std::unique_ptr<Model> model = CloneModel(*m);
  ApproximateOptions o;
  o.low_rank = true;
  o.rank.energy = 1 - 1e-9;
  o.measure_latency = false;
  o.calibration = ThenSamples(*m, 4);
  auto r = ApplyApproximations(*m, model, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_TRUE(r->steps[0].kept) << r->steps[0].refused;
  EXPECT_NE(r->steps[0].where.find("in If 'If_"), std::string::npos) << r->steps[0].where;
  EXPECT_NE(r->steps[0].where.find("then_branch"), std::string::npos) << r->steps[0].where;
  EXPECT_EQ(r->steps[0].macs_before, 4 * 64 * 48);  // positions known inside the branch
  EXPECT_EQ(BranchWeightDims(*model, 0, "MatMul"), (std::vector<std::vector<int64_t>>{{64, 3}, {3, 48}}));
  EXPECT_EQ(BranchWeightDims(*model, 1, "MatMul"), (std::vector<std::vector<int64_t>>{{64, 48}}));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("1 linear layer inside If/Loop/Scan bodies no calibration sample ran"), std::string::npos)
      << r->notes[0];
  EXPECT_LT(MaxChange(*m, *model, true, 4, 64), 1e-3);
  EXPECT_EQ(MaxChange(*m, *model, false, 4, 64), 0.0);  // the branch not taken is exactly as it was
}

TEST(ApplyInBranches, DeadUnitsInsideABranchArePruned) {
  auto mlp = [](GraphBuilder& b, Value* x) {
    std::vector<float> w1 = Normal(10 * 32, 60, 0.3), b1 = Normal(32, 61, 0.1);
    for (int k = 0; k < 10; ++k) w1[k * 32 + 7] = 0;  // unit 7: weight 0, bias -2: dead
    b1[7] = -2;
    Value* h = b.Op("Add", {b.Op("MatMul", {x, b.Constant("w1", F(w1, {10, 32}))}), b.Constant("b1", F(b1, {32}))});
    return b.Op("MatMul", {b.Op("Relu", {h}), b.Constant("w2", F(Normal(32 * 4, 62, 0.3), {32, 4}))});
  };
  auto neg = [](GraphBuilder& b, Value* x) { return b.Op("Slice", {b.Op("Neg", {x}), b.Constant("s", Tensor::FromVector<int64_t>({0}, {1})), b.Constant("e", Tensor::FromVector<int64_t>({4}, {1})), b.Constant("a", Tensor::FromVector<int64_t>({1}, {1}))}); };
  std::unique_ptr<Model> m = IfModel(16, 10, 4, mlp, neg);
  std::unique_ptr<Model> model = CloneModel(*m);
  ApproximateOptions o;
  o.prune_dead = true;
  o.max_error = 0;  // dead units contribute exact zeros
  o.measure_latency = false;
  o.calibration = ThenSamples(*m, 4);  // 4 samples × 16 rows: 64 positions a unit
  auto r = ApplyApproximations(*m, model, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kept(), 1) << (r->steps.empty() ? "no step" : r->steps[0].refused);
  EXPECT_NE(r->steps[0].detail.find("1 dead"), std::string::npos) << r->steps[0].detail;
  EXPECT_EQ(BranchWeightDims(*model, 0, "MatMul"), (std::vector<std::vector<int64_t>>{{10, 31}, {31, 4}}));
  EXPECT_LT(MaxChange(*m, *model, true, 16, 10), 1e-5);
  EXPECT_EQ(MaxChange(*m, *model, false, 16, 10), 0.0);
}

}  // namespace
}  // namespace aic::analysis

// Repeated blocks (analysis/blocks.h) on built graphs: a chain of residual
// layers (Linear, activation, Linear, Add of the layer's input) repeats when
// every layer is built alike; a layer with another op, another edge or
// another weight shape breaks the run; a stage of blocks repeated gives the
// stage as the outermost run.
#include "analysis/blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "analysis/analyze.h"
#include "graph/builder.h"

namespace aic::analysis {
namespace {

struct Layer {
  std::string act = "Relu";
  bool residual_from_inside = false;  // the Add reads the activation, not the layer's input
  int64_t width = 8;                  // of the hidden Linear (8: square)
};

class Chain {
 public:
  explicit Chain(const std::string& prefix) : prefix_(prefix) { x_ = b_.Input("x", DType::kFloat, {1, 8}); }

  // Linear 8→w, act, Linear w→8, Add: four logical nodes.
  void Add(const Layer& l, const std::string& name) {
    Value* w1 = Weight({8, l.width});
    Value* w2 = Weight({l.width, 8});
    Value* h = b_.Op("MatMul", {x_, w1});
    Name(name, "fc1/MatMul");
    Value* a = b_.Op(l.act, {h});
    Name(name, "act/" + l.act);
    Value* y = b_.Op("MatMul", {a, w2});
    Name(name, "fc2/MatMul");
    if (l.residual_from_inside && l.width == 8) {
      x_ = b_.Op("Add", {a, y});
    } else {
      x_ = b_.Op("Add", {x_, y});
    }
    Name(name, "Add");
  }
  // One Add, the op a layer ends with.
  void Stem(const std::string& name) {
    x_ = b_.Op("Add", {x_, x_});
    Name(name, "Add");
  }
  // One node of another kind between stages.
  void Other(const std::string& name) {
    x_ = b_.Op("Softmax", {x_});
    Name(name, "Softmax");
  }

  Report Analyze() {
    b_.Output(x_);
    model_ = b_.Build();
    AnalysisOptions options;
    options.spectra = false;
    auto r = analysis::Analyze(*model_, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : Report{};
  }

 private:
  Value* Weight(std::vector<int64_t> dims) {
    std::vector<float> v(dims[0] * dims[1]);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + ++seed_) % 13) / 13.0f - 0.5f;
    return b_.Constant("w" + std::to_string(seed_), Tensor::FromVector<float>(v, dims));
  }
  void Name(const std::string& layer, const std::string& rest) {
    b_.last_node()->name = layer.empty() ? "p2o." + rest + "." + std::to_string(++unnamed_) : prefix_ + layer + "/" + rest;
  }

  GraphBuilder b_;
  std::string prefix_;
  Value* x_;
  std::unique_ptr<Model> model_;
  int seed_ = 0, unnamed_ = 0;
};

std::string Layer(int k) { return "layer." + std::to_string(k); }

TEST(RepeatedBlocks, IdenticalLayersAreOneBlock) {
  Chain c("/m/encoder/");
  for (int k = 0; k < 12; ++k) c.Add({}, Layer(k));
  Report r = c.Analyze();
  ASSERT_EQ(r.nodes.size(), 48u);
  auto blocks = FindRepeatedBlocks(r);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 0);
  EXPECT_EQ(blocks[0].size, 4);
  EXPECT_EQ(blocks[0].count, 12);
  EXPECT_EQ(blocks[0].end(), 48);
  EXPECT_EQ(blocks[0].label, "encoder/layer.*");
}

TEST(RepeatedBlocks, StartsWhereTheNamesStart) {
  // The stem ends with an Add, as each layer does: the run shifted one node
  // back (stem Add + layer 0 less its Add, ...) is as long; the names choose.
  Chain c("/m/");
  c.Stem("stem");
  for (int k = 0; k < 5; ++k) c.Add({}, Layer(k));
  Report r = c.Analyze();
  ASSERT_EQ(r.nodes.size(), 21u);
  auto blocks = FindRepeatedBlocks(r);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 1);
  EXPECT_EQ(blocks[0].size, 4);
  EXPECT_EQ(blocks[0].count, 5);
  EXPECT_EQ(blocks[0].label, "m/layer.*");
}

TEST(RepeatedBlocks, ADifferentOpBreaksTheRun) {
  Chain c("/m/");
  for (int k = 0; k < 6; ++k) c.Add({.act = k == 2 ? "Sigmoid" : "Relu"}, Layer(k));
  auto blocks = FindRepeatedBlocks(c.Analyze());
  // Layers 0-1 hide 4 nodes (too few for a box); layers 3-5 are the run.
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 12);
  EXPECT_EQ(blocks[0].size, 4);
  EXPECT_EQ(blocks[0].count, 3);
  EXPECT_EQ(blocks[0].label, "m/layer.*");
}

TEST(RepeatedBlocks, ADifferentEdgeBreaksTheRun) {
  Chain c("/m/");
  for (int k = 0; k < 7; ++k) c.Add({.residual_from_inside = k == 3}, Layer(k));
  auto blocks = FindRepeatedBlocks(c.Analyze());
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].start, 0);
  EXPECT_EQ(blocks[0].count, 3);
  EXPECT_EQ(blocks[1].start, 16);
  EXPECT_EQ(blocks[1].count, 3);
}

TEST(RepeatedBlocks, ADifferentWeightShapeBreaksTheRun) {
  Chain c("/m/");
  for (int k = 0; k < 6; ++k) c.Add({.width = k == 2 ? 16 : 8}, Layer(k));
  auto blocks = FindRepeatedBlocks(c.Analyze());
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 12);
  EXPECT_EQ(blocks[0].count, 3);
}

TEST(RepeatedBlocks, AlternatingLayersRepeatInPairs) {
  // Swin's blocks alternate (shifted windows every other block).
  Chain c("/features/features.5/");
  for (int k = 0; k < 6; ++k) c.Add({.act = k % 2 ? "Sigmoid" : "Relu"}, "features.5." + std::to_string(k));
  auto blocks = FindRepeatedBlocks(c.Analyze());
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 0);
  EXPECT_EQ(blocks[0].size, 8);
  EXPECT_EQ(blocks[0].count, 3);
  EXPECT_EQ(blocks[0].label, "features.5");
}

TEST(RepeatedBlocks, NestedRepetitionGivesTheOutermostRun) {
  // Three stages of (three layers, then a Softmax).
  Chain c("/m/");
  for (int s = 0; s < 3; ++s) {
    std::string stage = "stage." + std::to_string(s);
    for (int k = 0; k < 3; ++k) c.Add({}, stage + "/" + Layer(k));
    c.Other(stage + "/merge");
  }
  Report r = c.Analyze();
  ASSERT_EQ(r.nodes.size(), 39u);
  auto blocks = FindRepeatedBlocks(r);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].start, 0);
  EXPECT_EQ(blocks[0].size, 13);
  EXPECT_EQ(blocks[0].count, 3);
  EXPECT_EQ(blocks[0].label, "m/stage.*");
}

TEST(RepeatedBlocks, NamesThatSayNothingLabelByOps) {
  Chain c("");
  for (int k = 0; k < 4; ++k) c.Add({}, "");
  auto blocks = FindRepeatedBlocks(c.Analyze());
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].count, 4);
  EXPECT_EQ(blocks[0].label, "Linear … Add");
}

TEST(RepeatedBlocks, SmallGraphsHaveNone) {
  Chain c("/m/");
  c.Add({}, Layer(0));
  c.Add({}, Layer(1));
  EXPECT_TRUE(FindRepeatedBlocks(c.Analyze()).empty());
  EXPECT_TRUE(FindRepeatedBlocks(Report{}).empty());
}

// The search is about quadratic: a report of 3000 logical nodes (the HTML
// report's generated test model, 750 residual layers) and one of 3000 nodes
// that do not repeat (all Adds, each reading its predecessor and one node a
// pseudo-random distance back) take milliseconds.
Report Synthetic(int n, bool repeating) {
  Report r;
  std::mt19937 rng(1);
  const char* ops[] = {"Linear", "ReLU", "Tanh", "Add"};
  for (int i = 0; i < n; ++i) {
    ReportNode node;
    node.index = i;
    if (repeating) {
      int k = i % 4, prev_add = i - k - 1;
      node.name = ops[k];
      node.sources.push_back({ops[k], "block" + std::to_string(i / 4) + "/" + ops[k]});
      node.input_from = k == 0 ? std::vector<int>{prev_add} : std::vector<int>{i - 1};
      if (k == 3) node.input_from = {prev_add, i - 1};
    } else {
      // (The first hundred, which could only read the graph input, each an op of its own.)
      node.name = i < 100 ? "Op" + std::to_string(i) : "Add";
      node.sources.push_back({"Add", "p2o.Add." + std::to_string(i)});
      // One input from a pseudo-random distance back: no two pieces alike.
      int back = 2 + static_cast<int>(rng() % 97);
      node.input_from = {i - 1, std::max(-1, i - back)};
    }
    r.nodes.push_back(node);
  }
  return r;
}

TEST(RepeatedBlocks, ThousandsOfNodesTakeLittleTime) {
  for (bool repeating : {true, false}) {
    Report r = Synthetic(3000, repeating);
    auto t0 = std::chrono::steady_clock::now();
    auto blocks = FindRepeatedBlocks(r);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (repeating) {
      ASSERT_EQ(blocks.size(), 1u);
      EXPECT_EQ(blocks[0].count, 750);
      EXPECT_EQ(blocks[0].label, "block*");
    } else {
      EXPECT_TRUE(blocks.empty());
    }
    EXPECT_LT(ms, 2000) << (repeating ? "repeating" : "not repeating");
    std::printf("3000 %s nodes: %.0f ms\n", repeating ? "repeating" : "non-repeating", ms);
  }
}

}  // namespace
}  // namespace aic::analysis

// Provenance of `opt` (rewrite/provenance.h, rewrite/egraph/trace.cc): each
// optimized node names the rule that made it and the original nodes it stands
// for; each original node nothing stands for says why it went.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>

#include "graph/builder.h"
#include "rewrite/optimize.h"

namespace aic::rewrite {
namespace {

Tensor Floats(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, dims); }

struct Traced {
  std::unique_ptr<Model> model;
  OptimizeStats stats;
  const OptimizeProvenance& prov() const { return *stats.provenance; }
  // The names of the original nodes optimized node k stands for.
  std::set<std::string> Replaced(size_t k) const {
    std::set<std::string> names;
    for (int32_t i : prov().nodes[k].replaced) names.insert(prov().original->nodes()[i]->name);
    return names;
  }
  int Original(const std::string& name) const {
    for (size_t i = 0; i < prov().original->num_nodes(); ++i) {
      if (prov().original->nodes()[i]->name == name) return static_cast<int>(i);
    }
    return -1;
  }
};

Traced Optimized(std::unique_ptr<Model> m, std::set<std::string> only = {}) {
  OptimizeOptions o;
  o.record_provenance = true;
  o.only_rules = std::move(only);
  auto stats = Optimize(*m, o);
  EXPECT_TRUE(stats.ok()) << stats.status();
  Traced t{std::move(m), stats.ok() ? *stats : OptimizeStats{}};
  EXPECT_NE(t.stats.provenance, nullptr);
  if (t.stats.provenance) {
    EXPECT_EQ(t.prov().nodes.size(), t.model->graph->num_nodes());
    EXPECT_EQ(t.prov().removed.size(), t.prov().original->num_nodes());
  }
  return t;
}

std::unique_ptr<Model> ConvBn() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
  std::vector<float> w(3 * 2 * 3 * 3);
  std::iota(w.begin(), w.end(), -20.f);
  Value* y = b.Op("Conv", {x, b.Constant("w", Floats(w, {3, 2, 3, 3})), b.Constant("b", Floats({0.1f, -0.2f, 0.3f}, {3}))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  b.last_node()->name = "conv";
  Value* z = b.Op("BatchNormalization",
                  {y, b.Constant("g", Floats({1.5f, 0.5f, 2.f}, {3})), b.Constant("be", Floats({0.1f, 0.2f, 0.3f}, {3})),
                   b.Constant("m", Floats({0.3f, -0.1f, 0.f}, {3})), b.Constant("v", Floats({1.f, 2.f, 0.5f}, {3}))});
  b.last_node()->name = "bn";
  b.Output(z);
  return b.Build(13);
}

TEST(Provenance, ConvBatchNormIsOneConvOfFuseConvBn) {
  Traced t = Optimized(ConvBn());
  ASSERT_EQ(t.model->graph->num_nodes(), 1u);
  EXPECT_EQ(t.model->graph->nodes()[0]->op_type, "Conv");
  EXPECT_EQ(t.prov().nodes[0].rule, "fuse_conv_bn");
  EXPECT_EQ(t.Replaced(0), (std::set<std::string>{"conv", "bn"}));
  // The BatchNormalization computed the output: it is the producer.
  ASSERT_EQ(t.prov().nodes[0].producers, 1);
  EXPECT_EQ(t.prov().nodes[0].replaced[0], t.Original("bn"));
  for (const std::string& why : t.prov().removed) EXPECT_EQ(why, "");
}

TEST(Provenance, SigmoidTimesXIsSwishAtOpset24) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 6});
  Value* s = b.Op("Sigmoid", {x});
  b.last_node()->name = "sig";
  b.Output(b.Op("Mul", {x, s}));
  b.last_node()->name = "mul";
  Traced t = Optimized(b.Build(24));
  ASSERT_EQ(t.model->graph->num_nodes(), 1u);
  EXPECT_EQ(t.model->graph->nodes()[0]->op_type, "Swish");
  EXPECT_EQ(t.prov().nodes[0].rule, "fuse_swish");
  EXPECT_EQ(t.Replaced(0), (std::set<std::string>{"sig", "mul"}));
}

TEST(Provenance, FoldedAndUnusedNodesSayWhy) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  Value* p = b.Op("Mul", {b.Constant("c1", Floats({1.f, 2.f}, {2})), b.Constant("c2", Floats({3.f, 4.f}, {2}))});
  b.last_node()->name = "product";
  Value* n = b.Op("Neg", {p});
  b.last_node()->name = "negated";
  b.Output(b.Op("Add", {x, n}));
  b.last_node()->name = "add";
  b.Op("Relu", {x});  // read by nothing
  b.last_node()->name = "dead";
  Traced t = Optimized(b.Build(17));
  ASSERT_EQ(t.model->graph->num_nodes(), 1u);
  EXPECT_EQ(t.prov().nodes[0].rule, kOriginalRule);  // the Add as it was, reading the folded constant
  EXPECT_EQ(t.Replaced(0), (std::set<std::string>{"add"}));
  const auto& removed = t.prov().removed;
  EXPECT_EQ(removed[t.Original("add")], "");
  EXPECT_EQ(removed[t.Original("negated")].rfind("folded into the initializer '", 0), 0u) << removed[t.Original("negated")];
  EXPECT_NE(removed[t.Original("negated")].find("(fold_constants)"), std::string::npos);
  EXPECT_EQ(removed[t.Original("product")].rfind("folded: part of what became the initializer", 0), 0u)
      << removed[t.Original("product")];
  EXPECT_EQ(removed[t.Original("dead")].rfind("unused", 0), 0u) << removed[t.Original("dead")];
}

TEST(Provenance, AnIdentityIsBypassedAndEqualNodesMerge) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  Value* i = b.Op("Identity", {x});
  b.last_node()->name = "id";
  Value* r1 = b.Op("Relu", {i});
  b.last_node()->name = "relu1";
  Value* r2 = b.Op("Relu", {x});
  b.last_node()->name = "relu2";
  b.Output(b.Op("Add", {r1, r2}));
  b.last_node()->name = "add";
  Traced t = Optimized(b.Build(17));
  ASSERT_EQ(t.model->graph->num_nodes(), 2u);
  const Graph& g = *t.model->graph;
  size_t relu = g.nodes()[0]->op_type == "Relu" ? 0 : 1;
  EXPECT_EQ(t.Replaced(relu), (std::set<std::string>{"relu1", "relu2"}));
  EXPECT_EQ(t.prov().nodes[relu].producers, 2);
  EXPECT_EQ(t.prov().removed[t.Original("id")].rfind("bypassed: its output is 'x', a graph input", 0), 0u)
      << t.prov().removed[t.Original("id")];
}

TEST(Provenance, OnlyWhenAsked) {
  OptimizeOptions o;
  auto m = ConvBn();
  auto stats = Optimize(*m, o);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->provenance, nullptr);
}

// Bodies are optimized but not traced: the main graph's If is traced as a node.
TEST(Provenance, GraphsWithBodiesAreTracedInTheMainGraph) {
  GraphBuilder b;
  Value* c = b.Input("c", DType::kBool, {});
  Value* x = b.Input("x", DType::kFloat, {2});
  auto then_g = std::make_shared<Graph>(&b.graph());
  {
    GraphBuilder tb(then_g.get());
    tb.Output(tb.Op("Identity", {tb.Op("Identity", {x}, {}, "t_mid")}, {}, "t_out"));
  }
  auto else_g = std::make_shared<Graph>(&b.graph());
  {
    GraphBuilder eb(else_g.get());
    eb.Output(eb.Op("Neg", {eb.Op("Identity", {x}, {}, "e_mid")}, {}, "e_out"));
  }
  b.Output(b.Op("If", {c}, {Attribute::GraphValue("then_branch", then_g), Attribute::GraphValue("else_branch", else_g)},
                "y"));
  b.last_node()->name = "if";
  Traced t = Optimized(b.Build(17));
  ASSERT_EQ(t.model->graph->num_nodes(), 1u);
  EXPECT_EQ(t.prov().nodes[0].rule, kOriginalRule);
  EXPECT_EQ(t.Replaced(0), (std::set<std::string>{"if"}));
}

TEST(Provenance, AnInlinedBranchNamesItsRule) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3});
  Value* dim = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("one", Tensor::Scalar<int64_t>(1))});
  Value* cond = b.Op("Equal", {dim, b.Constant("three", Tensor::Scalar<int64_t>(3))});
  auto then_g = std::make_shared<Graph>(&b.graph());
  {
    GraphBuilder tb(then_g.get());
    tb.Output(tb.Op("Relu", {x}, {}, "t_out"));
  }
  auto else_g = std::make_shared<Graph>(&b.graph());
  {
    GraphBuilder eb(else_g.get());
    eb.Output(eb.Op("Neg", {x}, {}, "e_out"));
  }
  Value* y = b.Op("If", {cond}, {Attribute::GraphValue("then_branch", then_g), Attribute::GraphValue("else_branch", else_g)});
  b.last_node()->name = "if";
  b.Output(b.Op("Sigmoid", {y}, {}, "y"));
  Traced t = Optimized(b.Build(17));
  const Graph& g = *t.model->graph;
  ASSERT_EQ(g.num_nodes(), 2u);
  for (size_t k = 0; k < g.num_nodes(); ++k) {
    if (g.nodes()[k]->op_type != "Relu") continue;
    EXPECT_EQ(t.prov().nodes[k].rule, "inline_known_if");
    EXPECT_TRUE(t.Replaced(k).count("if"));
  }
}

}  // namespace
}  // namespace aic::rewrite

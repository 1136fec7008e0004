// opt's page of changes (analysis/render_opt_html.cc): both graphs drawn node
// by node, the links between them as data, the op table and rule counts, and
// nothing fetched. tests/integration/html_opt_browser.py opens such a page in
// Chromium.
#include <gtest/gtest.h>

#include <string>

#include "analysis/render_opt_html.h"
#include "graph/builder.h"
#include "rewrite/optimize.h"

namespace aic::analysis {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

std::string Between(const std::string& s, const std::string& from, const std::string& to) {
  size_t a = s.find(from);
  if (a == std::string::npos) return "";
  size_t b = s.find(to, a + from.size());
  return s.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// x * Sigmoid(x) at opset 24, plus a Neg of a folded product and an unused Relu.
std::unique_ptr<Model> Build() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 6});
  Value* s = b.Op("Sigmoid", {x});
  b.last_node()->name = "sig";
  Value* m = b.Op("Mul", {x, s});
  b.last_node()->name = "mul";
  Value* k = b.Op("Neg", {b.Constant("c", Tensor::FromVector<float>(std::vector<float>(6, 2.f), {6}))});
  b.last_node()->name = "neg";
  b.Output(b.Op("Add", {m, k}));
  b.last_node()->name = "add";
  b.Op("Relu", {x});
  b.last_node()->name = "dead";
  return b.Build(24);
}

std::string Page(bool provenance) {
  auto model = Build();
  auto before = session::OpTypeCounts(*model->graph);
  rewrite::OptimizeOptions o;
  o.record_provenance = provenance;
  auto stats = rewrite::Optimize(*model, o);
  EXPECT_TRUE(stats.ok()) << stats.status();
  OptPage page;
  page.input_path = "in/model.onnx";
  page.output_path = "out.onnx";
  page.optimized = model->graph.get();
  page.provenance = stats->provenance.get();
  page.stats = &*stats;
  page.op_table = session::OpTableRows(before, session::OpTypeCounts(*model->graph));
  auto html = RenderOptHtml(page);
  EXPECT_TRUE(html.ok()) << html.status();
  return html.ok() ? *html : "";
}

TEST(RenderOptHtml, DrawsBothGraphsWithTheirCounts) {
  std::string html = Page(true);
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  std::string a = Between(html, "<svg id=\"a-graph\"", "</svg>");
  std::string b = Between(html, "<svg id=\"b-graph\"", "</svg>");
  // Original: Sigmoid, Mul, Neg, Add, Relu; optimized: Swish, Add.
  EXPECT_EQ(Count(a, "<g class=\"n "), 5u);
  EXPECT_EQ(Count(b, "<g class=\"n "), 2u);
  EXPECT_NE(html.find("original: 5 nodes"), std::string::npos);
  EXPECT_NE(html.find("optimized: 2 nodes"), std::string::npos);
  EXPECT_NE(html.find("<span id=\"count-before\">5</span> → <span id=\"count-after\">2</span>"), std::string::npos);
  // Colours say what happened: the Swish is new, the Add kept; originally the
  // Sigmoid and Mul were replaced, the Neg folded, the Relu unused.
  EXPECT_EQ(Count(b, "class=\"n k-new\""), 1u);
  EXPECT_EQ(Count(b, "class=\"n k-kept\""), 1u);
  EXPECT_EQ(Count(a, "class=\"n k-replaced\""), 2u);
  EXPECT_EQ(Count(a, "class=\"n k-folded\""), 1u);
  EXPECT_EQ(Count(a, "class=\"n k-unused\""), 1u);
  // Edge labels are the shapes.
  EXPECT_NE(a.find(">[2, 6]</text>"), std::string::npos);
  std::string data = Between(html, "<script type=\"application/json\" id=\"opt-data\">", "</script>");
  EXPECT_NE(data.find("\"rule\": \"fuse_swish\""), std::string::npos);
  EXPECT_NE(data.find("(fold_constants)"), std::string::npos);
  // The rule counts and the op table.
  std::string rules = Between(html, "<table id=\"rule-table\">", "</table>");
  EXPECT_NE(rules.find(">fuse_swish</a></th><td>1</td>"), std::string::npos);
  std::string ops = Between(html, "<table id=\"op-table\">", "</table>");
  EXPECT_NE(ops.find(">Swish</a></th><td>0</td><td>1</td>"), std::string::npos);
  EXPECT_NE(ops.find("<tr><th>total</th><td>5</td><td>2</td>"), std::string::npos);
}

TEST(RenderOptHtml, PageIsSelfContained) {
  std::string html = Page(true);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  const std::string ns = "http://www.w3.org/2000/svg";
  for (size_t at = html.find("http://"); at != std::string::npos; at = html.find("http://", at + 1)) {
    EXPECT_EQ(html.compare(at, ns.size(), ns), 0) << html.substr(at, 60);
  }
  for (const char* fetch : {" src=", "<link", "@import", "url(", "@font-face", "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
}

// Without provenance (-O0, or a rewriter that failed) both sides are the
// optimized graph, every node kept.
TEST(RenderOptHtml, WithoutProvenanceBothSidesAreTheSame) {
  std::string html = Page(false);
  std::string a = Between(html, "<svg id=\"a-graph\"", "</svg>");
  std::string b = Between(html, "<svg id=\"b-graph\"", "</svg>");
  EXPECT_EQ(Count(a, "<g class=\"n k-kept\""), 2u);
  EXPECT_EQ(Count(b, "<g class=\"n k-kept\""), 2u);
}

}  // namespace
}  // namespace aic::analysis

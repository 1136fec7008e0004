// The HTML report (analysis/render_html.cc): every logical node is drawn and
// carries its data, the page fetches nothing, and names that are HTML or
// script syntax are escaped both in the drawing and in the embedded JSON.
// tests/integration/html_report_browser.py opens such pages in Chromium.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyze.h"
#include "analysis/render.h"
#include "graph/builder.h"
#include "tests/analysis/analysis_test_util.h"

namespace aic::analysis {
namespace {

using testing::LoadTestModel;

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

std::string Between(const std::string& s, const std::string& from, const std::string& to) {
  size_t a = s.find(from);
  if (a == std::string::npos) return "";
  size_t b = s.find(to, a + from.size());
  return s.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

Report AnalyzeSeed() {
  auto model = LoadTestModel("testdata/seed_mlp.onnx");
  EXPECT_NE(model, nullptr);
  AnalysisOptions options;
  options.model_path = "testdata/seed_mlp.onnx";
  auto r = Analyze(*model, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

TEST(RenderHtml, ReportKnowsTheSeedsEdges) {
  Report r = AnalyzeSeed();
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].input_from, std::vector<int>({-1}));
  EXPECT_EQ(r.nodes[0].input_values, std::vector<std::string>({"input"}));
  EXPECT_EQ(r.nodes[1].input_from, std::vector<int>({0}));
  EXPECT_EQ(r.nodes[2].input_from, std::vector<int>({1}));
  EXPECT_EQ(r.nodes[2].output_values, std::vector<std::string>({"output"}));
  ASSERT_EQ(r.graph_outputs.size(), 1u);
  EXPECT_EQ(r.graph_outputs[0].first, "output");
}

TEST(RenderHtml, SeedPageDrawsEveryNodeWithItsData) {
  Report r = AnalyzeSeed();
  auto page = RenderHtml(r);
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string& html = *page;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  std::string svg = Between(html, "<svg id=\"graph\"", "</svg>");
  ASSERT_FALSE(svg.empty());
  // Three logical nodes, one graph input and one output; four edges.
  EXPECT_EQ(Count(svg, "<g class=\"n "), 3u);
  EXPECT_EQ(Count(svg, "<g class=\"io\""), 2u);
  EXPECT_EQ(Count(svg, "<path class=\"e\""), 4u);
  for (const ReportNode& n : r.nodes) {
    EXPECT_NE(svg.find("data-i=\"" + std::to_string(n.index) + "\""), std::string::npos);
    EXPECT_NE(svg.find(">" + n.name + "</text>"), std::string::npos) << n.name;
    for (const SourceNode& s : n.sources) {
      EXPECT_NE(svg.find(">" + s.name + "</text>"), std::string::npos) << s.name;
    }
  }
  // Edge labels: the shapes between the nodes.
  for (const char* shape : {">[1, 10]</text>", ">[1, 20]</text>", ">[1, 5]</text>"}) {
    EXPECT_NE(svg.find(shape), std::string::npos) << shape;
  }
  // Classes from the Report's traits: expanding, collapse-producing, contracting.
  EXPECT_NE(svg.find("class=\"n c-expanding\" data-i=\"0\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"n c-collapse cp\" data-i=\"1\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"n c-contracting\" data-i=\"2\""), std::string::npos);
  // The panel's data: the text report's lines, the spectra's values.
  std::string data = Between(html, "<script type=\"application/json\" id=\"report-data\">", "</script>");
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(Count(data, "\"src\": "), 3u);
  EXPECT_NE(data.find("\"text\": \"effective rank 9.06, stable rank 3.45, numerical rank 10 of 10\""),
            std::string::npos);
  EXPECT_EQ(Count(data, "\"sv\": ["), 2u);
  EXPECT_NE(data.find("\"how\": \"negative half mapped to 0\""), std::string::npos);
  // The side panel links its findings to their nodes.
  std::string side = Between(html, "<aside id=\"side\">", "</aside>");
  EXPECT_NE(side.find("<a href=\"#node=1\" data-node=\"1\">Node 1</a> ReLU: negative half mapped to 0"),
            std::string::npos);
  EXPECT_NE(side.find("Linear expansion 10 → 20 at <a href=\"#node=0\""), std::string::npos);
  EXPECT_NE(side.find("<th>parameters</th><td>325</td>"), std::string::npos);
}

TEST(RenderHtml, PageIsSelfContained) {
  auto page = RenderHtml(AnalyzeSeed());
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string& html = *page;
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The only URL is the SVG namespace's name, which is never fetched.
  const std::string ns = "http://www.w3.org/2000/svg";
  for (size_t at = html.find("http://"); at != std::string::npos; at = html.find("http://", at + 1)) {
    EXPECT_EQ(html.compare(at, ns.size(), ns), 0) << html.substr(at, 60);
  }
  for (const char* fetch : {" src=", "<link", "@import", "url(", "@font-face", "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
}

TEST(RenderHtml, EscapesNamesInTheDrawingAndTheData) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4});
  Value* y = b.Op("Relu", {x});
  const std::string tricky = "<b>&\"x\"</b>";
  b.last_node()->name = tricky;
  Value* z = b.Op("Sigmoid", {y});
  const std::string breakout = "</script><script>alert(1)</script>";
  b.last_node()->name = breakout;
  b.Output(z);
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  auto page = RenderHtml(*r);
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string& html = *page;
  EXPECT_EQ(html.find(tricky), std::string::npos);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  // The page's own three scripts and nothing else.
  EXPECT_EQ(Count(html, "<script"), 3u);
  EXPECT_EQ(Count(html, "</script>"), 3u);
  // Drawn as text, escaped once.
  EXPECT_NE(html.find(">&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;</text>"), std::string::npos);
  // In the JSON: \u escapes, so the value parses back to the name.
  EXPECT_NE(html.find("\"\\u003cb\\u003e\\u0026\\\"x\\\"\\u003c/b\\u003e\""), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"), std::string::npos);
}

// An op of an unknown domain: the Report knows nothing of it ("Properties:
// none known"), so it is drawn as opaque.
TEST(RenderHtml, UnknownOpIsOpaque) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4});
  Value* y = b.Op("Relu", {x});
  b.Output(b.OpN("Bar", {y}, 1, {}, "com.example")[0]);
  auto model = b.Build();
  model->opset_imports.push_back({"com.example", 1});
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_STREQ(SemanticClass(r->nodes[0]), "collapse");
  EXPECT_STREQ(SemanticClass(r->nodes[1]), "opaque");
  auto page = RenderHtml(*r);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("<g class=\"n c-opaque\" data-i=\"1\""), std::string::npos);
}

// Six identical residual layers: the first is drawn, the other five are one
// box; the drawing with them expanded is in the page as text, and the
// script knows which nodes the box holds.
TEST(RenderHtml, RepeatedLayersAreOneBox) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8});
  for (int k = 0; k < 6; ++k) {
    std::string layer = "/m/layer." + std::to_string(k) + "/";
    std::vector<float> w(64);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5 + k) % 11) / 11.0f - 0.5f;
    Value* h = b.Op("MatMul", {x, b.Constant("w" + std::to_string(k), Tensor::FromVector<float>(w, {8, 8}))});
    b.last_node()->name = layer + "MatMul";
    Value* a = b.Op("Relu", {h});
    b.last_node()->name = layer + "Relu";
    Value* t = b.Op("Tanh", {a});
    b.last_node()->name = layer + "Tanh";
    x = b.Op("Add", {x, t});
    b.last_node()->name = layer + "Add";
  }
  b.Output(x);
  auto model = b.Build();
  AnalysisOptions options;
  options.spectra = false;
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 24u);
  auto page = RenderHtml(*r);
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string& html = *page;
  std::string svg = Between(html, "<svg id=\"graph\"", "</svg>");
  EXPECT_EQ(Count(svg, "<g class=\"n "), 4u);
  EXPECT_EQ(Count(svg, "<g class=\"blk\" data-b=\"0\""), 1u);
  EXPECT_NE(svg.find(">×5 m/layer.*</text>"), std::string::npos);
  EXPECT_NE(svg.find(">4 nodes each · click to expand</text>"), std::string::npos);
  // Edges name the box past the nodes and the graph's input and output.
  EXPECT_NE(svg.find("data-f=\"3\" data-t=\"26\""), std::string::npos);
  std::string expanded = Between(html, "<script type=\"text/x-aic-svg\" id=\"expanded-0\">", "</script>");
  EXPECT_EQ(Count(expanded, "<g class=\"n "), 24u);
  EXPECT_EQ(Count(expanded, "<g class=\"blk\""), 0u);
  EXPECT_EQ(Count(html, "<script"), 4u);
  std::string data = Between(html, "<script type=\"application/json\" id=\"report-data\">", "</script>");
  EXPECT_NE(data.find("\"blocks\": [ { \"start\": 0, \"size\": 4, \"count\": 6, \"label\": \"m/layer.*\" } ]"),
            std::string::npos)
      << data.substr(0, 300);
  EXPECT_EQ(Count(data, "\"src\": "), 24u);  // every node's panel data, drawn or not
}

TEST(RenderHtml, HtmlEscape) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("σ → ×"), "σ → ×");
}

}  // namespace
}  // namespace aic::analysis

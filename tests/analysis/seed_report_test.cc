// The seed's deliverable: `aic-onnx report testdata/seed_mlp.onnx` prints the
// seed's lines verbatim, identically for the Gemm and the MatMul + Add exports,
// and the text/JSON/Markdown renderings are pinned by golden files.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/render.h"
#include "tests/analysis/analysis_test_util.h"

namespace aic::analysis {
namespace {

using testing::LoadTestModel;
using testing::MatchesGolden;

constexpr const char* kSeedLines[] = {
    "Node 0: Linear",
    "Input shape: [1, 10]",
    "Output shape: [1, 20]",
    "Parameters: 220",
    "Properties: linear, trainable",
    "",
    "Node 1: ReLU",
    "Input shape: [1, 20]",
    "Output shape: [1, 20]",
    "Properties: nonlinear, irreversible, collapse-producing",
    "",
    "Node 2: Linear",
    "Input shape: [1, 20]",
    "Output shape: [1, 5]",
    "Parameters: 105",
    "Properties: linear, trainable",
    "",
    "Total parameters: 325",
    "Potential collapse point: ReLU",
    "Linear expansion: 10 → 20",
    "Linear contraction: 20 → 5",
    "Optimization candidates:",
    "- inspect effective rank of first Linear",
    "- measure ReLU activation ratio",
    "- consider hidden dimension reduction",
};

// The seed's lines appear in order as whole lines; other lines may come
// between them; a candidate line may continue with ": <measured value>".
::testing::AssertionResult HasSeedLines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  size_t at = 0;
  for (const char* want : kSeedLines) {
    std::string w = want;
    bool candidate = w.rfind("- ", 0) == 0;
    bool found = false;
    for (; at < lines.size(); ++at) {
      const std::string& l = lines[at];
      if (l == w || (candidate && l.rfind(w + ": ", 0) == 0)) {
        found = true;
        ++at;
        break;
      }
    }
    if (!found)
      return ::testing::AssertionFailure() << "missing, in order: '" << w << "'\n" << text;
  }
  return ::testing::AssertionSuccess();
}

Report AnalyzeSeed(const std::string& file, bool calibrate) {
  auto model = LoadTestModel(file);
  AnalysisOptions options;
  options.model_path = "testdata/seed_mlp.onnx";
  if (calibrate) options.calibration = testing::RandomData(*model, 16, 7);
  auto report = Analyze(*model, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : Report{};
}

TEST(SeedReport, GemmFormPrintsTheSeedLines) {
  EXPECT_TRUE(HasSeedLines(RenderText(AnalyzeSeed("testdata/seed_mlp.onnx", false))));
}

TEST(SeedReport, MatMulAddFormPrintsTheSeedLines) {
  EXPECT_TRUE(HasSeedLines(RenderText(AnalyzeSeed("testdata/seed_mlp_matmul.onnx", false))));
}

TEST(SeedReport, BothExportFormsReportIdentically) {
  EXPECT_EQ(RenderText(AnalyzeSeed("testdata/seed_mlp.onnx", false)),
            RenderText(AnalyzeSeed("testdata/seed_mlp_matmul.onnx", false)));
  EXPECT_EQ(RenderText(AnalyzeSeed("testdata/seed_mlp.onnx", true)),
            RenderText(AnalyzeSeed("testdata/seed_mlp_matmul.onnx", true)));
}

TEST(SeedReport, TextGolden) {
  std::string text = RenderText(AnalyzeSeed("testdata/seed_mlp.onnx", false));
  EXPECT_TRUE(MatchesGolden(text, "tests/analysis/golden/seed_mlp.txt"));
  EXPECT_TRUE(MatchesGolden(RenderText(AnalyzeSeed("testdata/seed_mlp_matmul.onnx", false)),
                            "tests/analysis/golden/seed_mlp.txt"));
}

TEST(SeedReport, CalibratedTextGolden) {
  std::string text = RenderText(AnalyzeSeed("testdata/seed_mlp.onnx", true));
  EXPECT_TRUE(HasSeedLines(text));
  EXPECT_TRUE(MatchesGolden(text, "tests/analysis/golden/seed_mlp_calib.txt"));
}

TEST(SeedReport, JsonGoldens) {
  EXPECT_TRUE(MatchesGolden(RenderJson(AnalyzeSeed("testdata/seed_mlp.onnx", false)),
                            "tests/analysis/golden/seed_mlp.json"));
  EXPECT_TRUE(MatchesGolden(RenderJson(AnalyzeSeed("testdata/seed_mlp_matmul.onnx", false)),
                            "tests/analysis/golden/seed_mlp_matmul.json"));
  EXPECT_TRUE(MatchesGolden(RenderJson(AnalyzeSeed("testdata/seed_mlp.onnx", true)),
                            "tests/analysis/golden/seed_mlp_calib.json"));
}

TEST(SeedReport, MarkdownGolden) {
  EXPECT_TRUE(MatchesGolden(RenderMarkdown(AnalyzeSeed("testdata/seed_mlp.onnx", true)),
                            "tests/analysis/golden/seed_mlp_calib.md"));
}

TEST(SeedReport, Numbers) {
  Report r = AnalyzeSeed("testdata/seed_mlp_matmul.onnx", true);
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].sources.size(), 2u);  // MatMul + Add grouped
  EXPECT_EQ(r.nodes[0].macs, 200);
  EXPECT_EQ(r.nodes[0].flops, 420);
  EXPECT_EQ(r.nodes[0].bytes_read, 4 * (10 + 200 + 20));
  EXPECT_EQ(r.nodes[0].bytes_written, 4 * 20);
  EXPECT_EQ(r.total_params, 325);
  EXPECT_EQ(r.total_macs, 300);
  // Input (40 B) is dead once Node 0 ran; Node 1 holds its input and output: 160 B.
  ASSERT_TRUE(r.peak_activation_bytes.has_value());
  EXPECT_EQ(*r.peak_activation_bytes, 160);
  ASSERT_EQ(r.expand_collapse.size(), 1u);
  EXPECT_EQ(r.expand_collapse[0].wide, 0);
  EXPECT_EQ(r.expand_collapse[0].collapse, 1);
  EXPECT_EQ(r.expand_collapse[0].narrow, 2);
  ASSERT_TRUE(r.nodes[0].spectrum.has_value());
  EXPECT_EQ(r.nodes[0].spectrum->rows, 20);
  EXPECT_EQ(r.nodes[0].spectrum->cols, 10);
  EXPECT_EQ(r.nodes[0].spectrum->numerical_rank, 10);
  ASSERT_TRUE(r.nodes[1].activation.has_value());
  EXPECT_EQ(r.nodes[1].activation->samples, 16);
  EXPECT_EQ(r.nodes[1].activation->units, 20);
  EXPECT_GT(r.nodes[1].activation->active_ratio, 0.0);
  EXPECT_LT(r.nodes[1].activation->active_ratio, 1.0);
  EXPECT_TRUE(r.calibration.random);
}

}  // namespace
}  // namespace aic::analysis

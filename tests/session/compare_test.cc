// The comparison's tolerance: |a - b| <= atol + rtol * max(|a|, peak/100), so
// rounding in the near-zero elements of a large-valued output passes and a
// real error there does not.
#include "session/compare.h"

#include <vector>

#include "graph/builder.h"
#include "gtest/gtest.h"

namespace aic::session {
namespace {

// y = x + k for a constant k: a peak of 5000 at element 0, the rest near 0.
std::unique_ptr<Model> AddConstant(const std::vector<float>& k) {
  GraphBuilder b;
  const auto n = static_cast<int64_t>(k.size());
  Value* x = b.Input("x", DType::kFloat, {1, n});
  b.Output(b.Op("Add", {x, b.Constant("k", Tensor::FromVector<float>(k, {1, n}))}));
  return b.Build(13);
}

CompareReport Compared(const std::vector<float>& ka, const std::vector<float>& kb) {
  auto a = AddConstant(ka);
  auto b = AddConstant(kb);
  std::map<std::string, RuntimeValue> feeds;
  feeds["x"] = RuntimeValue(Tensor::FromVector<float>(std::vector<float>(ka.size(), 0.0f),
                                                      {1, static_cast<int64_t>(ka.size())}));
  CompareOptions options;  // rtol 1e-3, atol 1e-4
  options.device = "reference";
  absl::StatusOr<CompareReport> report = CompareModels(*a, *b, {feeds}, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : CompareReport{};
}

TEST(CompareTest, RoundingNearZeroInALargeOutputPasses) {
  std::vector<float> k = {5000.0f, 1e-4f, -2e-3f, 0.0f};
  std::vector<float> rounded = {5000.0f, 1e-4f + 3e-3f, -2e-3f - 3e-3f, 3e-3f};  // 6e-7 of the peak
  CompareReport r = Compared(k, rounded);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(r.ok()) << "max abs " << r.outputs[0].max_abs << " max rel " << r.outputs[0].max_rel;
  EXPECT_GT(r.outputs[0].max_rel, 1.0);  // still reported as it is
}

TEST(CompareTest, AnErrorAboveTheFloorFails) {
  std::vector<float> k = {5000.0f, 1e-4f, -2e-3f, 0.0f};
  std::vector<float> wrong = {5000.0f, 1e-4f, -2e-3f, 0.1f};  // 2e-5 of the peak: over 1e-5
  EXPECT_FALSE(Compared(k, wrong).ok());
  // Without the large element the floor is the plain tolerance.
  EXPECT_FALSE(Compared({1.0f, 0.0f}, {1.0f, 3e-3f}).ok());
}

}  // namespace
}  // namespace aic::session

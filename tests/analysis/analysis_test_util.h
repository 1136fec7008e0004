// Shared by the analysis tests (header-only: the test binary builds only
// *_test.cc files): loading testdata models, analysing them, and comparing
// text against golden files (AIC_UPDATE_GOLDEN=1 rewrites them).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "analysis/analyze.h"
#include "graph/model.h"
#include "onnx_io/load.h"

namespace aic::analysis::testing {

inline std::string SourcePath(const std::string& relative) {
  return std::string(AIC_SOURCE_DIR) + "/" + relative;
}

inline std::unique_ptr<Model> LoadTestModel(const std::string& relative) {
  auto m = LoadModel(SourcePath(relative));
  if (!m.ok()) {
    ADD_FAILURE() << m.status();
    return nullptr;
  }
  return *std::move(m);
}

inline std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline ::testing::AssertionResult MatchesGolden(const std::string& actual,
                                                const std::string& golden) {
  std::string path = SourcePath(golden);
  const char* update = std::getenv("AIC_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return ::testing::AssertionSuccess() << "rewrote " << path;
  }
  std::string expected = ReadFileOrEmpty(path);
  if (expected == actual) return ::testing::AssertionSuccess();
  // Point at the first differing line.
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 1;
  while (true) {
    bool ga = static_cast<bool>(std::getline(a, la)), ge = static_cast<bool>(std::getline(e, le));
    if (!ga && !ge) break;
    if (!ga || !ge || la != le) {
      return ::testing::AssertionFailure()
             << golden << " differs at line " << line << ":\n  expected: " << (ge ? le : "<end>")
             << "\n  actual:   " << (ga ? la : "<end>")
             << "\n(AIC_UPDATE_GOLDEN=1 rewrites the golden file)";
    }
    ++line;
  }
  return ::testing::AssertionFailure() << golden << " differs (line endings?)";
}

inline CalibrationData RandomData(const Model& model, int64_t samples, uint64_t seed,
                                  bool absolute = false) {
  CalibrationData data;
  data.random = true;
  data.source = "random:" + std::to_string(samples);
  data.samples = samples;
  data.feed = [&model, seed, absolute](int64_t i) -> absl::StatusOr<Feeds> {
    Feeds feeds;
    std::mt19937_64 rng(seed + static_cast<uint64_t>(i));
    std::normal_distribution<float> normal;
    for (const Value* v : model.graph->inputs()) {
      if (v->is_initializer()) continue;
      std::vector<int64_t> dims;
      for (const Dim& d : v->shape().dims()) dims.push_back(d.is_value() ? d.value() : 1);
      Tensor t(DType::kFloat, dims);
      for (float& x : t.mutable_span<float>())
        x = absolute ? std::fabs(normal(rng)) + 1e-3f : normal(rng);
      feeds[v->name()] = RuntimeValue(std::move(t));
    }
    return feeds;
  };
  return data;
}

}  // namespace aic::analysis::testing

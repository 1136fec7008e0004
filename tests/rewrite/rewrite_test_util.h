// Helpers for rewrite tests: optimize a freshly built model, count ops, and
// compare outputs with the reference executor on fresh random inputs.
// Header-only: the test binary globs *_test.cc.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "rewrite/optimize.h"

namespace aic::rewrite::testing {

using ModelFn = std::function<std::unique_ptr<Model>()>;

inline std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes()) ++counts[n->op_type];
  return counts;
}

struct Optimized {
  std::unique_ptr<Model> model;
  OptimizeStats stats;
};

inline Optimized OptimizeModel(std::unique_ptr<Model> m, const std::set<std::string>& only, int level = 2) {
  OptimizeOptions o;
  o.level = level;
  o.only_rules = only;
  auto stats = Optimize(*m, o);
  EXPECT_TRUE(stats.ok()) << stats.status();
  Optimized r;
  r.model = std::move(m);
  if (stats.ok()) r.stats = *stats;
  return r;
}

// Builds and optimizes with only `rule` (plus `extra`) enabled; "" enables all.
inline Optimized OptimizeWith(const ModelFn& build, const std::string& rule,
                              std::set<std::string> extra = {}, int level = 2) {
  if (!rule.empty()) extra.insert(rule);
  return OptimizeModel(build(), extra, level);
}

inline std::map<std::string, RuntimeValue> RandomFeeds(const Model& m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::map<std::string, RuntimeValue> feeds;
  for (const Value* v : m.graph->inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : v->shape().dims()) dims.push_back(d.is_value() ? d.value() : 2);
    Tensor t(v->dtype(), dims);
    if (v->dtype() == DType::kFloat) {
      for (float& x : t.mutable_span<float>()) x = normal(rng);
    } else if (v->dtype() == DType::kInt64) {
      for (int64_t& x : t.mutable_span<int64_t>()) x = static_cast<int64_t>(rng() % 5);
    }
    feeds[v->name()] = RuntimeValue(t);
  }
  return feeds;
}

// Max abs difference over outputs between the built model and `optimized` on
// random inputs; +inf on a shape/dtype mismatch, or (bitwise) any difference.
inline double MaxOutputDiff(const ModelFn& build, const Model& optimized, bool bitwise, uint64_t seed = 7) {
  std::unique_ptr<Model> original = build();
  auto feeds = RandomFeeds(*original, seed);
  auto a = ReferenceExecutor(*original).Run(feeds);
  auto b = ReferenceExecutor(optimized).Run(feeds);
  EXPECT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(b.ok()) << b.status();
  if (!a.ok() || !b.ok()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    const Tensor& x = (*a)[i].tensor;
    const Tensor& y = (*b)[i].tensor;
    if (x.dtype() != y.dtype() || x.dims() != y.dims()) return std::numeric_limits<double>::infinity();
    if (bitwise && !x.BitwiseEquals(y)) return std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      worst = std::max(worst, std::fabs(x.ElementAsDouble(k) - y.ElementAsDouble(k)));
    }
  }
  return worst;
}

}  // namespace aic::rewrite::testing

#include "exec/common/memory_planner.h"

#include <random>

#include "gtest/gtest.h"

namespace aic::exec {
namespace {

void ExpectNoLiveOverlap(const std::vector<BufferRequest>& reqs, const MemoryPlan& plan) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u);
    EXPECT_LE(plan.offsets[i] + reqs[i].size, plan.arena_bytes);
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      if (!LifetimesOverlap(reqs[i], reqs[j])) continue;
      bool disjoint = plan.offsets[i] + reqs[i].size <= plan.offsets[j] ||
                      plan.offsets[j] + reqs[j].size <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " are alive together and overlap";
    }
  }
}

TEST(MemoryPlannerTest, ChainReusesMemory) {
  // a -> b -> c -> d: each value dies at the next step, so two slots suffice.
  std::vector<BufferRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = PlanMemory(reqs);
  ExpectNoLiveOverlap(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024u);
}

TEST(MemoryPlannerTest, DifferentSizesShareBytes) {
  // A big buffer dead before two small ones live: they fit in its bytes.
  std::vector<BufferRequest> reqs = {{4096, 0, 1}, {1024, 2, 3}, {1024, 2, 3}};
  MemoryPlan plan = PlanMemory(reqs);
  ExpectNoLiveOverlap(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 4096u);
}

TEST(MemoryPlannerTest, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferRequest> reqs;
    size_t total = 0;
    for (int i = 0; i < 40; ++i) {
      int first = static_cast<int>(rng() % 30);
      reqs.push_back({1 + rng() % 5000, first, first + static_cast<int>(rng() % 8)});
      total += (reqs.back().size + 63) / 64 * 64;
    }
    MemoryPlan plan = PlanMemory(reqs);
    ExpectNoLiveOverlap(reqs, plan);
    EXPECT_LE(plan.arena_bytes, total);
  }
}

}  // namespace
}  // namespace aic::exec

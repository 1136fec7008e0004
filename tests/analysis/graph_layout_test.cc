// Graphviz's dot through libgvc (analysis/graph_layout.h): top to bottom,
// every edge drawn from its source to its target, in one piece and in the
// stacked pieces a graph of more than 2000 nodes is cut into.
#include "analysis/graph_layout.h"

#include <gtest/gtest.h>

#include <cmath>

namespace aic::analysis {
namespace {

// A chain 0 → 1 → ... → n-1 with a skip edge over every third node, and one
// edge from the first node to the last.
LayoutInput Chain(int n) {
  LayoutInput in;
  for (int i = 0; i < n; ++i) in.nodes.push_back({60, 30});
  for (int i = 0; i + 1 < n; ++i) in.edges.push_back({i, i + 1});
  for (int i = 0; i + 3 < n; i += 3) in.edges.push_back({i, i + 3});
  in.edges.push_back({0, n - 1});
  return in;
}

void ExpectDrawn(const LayoutInput& in, const GraphLayout& lay) {
  ASSERT_EQ(lay.centers.size(), in.nodes.size());
  ASSERT_EQ(lay.edges.size(), in.edges.size());
  for (size_t i = 0; i < in.nodes.size(); ++i) {
    const LayoutPoint& c = lay.centers[i];
    EXPECT_GE(c.x - 30, -1);
    EXPECT_LE(c.x + 30, lay.width + 1);
    EXPECT_GE(c.y - 15, -1);
    EXPECT_LE(c.y + 15, lay.height + 1);
    if (i > 0) {
      EXPECT_GT(c.y, lay.centers[i - 1].y) << "node " << i << " not below its producer";
    }
  }
  for (size_t k = 0; k < in.edges.size(); ++k) {
    const GraphLayout::EdgePath& p = lay.edges[k];
    ASSERT_GE(p.points.size(), 4u) << "edge " << k;
    EXPECT_EQ((p.points.size() - 1) % 3, 0u) << "edge " << k << " is not a cubic Bézier path";
    const LayoutPoint& from = lay.centers[in.edges[k].from];
    const LayoutPoint& to = lay.centers[in.edges[k].to];
    // Starts on its source's box, ends (arrow tip) on its target's.
    EXPECT_LE(std::abs(p.points.front().x - from.x), 31) << "edge " << k;
    EXPECT_LE(std::abs(p.points.front().y - from.y), 16) << "edge " << k;
    ASSERT_TRUE(p.has_arrow) << "edge " << k;
    EXPECT_LE(std::abs(p.arrow_tip.x - to.x), 31) << "edge " << k;
    EXPECT_LE(std::abs(p.arrow_tip.y - to.y), 16) << "edge " << k;
  }
}

TEST(GraphLayout, OnePiece) {
  LayoutInput in = Chain(40);
  auto lay = LayOutTopToBottom(in);
  ASSERT_TRUE(lay.ok()) << lay.status();
  ExpectDrawn(in, *lay);
}

TEST(GraphLayout, StackedPieces) {
  LayoutInput in = Chain(4500);  // three pieces; the last edge skips the middle one
  auto lay = LayOutTopToBottom(in);
  ASSERT_TRUE(lay.ok()) << lay.status();
  ExpectDrawn(in, *lay);
}

}  // namespace
}  // namespace aic::analysis

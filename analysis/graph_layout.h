// A top-to-bottom layered drawing of a directed graph, by Graphviz's "dot"
// layout (libgvc, linked; see docs/ARCHITECTURE.md, "The report"). The HTML
// report draws the logical graph from this: node centres and edge splines,
// nothing about what the nodes mean.
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace aic::analysis {

struct LayoutPoint {
  double x = 0;
  double y = 0;  // downward, as in SVG
};

struct LayoutInput {
  struct Node {
    double width = 0;  // points (one SVG user unit each)
    double height = 0;
  };
  struct Edge {
    int from = 0;
    int to = 0;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

struct GraphLayout {
  double width = 0;  // the drawing's bounding box, from (0, 0)
  double height = 0;
  std::vector<LayoutPoint> centers;  // per input node
  // Per input edge: a cubic Bézier path p0 c1 c2 p1 [c1 c2 p2]... (empty when
  // Graphviz drew none), and the arrow's tip when it has one (the path then
  // ends at the arrow's base).
  struct EdgePath {
    std::vector<LayoutPoint> points;
    bool has_arrow = false;
    LayoutPoint arrow_tip;
  };
  std::vector<EdgePath> edges;
};

// FailedPrecondition when Graphviz's dot layout plugin cannot be loaded
// (the message names the Debian package to install).
absl::StatusOr<GraphLayout> LayOutTopToBottom(const LayoutInput& input);

}  // namespace aic::analysis

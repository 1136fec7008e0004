// A graph drawn as static SVG markup from a Graphviz layout (graph_layout.h),
// shared by the report page (render_html.cc) and opt's page of changes
// (render_opt_html.cc): per vertex one <g> with a rect and two texts, per edge
// one path and one label, all arrowheads in one path. The browser parses
// thousands of nodes of such markup faster than a script would build them,
// and the drawing shows where scripts are off. A page with several drawings
// gives each an id prefix; the groups carry classes too, which the shared
// style sheet and pan/zoom script (html_assets.h) select by.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/graph_layout.h"

namespace aic::analysis {

// '<', '>' and '&' as \u escapes, for JSON inside <script>: no name can
// close the element early.
std::string ScriptSafe(const std::string& json);

class SvgDrawing {
 public:
  // A node's box: its op above its name (the end of a long name kept).
  // `css_class` starts with "n" (a clickable node); `data_i` is what the
  // page's script knows it by.
  int AddNode(const std::string& op, const std::string& name, const std::string& css_class, int data_i);
  // A graph input's or output's pill: its name above `second` ("graph input [1, 3]").
  // `id`: what its edges' data-f/data-t say (-1: its vertex index).
  int AddTerminal(const std::string& name, const std::string& second, int id = -1);
  // A collapsed run of repeated blocks (blocks.h): a stacked box, <g
  // class="blk" data-b="{block}">, its edges naming it `id`.
  int AddBlock(const std::string& first, const std::string& second, int block, int id);
  // One edge per (from, to) pair, labelled with every distinct label given.
  void AddEdge(int from, int to, const std::string& label);

  size_t num_vertices() const { return vertices_.size(); }
  const std::string& op_line(int v) const { return vertices_[v].op_line; }

  absl::StatusOr<GraphLayout> LayOut() const;
  // <svg id="{prefix}graph" class="graph" ...> with groups {prefix}viewport,
  // {prefix}edges, {prefix}arrows, {prefix}edge-labels, {prefix}nodes.
  void AppendSvg(const GraphLayout& layout, const std::string& prefix, std::string& out) const;

 private:
  struct Vertex {
    std::string op_line, name_line, css_class;
    int data_i = -1;  // -1: a terminal or a block
    int id = 0;       // in its edges' data-f/data-t: data_i for a node
    int block = -1;
  };
  struct Edge {
    int from = 0, to = 0;
    std::vector<std::string> labels;
  };
  LayoutInput input_;
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  std::vector<std::vector<std::pair<int, size_t>>> edges_from_;  // per vertex: (to, edge)
};

}  // namespace aic::analysis

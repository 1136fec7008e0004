// The SVG drawing of a laid-out graph; see svg_graph.h.
#include "analysis/svg_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/render.h"

namespace aic::analysis {

namespace {

constexpr size_t kMaxNameGlyphs = 34;
constexpr double kNodeHeight = 34;
constexpr double kOpGlyph = 7.0;    // 12px bold sans, average advance
constexpr double kNameGlyph = 5.6;  // 10px sans

// Code points, for estimating a label's width.
size_t Glyphs(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Keeps the end: exporters' names are paths ("/features/features.1/attn/
// MatMul") whose last parts tell nodes apart. The panel shows the whole name.
std::string Ellipsize(const std::string& s, size_t max_glyphs) {
  size_t glyphs = Glyphs(s);
  if (glyphs <= max_glyphs) return s;
  size_t drop = glyphs - (max_glyphs - 1), seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == drop) break;
  }
  return "…" + s.substr(i);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

LayoutPoint Bezier(const LayoutPoint& a, const LayoutPoint& b, const LayoutPoint& c,
                   const LayoutPoint& e, double t) {
  double u = 1 - t;
  return {u * u * u * a.x + 3 * u * u * t * b.x + 3 * u * t * t * c.x + t * t * t * e.x,
          u * u * u * a.y + 3 * u * u * t * b.y + 3 * u * t * t * c.y + t * t * t * e.y};
}

// The point halfway along a path's segments, where its label goes.
LayoutPoint Midpoint(const std::vector<LayoutPoint>& p) {
  size_t segments = (p.size() - 1) / 3;
  if (segments == 0) return p[0];
  size_t s = segments / 2;
  if (segments % 2 == 0) return p[3 * s];
  return Bezier(p[3 * s], p[3 * s + 1], p[3 * s + 2], p[3 * s + 3], 0.5);
}

}  // namespace

std::string ScriptSafe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

int SvgDrawing::AddNode(const std::string& op, const std::string& name, const std::string& css_class,
                        int data_i) {
  std::string shown = Ellipsize(name, kMaxNameGlyphs);
  double w = std::max({72.0, Glyphs(op) * kOpGlyph + 18, Glyphs(shown) * kNameGlyph + 18});
  input_.nodes.push_back({w, kNodeHeight});
  vertices_.push_back({op, shown, css_class, data_i, data_i});
  edges_from_.emplace_back();
  return static_cast<int>(vertices_.size()) - 1;
}

int SvgDrawing::AddTerminal(const std::string& name, const std::string& second, int id) {
  std::string label = Ellipsize(name, kMaxNameGlyphs);
  std::string below = Ellipsize(second, 2 * kMaxNameGlyphs);
  double w = std::max({90.0, Glyphs(label) * kOpGlyph + 30, Glyphs(below) * kNameGlyph + 30});
  input_.nodes.push_back({w, kNodeHeight});
  int v = static_cast<int>(vertices_.size());
  vertices_.push_back({label, below, "io", -1, id < 0 ? v : id});
  edges_from_.emplace_back();
  return v;
}

int SvgDrawing::AddBlock(const std::string& first, const std::string& second, int block, int id) {
  std::string label = Ellipsize(first, kMaxNameGlyphs);
  double w = std::max({120.0, Glyphs(label) * kOpGlyph + 24, Glyphs(second) * kNameGlyph + 24});
  // Taller than a node: the box is drawn as a stack of them.
  input_.nodes.push_back({w, kNodeHeight + 8});
  vertices_.push_back({label, second, "blk", -1, id, block});
  edges_from_.emplace_back();
  return static_cast<int>(vertices_.size()) - 1;
}

void SvgDrawing::AddEdge(int from, int to, const std::string& label) {
  size_t e = edges_.size();
  for (auto [t, k] : edges_from_[from]) {
    if (t == to) e = k;
  }
  if (e == edges_.size()) {
    edges_.push_back({from, to, {}});
    edges_from_[from].push_back({to, e});
    input_.edges.push_back({from, to});
  }
  auto& labels = edges_[e].labels;
  if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
}

absl::StatusOr<GraphLayout> SvgDrawing::LayOut() const { return LayOutTopToBottom(input_); }

void SvgDrawing::AppendSvg(const GraphLayout& lay, const std::string& prefix, std::string& out) const {
  constexpr double kMargin = 20;
  absl::StrAppend(&out, "<svg id=\"", prefix, "graph\" class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" data-width=\"",
                  Num(lay.width + 2 * kMargin), "\" data-height=\"", Num(lay.height + 2 * kMargin),
                  "\"><g id=\"", prefix, "viewport\" class=\"viewport\"><g transform=\"translate(", Num(kMargin),
                  ",", Num(kMargin), ")\">\n<g id=\"", prefix, "edges\" class=\"edges\">\n");
  std::string arrows, labels;
  for (size_t i = 0; i < edges_.size(); ++i) {
    const GraphLayout::EdgePath& p = lay.edges[i];
    if (p.points.size() < 4) continue;
    std::string path = absl::StrCat("M", Num(p.points[0].x), " ", Num(p.points[0].y), "C");
    for (size_t k = 1; k < p.points.size(); ++k) {
      absl::StrAppend(&path, k > 1 ? " " : "", Num(p.points[k].x), " ", Num(p.points[k].y));
    }
    absl::StrAppend(&out, "<path class=\"e\" data-f=\"", vertices_[edges_[i].from].id, "\" data-t=\"",
                    vertices_[edges_[i].to].id,
                    "\" d=\"", path, "\"/>\n");
    if (p.has_arrow) {
      const LayoutPoint& base = p.points.back();
      double dx = p.arrow_tip.x - base.x, dy = p.arrow_tip.y - base.y;
      double len = std::hypot(dx, dy);
      if (len > 0) {
        double nx = -dy / len * 3.5, ny = dx / len * 3.5;
        absl::StrAppend(&arrows, "M", Num(p.arrow_tip.x), " ", Num(p.arrow_tip.y), "L", Num(base.x + nx), " ",
                        Num(base.y + ny), "L", Num(base.x - nx), " ", Num(base.y - ny), "Z");
      }
    }
    LayoutPoint m = Midpoint(p.points);
    absl::StrAppend(&labels, "<text x=\"", Num(m.x + 5), "\" y=\"", Num(m.y + 3), "\">",
                    HtmlEscape(absl::StrJoin(edges_[i].labels, ", ")), "</text>\n");
  }
  absl::StrAppend(&out, "</g>\n<path id=\"", prefix, "arrows\" class=\"arrows\" d=\"", arrows, "\"/>\n<g id=\"",
                  prefix, "edge-labels\" class=\"edge-labels\">\n", labels, "</g>\n<g id=\"", prefix,
                  "nodes\" class=\"nodes\">\n");
  for (size_t v = 0; v < vertices_.size(); ++v) {
    const Vertex& x = vertices_[v];
    const LayoutPoint& c = lay.centers[v];
    const LayoutInput::Node& box = input_.nodes[v];
    double w = box.width, h = box.height;
    if (x.block >= 0) {
      // Two boxes peeking out behind the front one: a stack of repeats.
      double fw = w - 8, fh = h - 8;
      absl::StrAppend(&out, "<g class=\"blk\" data-b=\"", x.block, "\" transform=\"translate(", Num(c.x), ",",
                      Num(c.y), ")\">");
      for (int k = 2; k >= 0; --k) {
        absl::StrAppend(&out, "<rect x=\"", Num(-w / 2 + 4 * k), "\" y=\"", Num(-h / 2 + 4 * (2 - k)),
                        "\" width=\"", Num(fw), "\" height=\"", Num(fh), "\" rx=\"4\"/>");
      }
      absl::StrAppend(&out, "<text class=\"o\" x=\"-4\" y=\"1\">", HtmlEscape(x.op_line), "</text><text class=\"m\" x=\"-4\" y=\"15\">",
                      HtmlEscape(x.name_line), "</text></g>\n");
      continue;
    }
    if (x.data_i >= 0) {
      absl::StrAppend(&out, "<g class=\"", x.css_class, "\" data-i=\"", x.data_i, "\" transform=\"translate(",
                      Num(c.x), ",", Num(c.y), ")\"><rect x=\"", Num(-w / 2), "\" y=\"", Num(-h / 2),
                      "\" width=\"", Num(w), "\" height=\"", Num(h), "\" rx=\"4\"/>");
    } else {
      // Graph inputs and outputs: pills (dot laid them out as boxes of this size).
      absl::StrAppend(&out, "<g class=\"io\" transform=\"translate(", Num(c.x), ",", Num(c.y), ")\"><rect x=\"",
                      Num(-w / 2), "\" y=\"", Num(-h / 2), "\" width=\"", Num(w), "\" height=\"", Num(h),
                      "\" rx=\"", Num(h / 2), "\"/>");
    }
    absl::StrAppend(&out, "<text class=\"o\" y=\"-3\">", HtmlEscape(x.op_line), "</text><text class=\"m\" y=\"11\">",
                    HtmlEscape(x.name_line), "</text></g>\n");
  }
  out += "</g>\n</g></g></svg>\n";
}

}  // namespace aic::analysis

// The HTML report: one self-contained page (styles and script inline, no
// fonts or anything else fetched) with the logical graph drawn top to bottom
// as one static SVG laid out by Graphviz (graph_layout.h), a side panel of
// graph-level findings, and per-node data as JSON for the panel a click
// opens. Like the other renderers it only reads the Report: the semantic
// class a node is coloured by is the Report's own traits, the panel's lines
// are the text report's summaries (render.h), so both say the same.
//
// The drawing (svg_graph.h, shared with opt's page) is static markup, not built by the script: the browser parses
// 3000 nodes of SVG faster than a script creates them, and the graph shows
// even where scripts are off. The DOM stays small: per node one <g> with a
// rect and two texts, per edge one path and one label, all arrowheads in one
// path.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/candidates.h"
#include "analysis/blocks.h"
#include "analysis/format.h"
#include "analysis/graph_layout.h"
#include "analysis/html_assets.h"
#include "analysis/render.h"
#include "analysis/svg_graph.h"
#include "support/json.h"

namespace aic::analysis {

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* SemanticClass(const ReportNode& n) {
  if (n.properties.empty()) return "opaque";  // the text report's "Properties: none known"
  if (n.traits.collapse_producing()) return "collapse";
  if (n.traits.effect == RepresentationEffect::kExpands) return "expanding";
  if (n.traits.effect == RepresentationEffect::kRestricts) return "contracting";
  if (n.traits.linearity == Linearity::kLinear || n.traits.linearity == Linearity::kAffine) {
    return "linear";
  }
  return "other";
}

namespace {

// What a node's box says under its op: its (first) ONNX node's name.
std::string DisplayName(const ReportNode& n) {
  if (n.sources.empty()) return "";
  const SourceNode& s = n.sources[0];
  std::string name = s.name.empty() ? absl::StrCat("unnamed ", s.op_type) : s.name;
  if (n.sources.size() > 1) absl::StrAppend(&name, " +", n.sources.size() - 1);
  return name;
}

std::string OpLine(const ReportNode& node) {
  return node.name.empty() && !node.sources.empty() ? node.sources[0].op_type : node.name;
}

// Which block (blocks.h) hides each node when collapsed, -1 for none: all
// repeats but the first, which stays drawn to show what repeats.
std::vector<int> HiddenIn(const Report& r, const std::vector<RepeatedBlock>& blocks) {
  std::vector<int> hidden(r.nodes.size(), -1);
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int i = blocks[b].start + blocks[b].size; i < blocks[b].end(); ++i) hidden[i] = static_cast<int>(b);
  }
  return hidden;
}

// The drawing with every block collapsed but `expanded` (-1: all
// collapsed): the report's drawn nodes, one box per collapsed block, then
// one vertex per graph input and per graph output; one edge per (producer,
// consumer) pair, labelled with the shapes of the values it carries. Edges
// name nodes by index, terminals and boxes by numbers past the nodes'.
SvgDrawing BuildDrawing(const Report& r, const std::vector<RepeatedBlock>& blocks,
                        const std::vector<int>& hidden_in, int expanded) {
  SvgDrawing d;
  std::set<int> collapse_points(r.collapse_points.begin(), r.collapse_points.end());
  std::vector<int> vertex(r.nodes.size(), -1), box(blocks.size(), -1);
  int next_id = static_cast<int>(r.nodes.size());
  for (const ReportNode& node : r.nodes) {
    int b = hidden_in[node.index];
    if (b >= 0 && b != expanded) {
      if (box[b] < 0) {
        const RepeatedBlock& k = blocks[b];
        box[b] = d.AddBlock(absl::StrCat("×", k.count - 1, " ", k.label),
                            absl::StrCat(k.size, " nodes each · click to expand"), b,
                            static_cast<int>(r.nodes.size() + r.graph_inputs.size() + r.graph_outputs.size()) + b);
      }
      vertex[node.index] = box[b];
      continue;
    }
    vertex[node.index] = d.AddNode(OpLine(node), DisplayName(node),
                                   absl::StrCat("n c-", SemanticClass(node), node.on_data_path ? "" : " off",
                                                collapse_points.contains(node.index) ? " cp" : ""),
                                   node.index);
  }
  std::map<std::string, int> input_vertex, output_vertex;
  for (const auto& [name, shape] : r.graph_inputs) {
    input_vertex[name] = d.AddTerminal(name, absl::StrCat("graph input ", shape.ToString()), next_id++);
  }
  for (const auto& [name, shape] : r.graph_outputs) {
    output_vertex[name] = d.AddTerminal(name, absl::StrCat("graph output ", shape.ToString()), next_id++);
  }
  for (const ReportNode& node : r.nodes) {
    int to = vertex[node.index];
    const std::vector<Shape>& shapes = node.ShownInputShapes();
    for (size_t k = 0; k < node.input_from.size() && k < shapes.size(); ++k) {
      int from = node.input_from[k] >= 0 ? vertex[node.input_from[k]] : -1;
      if (node.input_from[k] < 0 && k < node.input_values.size()) {
        auto it = input_vertex.find(node.input_values[k]);
        if (it != input_vertex.end()) from = it->second;
      }
      if (from >= 0 && from != to) d.AddEdge(from, to, shapes[k].ToString());
    }
    const std::vector<Shape>& outs = node.ShownOutputShapes();
    for (size_t k = 0; k < node.output_values.size() && k < outs.size(); ++k) {
      auto it = output_vertex.find(node.output_values[k]);
      if (it != output_vertex.end()) d.AddEdge(to, it->second, outs[k].ToString());
    }
  }
  return d;
}

// Each block's expanded drawing is one more layout of about the whole
// graph: the blocks hiding the most nodes are kept while all drawings
// together stay within twice the graph's nodes and 2000 more (swin_t: 827
// laid out for 369 nodes; a generated chain of 750 layers: 3012 for 3000).
std::vector<RepeatedBlock> KeepWithinLayoutBudget(const Report& r, std::vector<RepeatedBlock> blocks) {
  auto hidden = [](const RepeatedBlock& b) { return static_cast<int64_t>(b.size) * (b.count - 1); };
  const int64_t n = static_cast<int64_t>(r.nodes.size()), budget = 2 * n + 2000;
  while (!blocks.empty()) {
    int64_t all_hidden = 0;
    for (const RepeatedBlock& b : blocks) all_hidden += hidden(b);
    int64_t collapsed = n - all_hidden + static_cast<int64_t>(blocks.size());
    if (collapsed * static_cast<int64_t>(blocks.size() + 1) + all_hidden <= budget) break;
    blocks.erase(std::min_element(blocks.begin(), blocks.end(), [&](const RepeatedBlock& a, const RepeatedBlock& b) {
      return hidden(a) < hidden(b);
    }));
  }
  return blocks;
}

// The blocks for the page's script: which nodes each hides, its label.
std::string BlocksJson(const std::vector<RepeatedBlock>& blocks) {
  JsonWriter j(/*one_line=*/true);
  j.BeginArray();
  for (const RepeatedBlock& b : blocks) {
    j.BeginObject();
    j.Field("start", static_cast<int64_t>(b.start));
    j.Field("size", static_cast<int64_t>(b.size));
    j.Field("count", static_cast<int64_t>(b.count));
    j.Field("label", b.label);
    j.EndObject();
  }
  j.EndArray();
  return j.str();
}

// The per-node data the panel shows, as the text report words it.
std::string NodesJson(const Report& r) {
  JsonWriter j(/*one_line=*/true);
  auto shapes = [&](const std::vector<Shape>& v) {
    std::vector<std::string> s;
    for (const Shape& x : v) s.push_back(x.ToString());
    return s;
  };
  std::set<int> collapse_points(r.collapse_points.begin(), r.collapse_points.end());
  j.BeginArray();
  for (const ReportNode& n : r.nodes) {
    j.BeginObject();
    j.Field("i", n.index);
    j.Field("op", OpLine(n));
    j.Key("src");
    j.BeginArray();
    for (const SourceNode& s : n.sources) {
      j.BeginArray();
      j.String(s.op_type);
      j.String(s.name);
      j.EndArray();
    }
    j.EndArray();
    j.Key("in"); j.InlineStrings(shapes(n.ShownInputShapes()));
    j.Key("out"); j.InlineStrings(shapes(n.ShownOutputShapes()));
    if (!n.symbolic_input_shapes.empty() || !n.symbolic_output_shapes.empty()) {
      j.Key("in_at"); j.InlineStrings(shapes(n.input_shapes));
      j.Key("out_at"); j.InlineStrings(shapes(n.output_shapes));
    }
    j.Key("from");
    j.InlineInts(std::vector<int64_t>(n.input_from.begin(), n.input_from.end()));
    j.Key("inv"); j.InlineStrings(n.input_values);
    j.Key("outv"); j.InlineStrings(n.output_values);
    j.Field("params", n.params);
    j.Field("known", n.cost_known);
    if (n.cost_known) {
      j.Field("macs", n.macs);
      j.Field("flops", n.flops);
      j.Field("br", n.bytes_read);
      j.Field("bw", n.bytes_written);
      j.Field("macs_t", WithExpression(r, n.macs, n.macs_expression));
      j.Field("flops_t", WithExpression(r, n.flops, n.flops_expression));
      std::string bytes_x = ExpressionSuffix(r, n.bytes_read + n.bytes_written, n.bytes_expression);
      if (!bytes_x.empty()) j.Field("bytes_x", bytes_x);
    }
    j.Key("props"); j.InlineStrings(n.properties);
    if (!n.traits.meaning.empty()) j.Field("meaning", n.traits.meaning);
    j.Field("cls", SemanticClass(n));
    if (n.traits.collapse != CollapseKind::kNone) j.Field("collapse", CollapseKindName(n.traits.collapse));
    if (n.traits.collapse_producing() && !n.traits.collapse_how.empty()) {
      j.Field("how", n.traits.collapse_how);
    }
    if (n.traits.effect != RepresentationEffect::kUnknown) {
      j.Field("effect", RepresentationEffectName(n.traits.effect));
      if (!n.traits.effect_detail.empty()) j.Field("effect_detail", n.traits.effect_detail);
    }
    if (!n.on_data_path) j.Field("off_path", true);
    if (collapse_points.contains(n.index)) j.Field("cp", true);
    if (n.is_layer) {
      j.Key("layer");
      j.BeginObject();
      j.Field("kind", n.layer_kind);
      j.Field("weight", n.weight_name);
      j.Key("wshape"); j.InlineInts(n.weight_dims);
      j.Field("in", n.in_features);
      j.Field("out", n.out_features);
      j.Field("group", n.group);
      j.Field("pointwise", n.pointwise);
      j.Field("rep", absl::StrCat(n.out_features > n.in_features   ? "expansion "
                                  : n.out_features < n.in_features ? "contraction "
                                                                   : "width kept ",
                                  n.in_features, " → ", n.out_features));
      j.EndObject();
    }
    if (n.spectrum) {
      const Spectrum& s = *n.spectrum;
      j.Key("spec");
      j.BeginObject();
      j.Field("rows", s.rows);
      j.Field("cols", s.cols);
      j.Field("text", SpectrumSummary(s));
      if (s.skipped.empty()) {
        j.Field("er", s.effective_rank);
        j.Field("sr", s.stable_rank);
        j.Field("nr", s.numerical_rank);
        j.Field("tol", s.tolerance);
        j.Field("method", s.method);
        j.Key("sv"); j.InlineDoubles(s.singular_values);
      }
      j.EndObject();
    }
    if (n.low_rank) {
      j.Key("lr");
      j.BeginObject();
      j.Field("rank", n.low_rank->rank);
      j.Field("text", LowRankSummary(*n.low_rank, r.energy));
      j.EndObject();
    }
    if (n.activation) {
      j.Key("act");
      j.BeginObject();
      j.Field("ratio", n.activation->active_ratio);
      j.Field("text", ActivationSummary(r, *n.activation));
      j.Key("units"); j.InlineDoubles(n.activation->unit_active_ratio);
      j.EndObject();
    }
    j.EndObject();
  }
  j.EndArray();
  return j.str();
}

std::string NodeLink(const Report& r, int i) {
  return absl::StrCat("<a href=\"#node=", i, "\" data-node=\"", i, "\">Node ", i, "</a>",
                      i >= 0 && i < static_cast<int>(r.nodes.size())
                          ? absl::StrCat(" ", HtmlEscape(r.nodes[i].name))
                          : "");
}

// "Node 3" and "Nodes 3, 4" inside a line become links to those nodes.
std::string LinkNodeMentions(const Report& r, const std::string& line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    size_t at = line.find("Node", i);
    if (at == std::string::npos) break;
    size_t k = at + 4;
    if (k < line.size() && line[k] == 's') ++k;
    if (k >= line.size() || line[k] != ' ') {
      out += HtmlEscape(line.substr(i, k - i));
      i = k;
      continue;
    }
    out += HtmlEscape(line.substr(i, k - i));
    i = k;
    // A list of numbers: " 3, 4, 5".
    while (i < line.size() && line[i] == ' ' && i + 1 < line.size() && absl::ascii_isdigit(line[i + 1])) {
      size_t e = i + 1;
      while (e < line.size() && absl::ascii_isdigit(line[e])) ++e;
      std::string num = line.substr(i + 1, e - i - 1);
      absl::StrAppend(&out, " <a href=\"#node=", num, "\" data-node=\"", num, "\">", num, "</a>");
      i = e;
      if (i < line.size() && line[i] == ',') {
        out += ",";
        ++i;
      }
    }
  }
  out += HtmlEscape(line.substr(std::min(i, line.size())));
  return out;
}

// A candidate line without a node number names an op ("measure ReLU
// activation ratio", "inspect effective rank of first Linear"): link the
// line to a search for it.
std::string CandidateHtml(const Report& r, const std::string& line) {
  std::string html = LinkNodeMentions(r, line);
  if (html.find("data-node=") != std::string::npos) return html;
  for (const char* prefix : {"inspect effective rank of first ", "measure "}) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string rest = line.substr(std::string(prefix).size());
    std::string op = rest.substr(0, rest.find_first_of(" :"));
    if (op.empty()) break;
    return absl::StrCat(html, " <a href=\"#find=", HtmlEscape(op), "\" data-find=\"",
                        HtmlEscape(op), "\">find ", HtmlEscape(op), "</a>");
  }
  return html;
}

void SidePanel(const Report& r, std::string& out) {
  auto row = [&](const std::string& k, const std::string& v) {
    absl::StrAppend(&out, "<tr><th>", HtmlEscape(k), "</th><td>", v, "</td></tr>\n");
  };
  out += "<section><h2>Model</h2><table>\n";
  row("file", HtmlEscape(r.model_path));
  if (!r.producer.empty()) row("producer", HtmlEscape(r.producer));
  row("opset", absl::StrCat(r.opset));
  for (const auto& [name, shape] : r.graph_inputs) row("input", HtmlEscape(name + " " + shape.ToString()));
  for (const auto& [name, shape] : r.graph_outputs) row("output", HtmlEscape(name + " " + shape.ToString()));
  row("nodes", absl::StrCat(r.nodes.size(), " logical"));
  out += "</table></section>\n<section><h2>Totals</h2><table>\n";
  std::string partial = r.uncounted_nodes > 0
                            ? absl::StrCat(" (", r.uncounted_nodes, " nodes with non-static shapes not counted)")
                            : "";
  row("parameters", HtmlEscape(TotalWithExpression(r, r.total_params, &SymbolicCosts::params)));
  row("MACs", HtmlEscape(TotalWithExpression(r, r.total_macs, &SymbolicCosts::macs) + partial));
  if (r.total_int8_macs > 0) row("of which int8", HtmlEscape(Int8Share(r)));
  row("FLOPs", HtmlEscape(TotalWithExpression(r, r.total_flops, &SymbolicCosts::flops) + partial));
  row("bytes read", HtmlEscape(Bytes(r.total_bytes_read)));
  row("bytes written", HtmlEscape(Bytes(r.total_bytes_written)));
  if (r.peak_activation_bytes) {
    row("peak activation", HtmlEscape(Bytes(*r.peak_activation_bytes)) +
                               (r.peak_at_node >= 0 ? " at " + NodeLink(r, r.peak_at_node) : ""));
  } else {
    row("peak activation", "unknown (input shapes not static)");
  }
  if (r.calibration.requested) row("calibration", HtmlEscape(CalibrationSummary(r.calibration)));
  out += "</table></section>\n";

  out += "<section><h2>Collapse points</h2>";
  if (r.collapse_points.empty()) out += "<p class=\"none\">none</p>";
  out += "<ul>";
  for (int c : r.collapse_points) {
    absl::StrAppend(&out, "<li>", NodeLink(r, c),
                    r.nodes[c].traits.collapse_how.empty() ? "" : ": ",
                    HtmlEscape(r.nodes[c].traits.collapse_how), "</li>\n");
  }
  out += "</ul></section>\n<section><h2>Expansion and contraction</h2>";
  if (r.chains.empty() && r.expand_collapse.empty()) out += "<p class=\"none\">none</p>";
  out += "<ul>";
  for (const Chain& ch : r.chains) {
    std::vector<std::string> links;
    for (int i : ch.nodes) links.push_back(NodeLink(r, i));
    absl::StrAppend(&out, "<li>", HtmlEscape(ch.kind), ch.expansion ? " expansion " : " contraction ",
                    HtmlEscape(absl::StrJoin(ch.dims, " → ")), " at ", absl::StrJoin(links, ", "),
                    "</li>\n");
  }
  for (const ExpandCollapse& p : r.expand_collapse) {
    const ReportNode &w = r.nodes[p.wide], &n = r.nodes[p.narrow];
    absl::StrAppend(&out, "<li>expand-then-collapse: ", HtmlEscape(w.layer_kind), " ",
                    w.in_features, " → ", w.out_features, " (", NodeLink(r, p.wide), "), ",
                    NodeLink(r, p.collapse), ", ", HtmlEscape(n.layer_kind), " ", n.in_features,
                    " → ", n.out_features, " (", NodeLink(r, p.narrow), ")</li>\n");
  }
  for (const MergeCandidate& m : r.merges) {
    absl::StrAppend(&out, "<li>consecutive linear layers ", NodeLink(r, m.first), " → ",
                    NodeLink(r, m.second), " (", m.n, " → ", m.h, " → ", m.m, "), merging ",
                    m.pays ? "pays" : "does not pay", "</li>\n");
  }
  out += "</ul></section>\n<section><h2>Optimization candidates</h2>";
  if (r.candidates.empty() && r.hidden_reductions.empty()) out += "<p class=\"none\">none</p>";
  out += "<ul>";
  for (const std::string& c : r.candidates) absl::StrAppend(&out, "<li>", CandidateHtml(r, c), "</li>\n");
  for (const HiddenReduction& h : r.hidden_reductions) {
    if (h.dead + h.rare == 0) continue;
    absl::StrAppend(&out, "<li>hidden width at ", NodeLink(r, h.collapse), ": ", h.width, " → ",
                    h.remaining, " (", h.dead, " dead, ", h.rare, " rare)",
                    h.producer >= 0 ? ", produced by " + NodeLink(r, h.producer) : "", "</li>\n");
  }
  out += "</ul></section>\n";
  if (std::vector<WhatIfRow> rows = WhatIfRows(r); !rows.empty()) {
    absl::StrAppend(&out, "<section><h2>What if (low-rank)</h2><p>", HtmlEscape(kWhatIfHeading), "</p><ul>");
    for (const WhatIfRow& row : rows) {
      std::vector<std::string> entries;
      for (const LowRank& lr : row.node->what_if) entries.push_back(HtmlEscape(WhatIfEntry(*row.node->spectrum, lr)));
      absl::StrAppend(&out, "<li>", NodeLink(r, row.node->index), " ", HtmlEscape(row.layer), ": ",
                      absl::StrJoin(entries, "; "), "</li>\n");
    }
    out += "</ul></section>\n";
  }
  std::vector<std::string> notes;
  if (!r.calibration.note.empty()) notes.push_back(r.calibration.note);
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  if (std::string off = OffPathSummary(r); !off.empty()) notes.push_back(off);
  if (r.symbolic) notes.push_back(SymbolicSummary(*r.symbolic));
  if (!notes.empty()) {
    out += "<section><h2>Notes</h2><ul>";
    for (const std::string& n : notes) absl::StrAppend(&out, "<li>", LinkNodeMentions(r, n), "</li>\n");
    out += "</ul></section>\n";
  }
}

}  // namespace

absl::StatusOr<std::string> RenderHtml(const Report& r) {
  std::vector<RepeatedBlock> blocks = KeepWithinLayoutBudget(r, FindRepeatedBlocks(r));
  std::vector<int> hidden_in = HiddenIn(r, blocks);
  // The page shows every block collapsed; the drawing with one block
  // expanded is laid out here too and carried as text the script parses
  // when that block is opened (a <script type="text/x-aic-svg">: no DOM
  // until then, so the collapsed page loads at its own size).
  std::vector<std::string> drawings;
  for (int expanded = -1; expanded < static_cast<int>(blocks.size()); ++expanded) {
    SvgDrawing d = BuildDrawing(r, blocks, hidden_in, expanded);
    absl::StatusOr<GraphLayout> lay = d.LayOut();
    if (!lay.ok()) return lay.status();
    d.AppendSvg(*lay, "", drawings.emplace_back());
  }
  std::string title = r.model_path.empty() ? "model" : r.model_path;
  size_t slash = title.find_last_of('/');
  if (slash != std::string::npos) title = title.substr(slash + 1);

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&out, "<meta name=\"generator\" content=\"aic-onnx report\">\n<title>",
                  HtmlEscape(title), " · aic-onnx report</title>\n");
  // First, so that an error anywhere later is written where a reader (and
  // the browser test) sees it.
  absl::StrAppend(&out, "<script>", kHtmlErrorScript, "</script>\n<style>", kHtmlStyle,
                  "</style>\n</head><body>\n");
  absl::StrAppend(&out, "<header><h1>", HtmlEscape(title), "</h1>",
                  "<input id=\"search\" type=\"search\" placeholder=\"find a node by name or op\" "
                  "autocomplete=\"off\"><div id=\"hits\"></div>",
                  "<label>colour by <select id=\"colour\"><option value=\"class\">semantic class"
                  "</option><option value=\"macs\">share of MACs</option><option value=\"bytes\">"
                  "bytes moved</option></select></label><div id=\"legend\"></div>"
                  "<button id=\"collapse\" hidden title=\"collapse the repeated block again (c)\">"
                  "collapse block</button>"
                  "</header>\n<div id=\"main\">\n<aside id=\"side\">\n");
  SidePanel(r, out);
  absl::StrAppend(&out, "</aside>\n<div id=\"canvas\">\n<div id=\"help\">drag: pan · wheel: zoom · 0: fit all · Esc: close", blocks.empty() ? "" : " · click a ×N box: expand · c: collapse", "</div>\n");
  out += drawings[0];
  out += "</div>\n<aside id=\"panel\" hidden></aside>\n</div>\n<pre id=\"errors\"></pre>\n";
  // SVG markup holds no "</script": names are escaped (HtmlEscape).
  for (size_t b = 1; b < drawings.size(); ++b) {
    absl::StrAppend(&out, "<script type=\"text/x-aic-svg\" id=\"expanded-", b - 1, "\">", drawings[b], "</script>\n");
  }

  JsonWriter totals(/*one_line=*/true);
  totals.BeginObject();
  totals.Field("macs", r.total_macs);
  totals.Field("bytes", r.total_bytes_read + r.total_bytes_written);
  totals.Field("nodes", static_cast<int64_t>(r.nodes.size()));
  totals.Field("energy", r.energy);
  totals.Field("calibrated", r.calibration.ran);
  totals.EndObject();
  absl::StrAppend(&out, "<script type=\"application/json\" id=\"report-data\">{\"totals\": ",
                  ScriptSafe(totals.str()), ", \"blocks\": ", ScriptSafe(BlocksJson(blocks)),
                  ", \"nodes\": ", ScriptSafe(NodesJson(r)),
                  "}</script>\n<script>", kHtmlPanZoomScript, kHtmlScript, "</script>\n</body></html>\n");
  return out;
}

}  // namespace aic::analysis

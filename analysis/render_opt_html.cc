// opt's page of changes; see render_opt_html.h. The drawing of each side is
// static markup (svg_graph.h) and the links between the sides are data
// (JSON, ScriptSafe) that the page's script (html_assets.cc, kOptHtmlScript)
// follows: which original nodes an optimized node stands for, and the
// reverse, computed here once from the provenance.
#include "analysis/render_opt_html.h"

#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/html_assets.h"
#include "analysis/render.h"
#include "analysis/svg_graph.h"
#include "support/json.h"

namespace aic::analysis {

namespace {

std::string OpOf(const Node& n) { return n.domain.empty() ? n.op_type : n.domain + "." + n.op_type; }

std::string NameOf(const Node& n) { return n.name.empty() ? "unnamed " + n.op_type : n.name; }

std::string ShapeOf(const Value* v) {
  const TypeInfo& t = v->type();
  return t.is_tensor() ? t.shape.ToString() : t.ToString();
}

// One side: vertex i is node i, then the graph inputs and outputs.
SvgDrawing DrawGraph(const Graph& g, const std::vector<std::string>& css) {
  SvgDrawing d;
  absl::flat_hash_map<const Node*, int> vertex;
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const Node& n = *g.nodes()[i];
    vertex[&n] = d.AddNode(OpOf(n), NameOf(n), css[i], static_cast<int>(i));
  }
  absl::flat_hash_map<const Value*, int> input_vertex;
  for (const Value* v : g.inputs()) {
    if (v->is_initializer()) continue;  // an overridable default: drawn as the constants are, not at all
    input_vertex[v] = d.AddTerminal(v->name(), "graph input " + ShapeOf(v));
  }
  auto source = [&](const Value* v) -> int {
    if (v->producer() != nullptr) {
      auto it = vertex.find(v->producer());
      if (it != vertex.end()) return it->second;
    }
    auto it = input_vertex.find(v);
    return it == input_vertex.end() ? -1 : it->second;
  };
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    for (const Value* v : g.nodes()[i]->inputs()) {
      if (v == nullptr) continue;
      if (int from = source(v); from >= 0) d.AddEdge(from, static_cast<int>(i), ShapeOf(v));
    }
  }
  for (const Value* v : g.outputs()) {
    int to = d.AddTerminal(v->name(), "graph output " + ShapeOf(v));
    if (int from = source(v); from >= 0) d.AddEdge(from, to, ShapeOf(v));
  }
  return d;
}

void ValuesJson(JsonWriter& j, const char* key, const std::vector<Value*>& values) {
  j.Key(key);
  j.BeginArray();
  for (const Value* v : values) {
    if (v == nullptr) continue;
    j.BeginArray();
    j.String(v->name());
    j.String(ShapeOf(v));
    j.EndArray();
  }
  j.EndArray();
}

// What happened to each original node, for its colour and panel.
enum class Fate { kKept, kReplaced, kFolded, kBypassed, kUnused };

const char* FateClass(Fate f) {
  switch (f) {
    case Fate::kKept: return "kept";
    case Fate::kReplaced: return "replaced";
    case Fate::kFolded: return "folded";
    case Fate::kBypassed: return "bypassed";
    case Fate::kUnused: return "unused";
  }
  return "kept";
}

Fate FateOf(const std::string& removed) {
  if (removed.rfind("folded", 0) == 0) return Fate::kFolded;
  if (removed.rfind("bypassed", 0) == 0) return Fate::kBypassed;
  return Fate::kUnused;
}

// An optimized node is "kept" when it is one original node as it was.
bool IsKept(const rewrite::NodeProvenance& p) {
  return p.rule == rewrite::kOriginalRule && p.replaced.size() == 1;
}

void SidePanel(const OptPage& page, size_t before, size_t after, std::string& out) {
  auto row = [&](const std::string& k, const std::string& v) {
    absl::StrAppend(&out, "<tr><th>", HtmlEscape(k), "</th><td>", v, "</td></tr>\n");
  };
  out += "<section><h2>Rewrite</h2><table>\n";
  row("input", HtmlEscape(page.input_path));
  row("output", HtmlEscape(page.output_path));
  row("nodes", absl::StrCat("<span id=\"count-before\">", before, "</span> → <span id=\"count-after\">", after,
                            "</span>"));
  if (page.stats != nullptr) {
    const rewrite::OptimizeStats& s = *page.stats;
    row("weights", absl::StrCat(s.initializer_bytes_before, " → ", s.initializer_bytes_after, " bytes"));
    row("e-graph", absl::StrCat(s.enodes, " e-nodes, ", s.eclasses, " e-classes, ", s.iterations, " iterations (",
                                HtmlEscape(s.stop_reason), ")"));
  }
  if (!page.unchanged_reason.empty()) row("left unchanged", HtmlEscape(page.unchanged_reason));
  out += "</table></section>\n<section><h2>Rules fired</h2>";
  if (page.stats == nullptr || page.stats->rule_counts.empty()) out += "<p class=\"none\">none</p>";
  if (page.stats != nullptr && !page.stats->rule_counts.empty()) {
    out += "<table id=\"rule-table\">\n";
    for (const auto& [rule, n] : page.stats->rule_counts) {
      absl::StrAppend(&out, "<tr><th><a href=\"#find=", HtmlEscape(rule), "\" data-find=\"", HtmlEscape(rule), "\">",
                      HtmlEscape(rule), "</a></th><td>", n, "</td></tr>\n");
    }
    out += "</table>";
  }
  out += "<p class=\"none\">times each rule's result joined a new class; the drawing's nodes name the rule "
         "that made the e-node extracted</p></section>\n";
  out += "<section><h2>Op types</h2><table id=\"op-table\"><tr><th>op type</th><td><b>before</b></td>"
         "<td><b>after</b></td></tr>\n";
  int64_t total_before = 0, total_after = 0;
  for (const session::OpTableRow& r : page.op_table) {
    absl::StrAppend(&out, "<tr", r.before != r.after ? " class=\"changed\"" : "", "><th><a href=\"#find=",
                    HtmlEscape(r.op), "\" data-find=\"", HtmlEscape(r.op), "\">", HtmlEscape(r.op),
                    "</a></th><td>", r.before, "</td><td>", r.after, "</td></tr>\n");
    total_before += r.before;
    total_after += r.after;
  }
  absl::StrAppend(&out, "<tr><th>total</th><td>", total_before, "</td><td>", total_after,
                  "</td></tr>\n</table></section>\n");
  out += "<section><h2>Colours</h2><div id=\"legend\">"
         "<span><i class=\"k-kept\"></i>kept as it was</span><span><i class=\"k-new\"></i>made by a rule</span>"
         "<span><i class=\"k-merged\"></i>kept, absorbing others</span><span><i class=\"k-replaced\"></i>"
         "replaced</span><span><i class=\"k-folded\"></i>folded into a constant</span><span><i class=\"k-bypassed\">"
         "</i>bypassed</span><span><i class=\"k-unused\"></i>unused (removed)</span></div>"
         "<p class=\"none\">Main graph only: the bodies of If/Loop/Scan are optimized too but not traced.</p>"
         "</section>\n";
}

}  // namespace

absl::StatusOr<std::string> RenderOptHtml(const OptPage& page) {
  const Graph& optimized = *page.optimized;
  // Without provenance nothing was rewritten: both sides are the same graph.
  rewrite::OptimizeProvenance identity;
  const rewrite::OptimizeProvenance* prov = page.provenance;
  if (prov == nullptr || prov->original == nullptr || prov->nodes.size() != optimized.num_nodes()) {
    for (size_t i = 0; i < optimized.num_nodes(); ++i) {
      identity.nodes.push_back({rewrite::kOriginalRule, {static_cast<int32_t>(i)}, 1});
    }
    identity.removed.assign(optimized.num_nodes(), "");
    prov = &identity;
  }
  const Graph& original = prov->original != nullptr ? *prov->original : optimized;
  const size_t na = original.num_nodes(), nb = optimized.num_nodes();

  std::vector<std::vector<int32_t>> replaced_by(na);
  std::vector<char> kept(na, 0);
  for (size_t b = 0; b < nb; ++b) {
    for (int32_t a : prov->nodes[b].replaced) {
      if (a < 0 || static_cast<size_t>(a) >= na) continue;
      replaced_by[a].push_back(static_cast<int32_t>(b));
      if (IsKept(prov->nodes[b])) kept[a] = 1;
    }
  }
  std::vector<Fate> fate(na, Fate::kKept);
  std::vector<std::string> css_a(na), css_b(nb);
  for (size_t a = 0; a < na; ++a) {
    const std::string& removed = a < prov->removed.size() ? prov->removed[a] : "";
    fate[a] = !replaced_by[a].empty() ? (kept[a] ? Fate::kKept : Fate::kReplaced)
              : !removed.empty()      ? FateOf(removed)
                                      : Fate::kUnused;
    css_a[a] = absl::StrCat("n k-", FateClass(fate[a]));
  }
  for (size_t b = 0; b < nb; ++b) {
    const rewrite::NodeProvenance& p = prov->nodes[b];
    css_b[b] = p.rule != rewrite::kOriginalRule ? "n k-new" : IsKept(p) ? "n k-kept" : "n k-merged";
  }

  SvgDrawing da = DrawGraph(original, css_a), db = DrawGraph(optimized, css_b);
  absl::StatusOr<GraphLayout> la = da.LayOut();
  if (!la.ok()) return la.status();
  absl::StatusOr<GraphLayout> lb = db.LayOut();
  if (!lb.ok()) return lb.status();

  JsonWriter j(/*one_line=*/true);
  j.BeginObject();
  j.Key("a");
  j.BeginArray();
  for (size_t a = 0; a < na; ++a) {
    const Node& n = *original.nodes()[a];
    j.BeginObject();
    j.Field("op", OpOf(n));
    j.Field("name", n.name);
    ValuesJson(j, "in", n.inputs());
    ValuesJson(j, "out", n.outputs());
    j.Field("fate", FateClass(fate[a]));
    j.Key("by");
    j.InlineInts(std::vector<int64_t>(replaced_by[a].begin(), replaced_by[a].end()));
    if (a < prov->removed.size() && !prov->removed[a].empty()) j.Field("why", prov->removed[a]);
    j.Field("x", la->centers[a].x);
    j.Field("y", la->centers[a].y);
    j.EndObject();
  }
  j.EndArray();
  j.Key("b");
  j.BeginArray();
  for (size_t b = 0; b < nb; ++b) {
    const Node& n = *optimized.nodes()[b];
    const rewrite::NodeProvenance& p = prov->nodes[b];
    j.BeginObject();
    j.Field("op", OpOf(n));
    j.Field("name", n.name);
    ValuesJson(j, "in", n.inputs());
    ValuesJson(j, "out", n.outputs());
    j.Field("rule", p.rule);
    j.Key("rep");
    j.InlineInts(std::vector<int64_t>(p.replaced.begin(), p.replaced.end()));
    j.Field("prod", static_cast<int64_t>(p.producers));
    j.Field("x", lb->centers[b].x);
    j.Field("y", lb->centers[b].y);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();

  std::string title = page.input_path.empty() ? "model" : page.input_path;
  if (size_t slash = title.find_last_of('/'); slash != std::string::npos) title = title.substr(slash + 1);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&out, "<meta name=\"generator\" content=\"aic-onnx opt\">\n<title>", HtmlEscape(title),
                  " · aic-onnx opt</title>\n<script>", kHtmlErrorScript, "</script>\n<style>", kHtmlStyle,
                  kOptHtmlStyle, "</style>\n</head><body class=\"opt\">\n");
  absl::StrAppend(&out, "<header><h1>", HtmlEscape(title), ": what opt changed</h1>",
                  "<input id=\"search\" type=\"search\" placeholder=\"find a node by name, op or rule\" "
                  "autocomplete=\"off\"><div id=\"hits\"></div></header>\n<div id=\"main\">\n<aside id=\"side\">\n");
  SidePanel(page, na, nb, out);
  out += "</aside>\n<div id=\"panes\">\n";
  for (auto [side, what, count, d, lay] :
       {std::tuple{"a", "original", na, &da, &*la}, std::tuple{"b", "optimized", nb, &db, &*lb}}) {
    absl::StrAppend(&out, "<div class=\"pane\" id=\"", side, "-pane\"><div class=\"pane-title\">", what, ": ", count,
                    count == 1 ? " node" : " nodes", "</div><div class=\"canvas\" id=\"", side, "-canvas\">\n");
    d->AppendSvg(*lay, absl::StrCat(side, "-"), out);
    out += "</div></div>\n";
  }
  out += "<div id=\"help\">drag: pan · wheel: zoom · 0: fit all · Esc: close</div>\n</div>\n"
         "<aside id=\"panel\" hidden></aside>\n</div>\n<pre id=\"errors\"></pre>\n";
  absl::StrAppend(&out, "<script type=\"application/json\" id=\"opt-data\">", ScriptSafe(j.str()),
                  "</script>\n<script>", kHtmlPanZoomScript, kOptHtmlScript, "</script>\n</body></html>\n");
  return out;
}

}  // namespace aic::analysis

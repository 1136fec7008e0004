#include "graph/printer.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace aic {

namespace {

std::string ValueRef(const Value* v) { return v == nullptr ? "<none>" : absl::StrCat("%", v->name()); }

void PrintNodes(const Graph& graph, int indent, std::string& out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (const auto& n : graph.nodes()) {
    std::vector<std::string> outs, ins, attrs;
    for (const Value* v : n->outputs()) outs.push_back(ValueRef(v));
    for (const Value* v : n->inputs()) ins.push_back(ValueRef(v));
    for (const Attribute& a : n->attributes) {
      if (a.type != AttrType::kGraph && a.type != AttrType::kGraphs) attrs.push_back(a.ToString());
    }
    std::string op = n->domain.empty() ? n->op_type : absl::StrCat(n->domain, "::", n->op_type);
    absl::StrAppend(&out, pad, absl::StrJoin(outs, ", "), " = ", op, "(", absl::StrJoin(ins, ", "),
                    ")");
    if (!attrs.empty()) absl::StrAppend(&out, " {", absl::StrJoin(attrs, ", "), "}");
    if (!n->name.empty()) absl::StrAppend(&out, "  '", n->name, "'");
    out += "\n";
    for (const Attribute& a : n->attributes) {
      std::vector<const Graph*> subs;
      if (a.type == AttrType::kGraph && a.g) subs.push_back(a.g.get());
      for (const auto& g : a.graphs) subs.push_back(g.get());
      for (const Graph* g : subs) {
        absl::StrAppend(&out, pad, "  ", a.name, ": graph '", g->name, "' (",
                        absl::StrJoin(g->inputs(), ", ",
                                      [](std::string* s, const Value* v) { s->append(ValueRef(v)); }),
                        ") -> (",
                        absl::StrJoin(g->outputs(), ", ",
                                      [](std::string* s, const Value* v) { s->append(ValueRef(v)); }),
                        ")\n");
        PrintNodes(*g, indent + 4, out);
      }
    }
  }
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes < 1024 * 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  if (bytes < 1024ull * 1024 * 1024) return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024));
  return absl::StrFormat("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
}

}  // namespace

std::string PrintGraph(const Graph& graph) {
  std::string out;
  PrintNodes(graph, 2, out);
  return out;
}

std::string PrintModelSummary(const Model& model, const std::string& path) {
  const Graph& g = *model.graph;
  std::string out;
  absl::StrAppend(&out, "model: ", path, "\n");
  absl::StrAppend(&out, "ir_version: ", model.ir_version, "\n");
  std::vector<std::string> opsets;
  for (const OpsetImport& o : model.opset_imports) {
    opsets.push_back(absl::StrCat(o.domain.empty() ? "ai.onnx" : o.domain, "=", o.version));
  }
  absl::StrAppend(&out, "opsets: ", absl::StrJoin(opsets, ", "), "\n");
  if (!model.producer_name.empty()) {
    absl::StrAppend(&out, "producer: ", model.producer_name, " ", model.producer_version, "\n");
  }
  if (!g.name.empty()) absl::StrAppend(&out, "graph: ", g.name, "\n");

  out += "\ninputs:\n";
  for (const Value* v : g.inputs()) {
    if (v->is_initializer()) continue;  // an initializer listed as input is a default, not a feed
    absl::StrAppend(&out, "  ", v->name(), ": ", v->type().ToString(), "\n");
  }
  out += "outputs:\n";
  for (const Value* v : g.outputs()) {
    absl::StrAppend(&out, "  ", v->name(), ": ", v->type().ToString(), "\n");
  }

  uint64_t init_bytes = 0;
  for (const Value* v : g.initializers()) init_bytes += v->initializer()->byte_size();
  absl::StrAppend(&out, "\ninitializers: ", g.initializers().size(), " (", HumanBytes(init_bytes),
                  ")\n");

  std::map<std::string, int> histogram;
  for (const auto& n : g.nodes()) {
    histogram[n->domain.empty() ? n->op_type : absl::StrCat(n->domain, "::", n->op_type)]++;
  }
  std::vector<std::pair<std::string, int>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  absl::StrAppend(&out, "nodes: ", g.num_nodes());
  if (g.TotalNodeCount() != g.num_nodes()) {
    absl::StrAppend(&out, " (", g.TotalNodeCount(), " including subgraphs)");
  }
  out += "\nop histogram:\n";
  for (const auto& [op, count] : ops) absl::StrAppend(&out, absl::StrFormat("  %-24s %d\n", op, count));
  if (!model.functions.empty()) {
    absl::StrAppend(&out, "functions: ", model.functions.size(), "\n");
  }
  out += "\nnode list:\n";
  out += PrintGraph(g);
  return out;
}

}  // namespace aic

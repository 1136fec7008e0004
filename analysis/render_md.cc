// The Markdown report: a node table, a layer table with the measured
// spectra, then the graph-level analysis and candidates as lists, for pasting
// into a pull request or a wiki page.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/candidates.h"
#include "analysis/format.h"
#include "analysis/render.h"

namespace aic::analysis {

namespace {

std::string Cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c != '\n')
      out += c;
  }
  return out;
}

std::string OnnxNames(const ReportNode& n) {
  std::vector<std::string> parts;
  for (const SourceNode& s : n.sources) {
    parts.push_back(s.name.empty() ? s.op_type : absl::StrCat(s.op_type, " `", s.name, "`"));
  }
  return absl::StrJoin(parts, " + ");
}

}  // namespace

std::string RenderMarkdown(const Report& r) {
  std::string out = absl::StrCat("# aic-onnx report: `", r.model_path, "`\n\n");
  out += "## Nodes\n\n";
  out +=
      "| # | node | ONNX | input shape | output shape | parameters | MACs | FLOPs | properties |\n";
  out += "|---|---|---|---|---|---:|---:|---:|---|\n";
  for (const ReportNode& n : r.nodes) {
    if (!n.on_data_path) continue;  // summarised below
    absl::StrAppend(&out, "| ", n.index, " | ", Cell(n.name), " | ", Cell(OnnxNames(n)), " | ",
                    Cell(ShapeList(n.ShownInputShapes())), " | ", Cell(ShapeList(n.ShownOutputShapes())), " | ",
                    n.params, " | ", n.cost_known ? Cell(WithExpression(r, n.macs, n.macs_expression)) : "?",
                    " | ", n.cost_known ? Cell(WithExpression(r, n.flops, n.flops_expression)) : "?", " | ",
                    Cell(absl::StrJoin(n.properties, ", ")), " |\n");
  }
  bool any_spectrum = false;
  for (const ReportNode& n : r.nodes) any_spectrum |= n.spectrum.has_value();
  if (any_spectrum) {
    out += "\n## Weight spectra\n\n";
    absl::StrAppend(
        &out, "| # | layer | matrix | effective rank | stable rank | numerical rank | rank at ",
        Fixed(100 * r.energy, 1), "% energy | pays |\n");
    out += "|---|---|---|---:|---:|---:|---:|---|\n";
    for (const ReportNode& n : r.nodes) {
      if (!n.spectrum) continue;
      const Spectrum& s = *n.spectrum;
      absl::StrAppend(&out, "| ", n.index, " | ", n.layer_kind, " ", n.in_features, " → ",
                      n.out_features, " | ", s.rows, " × ", s.cols, " | ");
      if (!s.skipped.empty()) {
        absl::StrAppend(&out, Cell(s.skipped), " | | | | |\n");
        continue;
      }
      absl::StrAppend(&out, Fixed(s.effective_rank, 2), " | ", Fixed(s.stable_rank, 2), " | ",
                      s.numerical_rank, " | ", n.low_rank ? std::to_string(n.low_rank->rank) : "",
                      " | ", n.low_rank ? (n.low_rank->pays ? "yes" : "no") : "", " |\n");
    }
  }
  bool any_activation = false;
  for (const ReportNode& n : r.nodes) any_activation |= n.activation.has_value();
  if (any_activation) {
    out += "\n## Activations\n\n| # | node | active ratio | units | dead | rarely active |\n";
    out += "|---|---|---:|---:|---:|---:|\n";
    for (const ReportNode& n : r.nodes) {
      if (!n.activation) continue;
      const Activation& a = *n.activation;
      absl::StrAppend(&out, "| ", n.index, " | ", n.name, " | ", Fixed(a.active_ratio, 3), " | ",
                      a.units, " | ", a.dead_units, " | ", a.rare_units, " |\n");
    }
  }
  out += "\n## Summary\n\n";
  absl::StrAppend(&out, "- Total parameters: ",
                  TotalWithExpression(r, r.total_params, &SymbolicCosts::params), "\n");
  absl::StrAppend(&out, "- Total MACs: ", TotalWithExpression(r, r.total_macs, &SymbolicCosts::macs),
                  r.total_int8_macs > 0 ? absl::StrCat(" (int8: ", Int8Share(r), ")") : "",
                  "\n- Total FLOPs: ", TotalWithExpression(r, r.total_flops, &SymbolicCosts::flops),
                  "\n");
  if (r.uncounted_nodes > 0) {
    absl::StrAppend(&out, "- Nodes with non-static shapes (not counted): ", r.uncounted_nodes,
                    "\n");
  }
  absl::StrAppend(&out, "- Peak activation memory: ",
                  r.peak_activation_bytes ? Bytes(*r.peak_activation_bytes) : "unknown", "\n");
  if (std::string off = OffPathSummary(r); !off.empty()) absl::StrAppend(&out, "- ", Cell(off), "\n");
  for (int c : r.collapse_points) {
    absl::StrAppend(&out, "- Potential collapse point: ", r.nodes[c].name, " (Node ", c, ")\n");
  }
  for (const Chain& ch : r.chains) {
    absl::StrAppend(&out, "- ", ch.kind,
                    ch.expansion ? " expansion: " : " contraction: ", absl::StrJoin(ch.dims, " → "),
                    " (Node", ch.nodes.size() > 1 ? "s " : " ", absl::StrJoin(ch.nodes, ", "),
                    ")\n");
  }
  for (const ExpandCollapse& p : r.expand_collapse) {
    absl::StrAppend(&out, "- Expand-then-collapse: Node ", p.wide, " → Node ", p.collapse,
                    " → Node ", p.narrow, "\n");
  }
  for (const MergeCandidate& m : r.merges) {
    absl::StrAppend(&out, "- Consecutive linear layers: Node ", m.first, " → Node ", m.second, " (",
                    m.n, " → ", m.h, " → ", m.m, "), merging ", m.pays ? "pays" : "does not pay",
                    "\n");
  }
  if (!r.candidates.empty()) {
    out += "\n## Optimization candidates\n\n";
    for (const std::string& c : r.candidates) absl::StrAppend(&out, "- ", c, "\n");
  }
  if (std::vector<WhatIfRow> rows = WhatIfRows(r); !rows.empty()) {
    absl::StrAppend(&out, "\n## What if (low-rank)\n\n", kWhatIfHeading, ".\n\n",
                    "| Node | layer | energy kept | rank | params saved | MACs saved | σ_{r+1}/σ₁ | relative Frobenius error |\n",
                    "|---|---|---|---|---|---|---|---|\n");
    for (const WhatIfRow& row : rows) {
      const Spectrum& s = *row.node->spectrum;
      double sigma1 = s.singular_values.empty() ? 0 : s.singular_values[0];
      for (const LowRank& lr : row.node->what_if) {
        absl::StrAppend(&out, "| ", row.node->index, " | ", row.layer, row.users > 1 ? absl::StrCat(" ×", row.users) : "",
                        " | ", Fixed(100 * lr.energy_kept, 1), "% | ", lr.rank, " | ",
                        lr.pays ? Short(lr.params_before - lr.params_after) : "does not pay", " | ",
                        !lr.pays || lr.macs_before < 0 ? "" : Short(lr.macs_before - lr.macs_after), " | ",
                        sigma1 > 0 ? Fixed(lr.spectral_error / sigma1, 3) : "0", " | ",
                        Fixed(lr.relative_frobenius_error, 3), " |\n");
      }
    }
  }
  if (r.calibration.requested || !r.notes.empty() || r.symbolic) out += "\n## Notes\n\n";
  if (r.calibration.requested) {
    absl::StrAppend(&out, "- Calibration: ", CalibrationSummary(r.calibration), "\n");
  }
  if (!r.calibration.note.empty()) absl::StrAppend(&out, "- ", r.calibration.note, "\n");
  for (const std::string& n : r.notes) absl::StrAppend(&out, "- ", n, "\n");
  if (r.symbolic) absl::StrAppend(&out, "- ", SymbolicSummary(*r.symbolic), "\n");
  return out;
}

}  // namespace aic::analysis

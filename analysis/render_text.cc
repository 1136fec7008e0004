// The text report: the seed's lines in the seed's order, each node block
// then the graph-level analysis, with measured lines added after the lines
// they belong to (never instead of one).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/format.h"
#include "analysis/render.h"

namespace aic::analysis {

std::string ShapeList(const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (const Shape& s : shapes) parts.push_back(s.ToString());
  return absl::StrJoin(parts, ", ");
}

std::string SpectrumSummary(const Spectrum& s) {
  if (!s.skipped.empty()) return s.skipped;
  return absl::StrCat("effective rank ", Fixed(s.effective_rank, 2), ", stable rank ",
                      Fixed(s.stable_rank, 2), ", numerical rank ", s.numerical_rank, " of ",
                      std::min(s.rows, s.cols));
}

std::string LowRankSummary(const LowRank& lr, double energy) {
  std::string s =
      absl::StrCat("rank ", lr.rank, " keeps ", Fixed(100 * lr.energy_kept, 2),
                   "% of the energy (target ", Fixed(100 * energy, 1),
                   "%), relative Frobenius error ", Fixed(lr.relative_frobenius_error, 4), "; ");
  if (lr.pays) {
    absl::StrAppend(&s, "pays: ", lr.params_before, " → ", lr.params_after, " params");
    if (lr.macs_before >= 0)
      absl::StrAppend(&s, ", ", lr.macs_before, " → ", lr.macs_after, " MACs");
  } else {
    absl::StrAppend(&s, "does not pay (needs rank < ", Fixed(lr.break_even_rank, 2), ")");
  }
  return s;
}

std::string ActivationSummary(const Report& report, const Activation& a) {
  std::string s = absl::StrCat(Fixed(a.active_ratio, 2), " over ", a.samples,
                               a.samples == 1 ? " sample" : " samples",
                               report.calibration.random ? " of random data" : "",
                               "; dead units: ", a.dead_units, " of ", a.units);
  if (a.rare_units > 0) {
    absl::StrAppend(&s, ", rarely active (<= ", Fixed(100 * a.rare_threshold, 0),
                    "%): ", a.rare_units);
  }
  return s;
}

std::string CalibrationSummary(const Calibration& cal) {
  if (!cal.requested) return "";
  if (!cal.ran) return absl::StrCat("none (", cal.source, ")");
  std::string s =
      absl::StrCat(cal.samples, cal.samples == 1 ? " sample" : " samples", " (", cal.source, ")");
  if (cal.random) {
    absl::StrAppend(&s,
                    "; the data was random: ratios show the model's response to noise, "
                    "not to real inputs");
  }
  return s;
}

namespace {

void NodeBlock(const Report& r, const ReportNode& n, std::string& out) {
  absl::StrAppend(&out, "Node ", n.index, ": ", n.name, "\n");
  if (n.input_shapes.empty()) {
    absl::StrAppend(&out, "Input shape: none\n");
  } else {
    absl::StrAppend(&out, n.input_shapes.size() == 1 ? "Input shape: " : "Input shapes: ",
                    ShapeList(n.input_shapes), "\n");
  }
  absl::StrAppend(&out, n.output_shapes.size() == 1 ? "Output shape: " : "Output shapes: ",
                  ShapeList(n.output_shapes), "\n");
  if (n.params > 0) absl::StrAppend(&out, "Parameters: ", n.params, "\n");
  absl::StrAppend(&out, "Properties: ",
                  n.properties.empty() ? "none known" : absl::StrJoin(n.properties, ", "), "\n");
  if (n.cost_known) {
    absl::StrAppend(&out, "MACs: ", n.macs, "\n", "FLOPs: ", n.flops, "\n",
                    "Memory: ", n.bytes_read, " bytes read, ", n.bytes_written, " bytes written\n");
  } else {
    absl::StrAppend(&out,
                    "MACs: unknown (shapes not static)\nFLOPs: unknown (shapes not static)\n");
  }
  if (n.is_layer) {
    absl::StrAppend(&out, "Representation: ",
                    n.out_features > n.in_features   ? "expansion "
                    : n.out_features < n.in_features ? "contraction "
                                                     : "width kept ",
                    n.in_features, " → ", n.out_features, "\n");
  }
  if (n.traits.collapse_producing() && !n.traits.collapse_how.empty()) {
    absl::StrAppend(&out, "Collapse: ", n.traits.collapse_how, "\n");
  }
  if (n.spectrum) {
    absl::StrAppend(&out, "Weight spectrum (", n.spectrum->rows, " × ", n.spectrum->cols,
                    "): ", SpectrumSummary(*n.spectrum), "\n");
  }
  if (n.low_rank) absl::StrAppend(&out, "Low rank: ", LowRankSummary(*n.low_rank, r.energy), "\n");
  if (n.activation)
    absl::StrAppend(&out, "Activation ratio: ", ActivationSummary(r, *n.activation), "\n");
}

}  // namespace

std::string RenderText(const Report& r) {
  std::string out;
  for (const ReportNode& n : r.nodes) {
    NodeBlock(r, n, out);
    out += "\n";
  }
  absl::StrAppend(&out, "Total parameters: ", r.total_params, "\n");
  std::string partial =
      r.uncounted_nodes > 0
          ? absl::StrCat(" (", r.uncounted_nodes, " nodes with non-static shapes not counted)")
          : "";
  absl::StrAppend(&out, "Total MACs: ", r.total_macs, partial, "\n");
  absl::StrAppend(&out, "Total FLOPs: ", r.total_flops, partial, "\n");
  if (r.peak_activation_bytes) {
    absl::StrAppend(&out, "Peak activation memory: ", Bytes(*r.peak_activation_bytes));
    if (r.peak_at_node >= 0) absl::StrAppend(&out, " (at Node ", r.peak_at_node, ")");
    out += "\n";
  } else {
    absl::StrAppend(&out, "Peak activation memory: unknown (input shapes not static)\n");
  }
  for (int c : r.collapse_points) {
    const ReportNode& n = r.nodes[c];
    absl::StrAppend(&out, "Potential collapse point: ", n.name, "\n");
    absl::StrAppend(&out, "  at Node ", c, n.traits.collapse_how.empty() ? "" : ": ",
                    n.traits.collapse_how, "\n");
  }
  for (const Chain& ch : r.chains) {
    absl::StrAppend(&out, ch.kind,
                    ch.expansion ? " expansion: " : " contraction: ", absl::StrJoin(ch.dims, " → "),
                    "\n");
    absl::StrAppend(&out, ch.nodes.size() == 1 ? "  at Node " : "  at Nodes ",
                    absl::StrJoin(ch.nodes, ", "), "\n");
  }
  for (const ExpandCollapse& p : r.expand_collapse) {
    const ReportNode &w = r.nodes[p.wide], &c = r.nodes[p.collapse], &n = r.nodes[p.narrow];
    absl::StrAppend(&out, "Expand-then-collapse: ", w.layer_kind, " ", w.in_features, " → ",
                    w.out_features, " (Node ", w.index, "), ", c.name, " (Node ", c.index, "), ",
                    n.layer_kind, " ", n.in_features, " → ", n.out_features, " (Node ", n.index,
                    ")\n");
  }
  for (const MergeCandidate& m : r.merges) {
    absl::StrAppend(&out, "Consecutive linear layers: Node ", m.first, " → Node ", m.second, " (",
                    m.n, " → ", m.h, " → ", m.m, "), merging ",
                    m.pays ? "pays: h = " : "does not pay: h = ", m.h,
                    m.pays ? " > " : " <= ", "mn/(m+n) = ", Fixed(m.break_even, 2), "\n");
  }
  if (!r.candidates.empty()) {
    out += "Optimization candidates:\n";
    for (const std::string& c : r.candidates) absl::StrAppend(&out, "- ", c, "\n");
  }
  if (r.calibration.requested) {
    absl::StrAppend(&out, "Calibration: ", CalibrationSummary(r.calibration), "\n");
  }
  if (!r.calibration.note.empty()) absl::StrAppend(&out, "Note: ", r.calibration.note, "\n");
  for (const std::string& note : r.notes) absl::StrAppend(&out, "Note: ", note, "\n");
  return out;
}

}  // namespace aic::analysis

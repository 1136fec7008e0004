// The text report: the seed's lines in the seed's order, each node block
// then the graph-level analysis, with measured lines added after the lines
// they belong to (never instead of one).
#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/candidates.h"
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

std::string ExpressionSuffix(const Report& r, int64_t value,
                             const std::optional<Polynomial>& expression) {
  if (!r.symbolic || !expression || expression->IsConstant() ||
      !r.symbolic->Holds(expression, value)) {
    return "";
  }
  bool exact = true;
  std::string text = expression->ToString(&exact);
  return absl::StrCat(exact ? " = " : " ≈ ", text);
}

std::string WithExpression(const Report& r, int64_t value,
                           const std::optional<Polynomial>& expression) {
  return absl::StrCat(value, ExpressionSuffix(r, value, expression));
}

std::string TotalWithExpression(const Report& r, int64_t value,
                                const std::optional<Polynomial> SymbolicCosts::*member) {
  return WithExpression(r, value, r.symbolic ? (*r.symbolic).*member : std::nullopt);
}

std::string Int8Share(const Report& r) {
  const double share = r.total_macs > 0 ? 100.0 * static_cast<double>(r.total_int8_macs) / r.total_macs : 0.0;
  return absl::StrCat(r.total_int8_macs, " ≈ ", Short(r.total_int8_macs), ", ", Fixed(share, 1), "% of the MACs");
}

std::string OffPathSummary(const Report& r) {
  std::map<std::string, int> ops;
  std::vector<int> nodes;
  for (const ReportNode& n : r.nodes) {
    if (n.on_data_path) continue;
    ++ops[n.name];
    nodes.push_back(n.index);
  }
  if (nodes.empty()) return "";
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [op, c] : ops) by_count.push_back({-c, op});
  std::sort(by_count.begin(), by_count.end());
  std::vector<std::string> parts;
  for (const auto& [c, op] : by_count) parts.push_back(-c > 1 ? absl::StrCat(op, " ×", -c) : op);
  return absl::StrCat("Shape, index and mask computations (off the representation path): ",
                      nodes.size(), nodes.size() == 1 ? " node (" : " nodes (",
                      absl::StrJoin(parts, ", "), ") at Node", nodes.size() == 1 ? " " : "s ",
                      absl::StrJoin(nodes, ", "));
}

std::string SymbolicSummary(const SymbolicCosts& s) {
  std::vector<std::string> sizes;
  bool defaults = false;
  for (size_t i = 0; i < s.symbols.size(); ++i) {
    sizes.push_back(absl::StrCat(s.symbols[i], "=", s.values[i], s.given[i] ? "" : " (default)"));
    defaults |= !s.given[i];
  }
  std::string out = absl::StrCat("symbolic dims analysed at ", absl::StrJoin(sizes, ", "));
  if (defaults) {
    out += " (defaults: a leading dim 1, an image's sides 224, a waveform's samples 16000, other "
           "dims 16; --shape NAME=D,.. "
           "sets them)";
  }
  if (!s.fitted) return absl::StrCat(out, "; costs not given in the symbols: ", s.why_not);
  absl::StrAppend(&out, "; the costs given in the symbols hold for ", s.domain, " (", s.evaluations,
                  " sizes)");
  std::vector<std::string> missing;
  if (!s.params) missing.push_back("parameters");
  if (!s.macs) missing.push_back("MACs");
  if (!s.flops) missing.push_back("FLOPs");
  if (!s.bytes_read || !s.bytes_written) missing.push_back("bytes");
  if (!s.peak_activation_bytes) missing.push_back("peak memory");
  if (!missing.empty()) {
    absl::StrAppend(&out, "; not a polynomial there: ", absl::StrJoin(missing, ", "));
  }
  return out;
}

namespace {

// "'fc1/MatMul' (MatMul), 'fc1/Add' (Add)"; long groups (a decomposed
// LayerNorm) name their first nodes and count the rest.
std::string OnnxNamesLine(const ReportNode& n) {
  constexpr size_t kShown = 4;
  std::vector<std::string> parts;
  for (size_t i = 0; i < n.sources.size() && i < kShown; ++i) {
    const SourceNode& s = n.sources[i];
    parts.push_back(s.name.empty() ? absl::StrCat("unnamed ", s.op_type)
                                   : absl::StrCat("'", s.name, "' (", s.op_type, ")"));
  }
  std::string line = absl::StrJoin(parts, ", ");
  if (n.sources.size() > kShown) absl::StrAppend(&line, " and ", n.sources.size() - kShown, " more");
  return line;
}

void NodeBlock(const Report& r, const ReportNode& n, bool names, std::string& out) {
  absl::StrAppend(&out, "Node ", n.index, ": ", n.name, "\n");
  if (names && !n.sources.empty()) absl::StrAppend(&out, "ONNX: ", OnnxNamesLine(n), "\n");
  const std::vector<Shape>& ins = n.ShownInputShapes();
  const std::vector<Shape>& outs = n.ShownOutputShapes();
  if (ins.empty()) {
    absl::StrAppend(&out, "Input shape: none\n");
  } else {
    absl::StrAppend(&out, ins.size() == 1 ? "Input shape: " : "Input shapes: ", ShapeList(ins), "\n");
  }
  absl::StrAppend(&out, outs.size() == 1 ? "Output shape: " : "Output shapes: ", ShapeList(outs), "\n");
  if (n.params > 0) absl::StrAppend(&out, "Parameters: ", n.params, "\n");
  absl::StrAppend(&out, "Properties: ",
                  n.properties.empty() ? "none known" : absl::StrJoin(n.properties, ", "), "\n");
  if (n.cost_known) {
    absl::StrAppend(&out, "MACs: ", WithExpression(r, n.macs, n.macs_expression), n.int8 ? " (int8)" : "", "\n",
                    "FLOPs: ", WithExpression(r, n.flops, n.flops_expression), "\n",
                    "Memory: ", n.bytes_read, " bytes read, ", n.bytes_written, " bytes written",
                    n.int8 ? " (8-bit operands as stored)" : "", "\n");
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

std::string RenderText(const Report& r, NodeNames node_names) {
  std::string out;
  const bool names = node_names == NodeNames::kAlways ||
                     (node_names == NodeNames::kAuto && r.nodes.size() > kSeedScaleNodes);
  for (const ReportNode& n : r.nodes) {
    if (!n.on_data_path) continue;  // summarised after the totals
    NodeBlock(r, n, names, out);
    out += "\n";
  }
  absl::StrAppend(&out, "Total parameters: ",
                  TotalWithExpression(r, r.total_params, &SymbolicCosts::params), "\n");
  std::string partial =
      r.uncounted_nodes > 0
          ? absl::StrCat(" (", r.uncounted_nodes, " nodes with non-static shapes not counted)")
          : "";
  absl::StrAppend(&out, "Total MACs: ", TotalWithExpression(r, r.total_macs, &SymbolicCosts::macs),
                  partial, "\n");
  if (r.total_int8_macs > 0) {
    absl::StrAppend(&out, "  of which on 8-bit operands (int8): ", Int8Share(r),
                    "\n");
  }
  absl::StrAppend(&out, "Total FLOPs: ", TotalWithExpression(r, r.total_flops, &SymbolicCosts::flops),
                  partial, "\n");
  if (r.peak_activation_bytes) {
    absl::StrAppend(&out, "Peak activation memory: ", Bytes(*r.peak_activation_bytes));
    if (r.peak_at_node >= 0) absl::StrAppend(&out, " (at Node ", r.peak_at_node, ")");
    std::string peak = ExpressionSuffix(
        r, *r.peak_activation_bytes, r.symbolic ? r.symbolic->peak_activation_bytes : std::nullopt);
    if (!peak.empty()) absl::StrAppend(&out, peak, " bytes");
    out += "\n";
  } else {
    absl::StrAppend(&out, "Peak activation memory: unknown (input shapes not static)\n");
  }
  if (std::string off = OffPathSummary(r); !off.empty()) absl::StrAppend(&out, off, "\n");
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
  if (std::vector<WhatIfRow> rows = WhatIfRows(r); !rows.empty()) {
    absl::StrAppend(&out, kWhatIfHeading, ":\n");
    int64_t none_pays = 0;
    for (const WhatIfRow& row : rows) {
      bool pays = false;
      for (const LowRank& lr : row.node->what_if) pays = pays || lr.pays;
      if (!pays) {
        ++none_pays;
        continue;
      }
      std::vector<std::string> entries;
      for (const LowRank& lr : row.node->what_if) entries.push_back(WhatIfEntry(*row.node->spectrum, lr));
      absl::StrAppend(&out, "- Node ", row.node->index, " ", row.layer,
                      row.users > 1 ? absl::StrCat(" (weight shared by ", row.users, " layers)") : "", ": ",
                      absl::StrJoin(entries, "; "), "\n");
    }
    if (none_pays > 0) {
      absl::StrAppend(&out, "- ", none_pays, none_pays == 1 ? " layer" : " layers",
                      " where no rank up to 99.9% energy pays (--format md or json lists them)\n");
    }
  }
  if (r.calibration.requested) {
    absl::StrAppend(&out, "Calibration: ", CalibrationSummary(r.calibration), "\n");
  }
  if (!r.calibration.note.empty()) absl::StrAppend(&out, "Note: ", r.calibration.note, "\n");
  for (const std::string& note : r.notes) absl::StrAppend(&out, "Note: ", note, "\n");
  if (r.symbolic) absl::StrAppend(&out, "Note: ", SymbolicSummary(*r.symbolic), "\n");
  return out;
}

}  // namespace aic::analysis

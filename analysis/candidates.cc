#include "analysis/candidates.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "analysis/calibration.h"
#include "analysis/format.h"

namespace aic::analysis {

namespace {

constexpr size_t kMaxListed = 8;  // per candidate kind; the JSON has all

std::string SampleWords(const Calibration& cal) {
  return absl::StrCat(cal.samples, cal.random ? " random" : "",
                      cal.samples == 1 ? " sample" : " samples",
                      cal.random ? "" : absl::StrCat(" from ", cal.source));
}

std::string NotMeasured(const Calibration& cal) {
  if (!cal.requested)
    return ": not measured (no calibration data: --calib DIR or --calib random:N)";
  return ": not measured (calibration did not run; see the note)";
}

std::string FirstLayerLine(const Report& r) {
  const ReportNode* first = nullptr;
  for (const char* kind : {"Linear", "Conv"}) {
    for (const ReportNode& n : r.nodes) {
      if (n.is_layer && n.layer_kind == kind) {
        first = &n;
        break;
      }
    }
    if (first != nullptr) break;
  }
  if (first == nullptr) return "";
  std::string line = absl::StrCat("inspect effective rank of first ", first->layer_kind);
  if (first->spectrum && first->spectrum->skipped.empty()) {
    const Spectrum& s = *first->spectrum;
    absl::StrAppend(&line, ": effective rank ", Fixed(s.effective_rank, 2), " of ",
                    std::min(s.rows, s.cols), " (stable rank ", Fixed(s.stable_rank, 2),
                    ", numerical rank ", s.numerical_rank, ")");
  } else if (first->spectrum) {
    absl::StrAppend(&line, ": ", first->spectrum->skipped);
  }
  return line;
}

void ActivationLines(const Report& r, std::vector<std::string>& out) {
  std::vector<std::string> names;
  for (const ReportNode& n : r.nodes) {
    if (IsMeasured(n) && std::find(names.begin(), names.end(), n.name) == names.end()) {
      names.push_back(n.name);
    }
  }
  for (const std::string& name : names) {
    std::string line = absl::StrCat("measure ", name, " activation ratio");
    std::vector<const ReportNode*> measured;
    for (const ReportNode& n : r.nodes) {
      if (n.name == name && n.activation) measured.push_back(&n);
    }
    if (measured.empty()) {
      absl::StrAppend(&line, NotMeasured(r.calibration));
    } else if (measured.size() == 1) {
      absl::StrAppend(&line, ": ", Fixed(measured[0]->activation->active_ratio, 2), " at Node ",
                      measured[0]->index, " (", SampleWords(r.calibration), ")");
    } else {
      double sum = 0;
      const ReportNode* lowest = measured[0];
      for (const ReportNode* n : measured) {
        sum += n->activation->active_ratio;
        if (n->activation->active_ratio < lowest->activation->active_ratio) lowest = n;
      }
      absl::StrAppend(&line, ": mean ", Fixed(sum / static_cast<double>(measured.size()), 2),
                      " over ", measured.size(), " nodes, lowest ",
                      Fixed(lowest->activation->active_ratio, 2), " at Node ", lowest->index, " (",
                      SampleWords(r.calibration), ")");
    }
    out.push_back(line);
  }
}

std::string HiddenLine(const Report& r) {
  std::vector<const HiddenReduction*> shrink;
  for (const HiddenReduction& h : r.hidden_reductions) {
    if (h.dead + h.rare > 0) shrink.push_back(&h);
  }
  if (r.expand_collapse.empty() && shrink.empty()) return "";
  std::string line = "consider hidden dimension reduction";
  if (!r.calibration.ran) {
    absl::StrAppend(&line, NotMeasured(r.calibration));
    return line;
  }
  if (shrink.empty()) {
    if (r.hidden_reductions.empty()) {
      absl::StrAppend(&line, ": nothing measured (no clamping op such as ReLU between the layers)");
    } else if (r.hidden_reductions.size() == 1) {
      absl::StrAppend(&line, ": no dead or rarely active units at Node ",
                      r.hidden_reductions[0].collapse, " (width ", r.hidden_reductions[0].width,
                      " stays)");
    } else {
      absl::StrAppend(&line, ": no dead or rarely active units at the ", r.hidden_reductions.size(),
                      " measured nodes");
    }
    return line;
  }
  std::stable_sort(shrink.begin(), shrink.end(),
                   [](const HiddenReduction* a, const HiddenReduction* b) {
                     return a->dead + a->rare > b->dead + b->rare;
                   });
  absl::StrAppend(&line, ":");
  for (size_t i = 0; i < shrink.size() && i < 3; ++i) {
    const HiddenReduction& h = *shrink[i];
    absl::StrAppend(&line, i == 0 ? " " : "; ", h.dead, " of ", h.width, " units dead");
    if (h.rare > 0) {
      absl::StrAppend(&line, " and ", h.rare, " active on <= ",
                      Fixed(100 * r.nodes[h.collapse].activation->rare_threshold, 0), "%");
    }
    absl::StrAppend(&line, " at Node ", h.collapse, ", width ", h.remaining, " remains");
  }
  if (shrink.size() > 3) absl::StrAppend(&line, "; ", shrink.size() - 3, " more nodes");
  return line;
}

void LowRankLines(const Report& r, std::vector<std::string>& out) {
  // One line per weight: a weight shared by several layers factorizes once.
  std::vector<const ReportNode*> pays;
  std::map<std::string, int> users;
  for (const ReportNode& n : r.nodes) {
    if (!n.low_rank || !n.low_rank->pays) continue;
    if (users[n.weight_name]++ == 0) pays.push_back(&n);
  }
  std::stable_sort(pays.begin(), pays.end(), [](const ReportNode* a, const ReportNode* b) {
    return a->low_rank->params_before - a->low_rank->params_after >
           b->low_rank->params_before - b->low_rank->params_after;
  });
  for (size_t i = 0; i < pays.size() && i < kMaxListed; ++i) {
    const ReportNode& n = *pays[i];
    const LowRank& lr = *n.low_rank;
    std::string line =
        absl::StrCat("low-rank ", n.layer_kind, " at Node ", n.index, " (", n.in_features, " → ",
                     n.out_features, ") to rank ", lr.rank, " (", Fixed(100 * lr.energy_kept, 1),
                     "% energy): saves ", Short(lr.params_before - lr.params_after), " params");
    if (lr.macs_before >= 0)
      absl::StrAppend(&line, " and ", Short(lr.macs_before - lr.macs_after), " MACs");
    absl::StrAppend(&line, ", relative Frobenius error ", Fixed(lr.relative_frobenius_error, 3));
    if (int k = users[n.weight_name]; k > 1) {
      absl::StrAppend(&line, " (weight shared by ", k, " layers; MACs saved at each)");
    }
    out.push_back(line);
  }
  if (pays.size() > kMaxListed) {
    out.push_back(
        absl::StrCat("low-rank: ", pays.size() - kMaxListed, " more layers (see --format json)"));
  }
}

void MergeLines(const Report& r, std::vector<std::string>& out) {
  for (const MergeCandidate& m : r.merges) {
    if (!m.pays) continue;
    out.push_back(absl::StrCat("merge ", r.nodes[m.first].layer_kind, " at Node ", m.first,
                               " into ", r.nodes[m.second].layer_kind, " at Node ", m.second, " (",
                               m.n, " → ", m.h, " → ", m.m, "): saves ",
                               Short(m.h * (m.n + m.m) - m.n * m.m),
                               " params and as many MACs per position"));
  }
}

}  // namespace

std::vector<WhatIfRow> WhatIfRows(const Report& r) {
  std::vector<WhatIfRow> rows;
  std::map<std::string, size_t> seen;
  for (const ReportNode& n : r.nodes) {
    if (n.what_if.empty() || !n.spectrum) continue;
    if (auto it = seen.find(n.weight_name); it != seen.end()) {
      ++rows[it->second].users;
      continue;
    }
    seen[n.weight_name] = rows.size();
    WhatIfRow row;
    row.node = &n;
    row.layer = absl::StrCat(n.layer_kind, " (", n.in_features, " → ", n.out_features, ")");
    rows.push_back(row);
  }
  return rows;
}

std::string WhatIfEntry(const Spectrum& s, const LowRank& lr) {
  std::string e = absl::StrCat("rank ", lr.rank, " (", Fixed(100 * lr.energy_kept, 1), "% energy)");
  if (!lr.pays) {
    absl::StrAppend(&e, " does not pay (needs rank < ", Fixed(lr.break_even_rank, 1), ")");
    return e;
  }
  absl::StrAppend(&e, " saves ", Short(lr.params_before - lr.params_after), " params");
  if (lr.macs_before >= 0) absl::StrAppend(&e, " and ", Short(lr.macs_before - lr.macs_after), " MACs");
  double sigma1 = s.singular_values.empty() ? 0 : s.singular_values[0];
  absl::StrAppend(&e, ", σ_{r+1}/σ₁ ", sigma1 > 0 ? Fixed(lr.spectral_error / sigma1, 3) : "0");
  return e;
}

void BuildCandidates(Report& r) {
  r.candidates.clear();
  if (std::string line = FirstLayerLine(r); !line.empty()) r.candidates.push_back(line);
  ActivationLines(r, r.candidates);
  if (std::string line = HiddenLine(r); !line.empty()) r.candidates.push_back(line);
  LowRankLines(r, r.candidates);
  MergeLines(r, r.candidates);
}

}  // namespace aic::analysis

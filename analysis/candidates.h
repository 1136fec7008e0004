// The "Optimization candidates:" list: the seed's three lines (inspect the
// first layer's effective rank, measure collapse ops' activation ratio,
// consider hidden dimension reduction), each followed on the same line by what
// was measured, then low-rank factorizations and layer merges that pay.
#pragma once

#include "analysis/report.h"

namespace aic::analysis {

// Fills report.candidates from the measured report.
void BuildCandidates(Report& report);

// The "what if" table: one row per weight with a spectrum (a weight shared
// by several layers once, at its first), its factorization at each of
// kWhatIfEnergies.
struct WhatIfRow {
  const ReportNode* node = nullptr;
  std::string layer;  // "Linear (784 → 256)"
  int users = 1;      // layers sharing the weight
};
std::vector<WhatIfRow> WhatIfRows(const Report& report);
// "rank 120 (90.2% energy) saves 110K params and 110K MACs, σ_{r+1}/σ₁ 0.31": one
// entry of a row; "does not pay" where r(m+n) >= mn.
std::string WhatIfEntry(const Spectrum& spectrum, const LowRank& lr);
// The heading the text, Markdown and HTML reports put above the table.
inline constexpr char kWhatIfHeading[] =
    "What if (low-rank): each weight factorized at the rank keeping 90 / 95 / 99 / 99.9% of its "
    "spectral energy; σ_{r+1}/σ₁ bounds the relative spectral-norm error of the layer";

}  // namespace aic::analysis

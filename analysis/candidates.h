// The "Optimization candidates:" list: the seed's three lines (inspect the
// first layer's effective rank, measure collapse ops' activation ratio,
// consider hidden dimension reduction), each followed on the same line by what
// was measured, then low-rank factorizations and layer merges that pay.
#pragma once

#include "analysis/report.h"

namespace aic::analysis {

// Fills report.candidates from the measured report.
void BuildCandidates(Report& report);

}  // namespace aic::analysis

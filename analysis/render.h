// Renderers of a Report: text (the seed's format, the default), JSON (the
// stable schema of docs/report-schema.md) and Markdown. They only read the
// Report; nothing is computed here.
#pragma once

#include <string>

#include "analysis/report.h"

namespace aic::analysis {

std::string RenderText(const Report& report);
std::string RenderJson(const Report& report);
std::string RenderMarkdown(const Report& report);

// Words shared by the renderers.
std::string ShapeList(const std::vector<Shape>& shapes);  // "[1, 10]" or "[1, 20], [1, 20]"
std::string ActivationSummary(const Report& report, const Activation& a);
std::string SpectrumSummary(const Spectrum& s);
std::string LowRankSummary(const LowRank& lr, double energy);
std::string CalibrationSummary(const Calibration& cal);

}  // namespace aic::analysis

// Renderers of a Report: text (the seed's format, the default), JSON (the
// stable schema of docs/report-schema.md), Markdown and HTML. They only read the
// Report; nothing is computed here.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "analysis/report.h"

namespace aic::analysis {

// Whether the text report names each node's ONNX nodes ("ONNX: 'fc1/MatMul',
// 'fc1/Add'"). Auto: for graphs of more than kSeedScaleNodes logical nodes.
// A graph the size of the seed's example is read whole by index, and its
// report is the seed's format to the byte; past that, the ONNX name is how a
// reader finds a node in Netron or in the exporter's code.
enum class NodeNames { kAuto, kAlways, kNever };
inline constexpr size_t kSeedScaleNodes = 12;
std::string RenderText(const Report& report, NodeNames names = NodeNames::kAuto);
std::string RenderJson(const Report& report);
std::string RenderMarkdown(const Report& report);
// One self-contained HTML page: the logical graph drawn top to bottom
// (Graphviz's dot layout, graph_layout.h), coloured by semantic class, share
// of MACs or bytes moved; a panel per node with what the text report says of
// it and its weight spectrum plotted; the graph-level findings linked to
// their nodes. FailedPrecondition when Graphviz's layout is not available.
absl::StatusOr<std::string> RenderHtml(const Report& report);
// `s` with & < > " ' as character references, for HTML text and attributes.
std::string HtmlEscape(const std::string& s);
// The colour class a node gets from its traits: "opaque" (no traits known),
// "collapse" (collapse-producing), "expanding", "contracting" (its
// representation effect), "linear", else "other".
const char* SemanticClass(const ReportNode& n);

// Words shared by the renderers.
std::string ShapeList(const std::vector<Shape>& shapes);  // "[1, 10]" or "[1, 20], [1, 20]"
std::string ActivationSummary(const Report& report, const Activation& a);
std::string SpectrumSummary(const Spectrum& s);
std::string LowRankSummary(const LowRank& lr, double energy);
std::string CalibrationSummary(const Calibration& cal);
// "196608 = 1536·batch·sequence"; the value alone when there is no
// expression, it is a constant, or it does not give `value` at the sizes
// analysed (outside the sizes where it is exact).
std::string WithExpression(const Report& r, int64_t value, const std::optional<Polynomial>& expression);
// " = 1536·batch·sequence" (" ≈ " when a coefficient is rounded in print),
// or "" on the same conditions: what WithExpression appends to the value.
std::string ExpressionSuffix(const Report& r, int64_t value, const std::optional<Polynomial>& expression);
// A graph total with its expression: `member` one of SymbolicCosts' totals.
std::string TotalWithExpression(const Report& r, int64_t value,
                                const std::optional<Polynomial> SymbolicCosts::*member);
// "Shape, index and mask computations (off the representation path): 6
// nodes (Cast ×2, Shape, Range...) at Nodes 5, 6, ..."; "" when there are none.
std::string OffPathSummary(const Report& r);
// "4089184256 ≈ 4.09 G, 100% of the MACs": the MACs on 8-bit operands.
std::string Int8Share(const Report& r);
// The sizes analysed and where the expressions hold, for the notes.
std::string SymbolicSummary(const SymbolicCosts& s);

}  // namespace aic::analysis

// The JSON report: one object per node plus a summary, in the schema
// "aic-onnx.report/1" documented in docs/report-schema.md. Keys are written
// in a fixed order and floats with 6 significant digits, so the output is
// stable enough to diff.
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/format.h"
#include "analysis/render.h"
#include "support/json.h"

namespace aic::analysis {

namespace {

using Json = JsonWriter;

// A shape as an array: ints for known dims, strings for symbols, null for
// unknown dims; null for an unknown rank.
std::string ShapeJson(const Shape& s) {
  if (!s.has_rank()) return "null";
  std::string out = "[";
  for (size_t i = 0; i < s.dims().size(); ++i) {
    const Dim& d = s.dims()[i];
    std::string dim = d.is_value()    ? std::to_string(d.value())
                      : d.is_symbol() ? JsonQuote(d.symbol())
                                      : "null";
    absl::StrAppend(&out, i ? ", " : "", dim);
  }
  return out + "]";
}

std::string ShapesJson(const std::vector<Shape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", ShapeJson(shapes[i]));
  }
  return out + "]";
}

const char* LinearityName(Linearity l) {
  switch (l) {
    case Linearity::kLinear: return "linear";
    case Linearity::kAffine: return "affine";
    case Linearity::kNonlinear: return "nonlinear";
    default: return "unknown";
  }
}

const char* InvertibilityName(Invertibility i) {
  switch (i) {
    case Invertibility::kInvertible: return "invertible";
    case Invertibility::kInvertibleIfFullRank: return "invertible-if-full-rank";
    case Invertibility::kIrreversible: return "irreversible";
    default: return "unknown";
  }
}

// `key`: the object `write` fills from *value, or null when there is none.
template <typename Ptr, typename Write>
void ObjectOrNull(Json& j, const char* key, const Ptr& value, Write write) {
  j.Key(key);
  if (!value) {
    j.Null();
    return;
  }
  j.BeginObject();
  write(*value);
  j.EndObject();
}

// {"text": "1536·batch·sequence", "terms": [{"coefficient": 1536, "exponents": {"batch": 1, ...}}]}
// `analysed`: the value at the sizes analysed, to say whether the expression gives it.
void PolynomialJson(Json& j, const char* key, const std::optional<Polynomial>& p,
                    const Report& r, int64_t analysed) {
  j.Key(key);
  if (!p || !r.symbolic) {
    j.Null();
    return;
  }
  j.BeginObject();
  j.Key("text"); j.String(p->ToString());
  j.Key("holds_at_analysed_sizes"); j.Bool(r.symbolic->Holds(p, analysed));
  j.Key("terms");
  j.BeginArray();
  for (const Monomial& m : p->terms) {
    std::string exps;
    for (size_t i = 0; i < m.exponents.size(); ++i) {
      absl::StrAppend(&exps, i ? ", " : "", JsonQuote(p->symbols[i]), ": ", m.exponents[i]);
    }
    // Exact: a count's coefficients are integers (or fractions of one).
    char coef[40];
    if (m.coefficient == std::round(m.coefficient) && std::fabs(m.coefficient) < 9e15) {
      std::snprintf(coef, sizeof(coef), "%lld", static_cast<long long>(m.coefficient));
    } else {
      std::snprintf(coef, sizeof(coef), "%.17g", m.coefficient);
    }
    j.Raw(absl::StrCat("{\"coefficient\": ", coef, ", \"exponents\": {", exps, "}}"));
  }
  j.EndArray();
  j.EndObject();
}

void NodeJson(Json& j, const Report& r, const ReportNode& n) {
  j.BeginObject();
  j.Key("index"); j.Int(n.index);
  j.Key("name"); j.String(n.name);
  j.Key("onnx_nodes");
  j.BeginArray();
  for (const SourceNode& s : n.sources) {
    j.Raw(absl::StrCat("{\"op_type\": ", JsonQuote(s.op_type), ", \"name\": ", JsonQuote(s.name), "}"));
  }
  j.EndArray();
  j.Key("input_shapes"); j.Raw(ShapesJson(n.input_shapes));
  j.Key("output_shapes"); j.Raw(ShapesJson(n.output_shapes));
  j.Key("symbolic_input_shapes");
  n.symbolic_input_shapes.empty() ? j.Null() : j.Raw(ShapesJson(n.symbolic_input_shapes));
  j.Key("symbolic_output_shapes");
  n.symbolic_output_shapes.empty() ? j.Null() : j.Raw(ShapesJson(n.symbolic_output_shapes));
  j.Key("parameters"); j.Int(n.params);
  j.Key("cost_known"); j.Bool(n.cost_known);
  j.Key("macs"); n.cost_known ? j.Int(n.macs) : j.Null();
  j.Key("flops"); n.cost_known ? j.Int(n.flops) : j.Null();
  j.Key("bytes_read"); n.cost_known ? j.Int(n.bytes_read) : j.Null();
  j.Key("bytes_written"); n.cost_known ? j.Int(n.bytes_written) : j.Null();
  j.Key("int8"); j.Bool(n.int8);
  PolynomialJson(j, "macs_expression", n.macs_expression, r, n.macs);
  PolynomialJson(j, "flops_expression", n.flops_expression, r, n.flops);
  PolynomialJson(j, "bytes_expression", n.bytes_expression, r, n.bytes_read + n.bytes_written);
  j.Key("on_data_path"); j.Bool(n.on_data_path);
  j.Key("properties"); j.InlineStrings(n.properties);
  j.Key("meaning"); j.String(n.traits.meaning);
  j.Key("linearity"); j.String(LinearityName(n.traits.linearity));
  j.Key("invertibility"); j.String(InvertibilityName(n.traits.invertibility));
  j.Key("collapse"); j.String(CollapseKindName(n.traits.collapse));
  j.Key("collapse_how"); j.String(n.traits.collapse_how);
  j.Key("representation"); j.String(RepresentationEffectName(n.traits.effect));
  ObjectOrNull(j, "layer", n.is_layer ? &n : nullptr, [&](const ReportNode& layer) {
    j.Key("kind"); j.String(layer.layer_kind);
    j.Key("weight"); j.String(layer.weight_name);
    j.Key("weight_shape"); j.InlineInts(layer.weight_dims);
    j.Key("in_features"); j.Int(layer.in_features);
    j.Key("out_features"); j.Int(layer.out_features);
    j.Key("group"); j.Int(layer.group);
  });
  ObjectOrNull(j, "spectrum", n.spectrum, [&](const Spectrum& s) {
    j.Key("rows"); j.Int(s.rows);
    j.Key("cols"); j.Int(s.cols);
    j.Key("skipped"); s.skipped.empty() ? j.Null() : j.String(s.skipped);
    if (s.skipped.empty()) {
      j.Key("method"); j.String(s.method);
      j.Key("effective_rank"); j.Double(s.effective_rank);
      j.Key("stable_rank"); j.Double(s.stable_rank);
      j.Key("numerical_rank"); j.Int(s.numerical_rank);
      j.Key("tolerance"); j.Double(s.tolerance);
      j.Key("singular_values"); j.InlineDoubles(s.singular_values);
    }
  });
  ObjectOrNull(j, "low_rank", n.low_rank, [&](const LowRank& l) {
    j.Key("rank"); j.Int(l.rank);
    j.Key("energy_kept"); j.Double(l.energy_kept);
    j.Key("relative_frobenius_error"); j.Double(l.relative_frobenius_error);
    j.Key("spectral_error"); j.Double(l.spectral_error);
    j.Key("break_even_rank"); j.Double(l.break_even_rank);
    j.Key("pays"); j.Bool(l.pays);
    j.Key("params_before"); j.Int(l.params_before);
    j.Key("params_after"); j.Int(l.params_after);
    j.Key("macs_before"); l.macs_before >= 0 ? j.Int(l.macs_before) : j.Null();
    j.Key("macs_after"); l.macs_before >= 0 ? j.Int(l.macs_after) : j.Null();
  });
  j.Key("what_if");
  j.BeginArray();
  for (const LowRank& l : n.what_if) {
    j.BeginObject();
    j.Key("energy_kept"); j.Double(l.energy_kept);
    j.Key("rank"); j.Int(l.rank);
    j.Key("pays"); j.Bool(l.pays);
    j.Key("params_saved"); j.Int(l.params_before - l.params_after);
    j.Key("macs_saved"); l.macs_before >= 0 ? j.Int(l.macs_before - l.macs_after) : j.Null();
    j.Key("spectral_error"); j.Double(l.spectral_error);
    j.Key("relative_frobenius_error"); j.Double(l.relative_frobenius_error);
    j.EndObject();
  }
  j.EndArray();
  ObjectOrNull(j, "activation", n.activation, [&](const Activation& a) {
    j.Key("samples"); j.Int(a.samples);
    j.Key("active_ratio"); j.Double(a.active_ratio);
    j.Key("unit_axis"); j.Int(a.unit_axis);
    j.Key("units"); j.Int(a.units);
    j.Key("dead_units"); j.Int(a.dead_units);
    j.Key("rare_units"); j.Int(a.rare_units);
    j.Key("rare_threshold"); j.Double(a.rare_threshold);
    j.Key("remaining_width"); j.Int(a.remaining_width);
    j.Key("unit_active_ratio"); j.InlineDoubles(a.unit_active_ratio);
  });
  j.EndObject();
}

void SummaryJson(Json& j, const Report& r) {
  j.BeginObject();
  j.Key("total_parameters"); j.Int(r.total_params);
  j.Key("total_macs"); j.Int(r.total_macs);
  j.Key("total_int8_macs"); j.Int(r.total_int8_macs);
  j.Key("total_flops"); j.Int(r.total_flops);
  j.Key("uncounted_nodes"); j.Int(r.uncounted_nodes);
  j.Key("peak_activation_bytes");
  r.peak_activation_bytes ? j.Int(*r.peak_activation_bytes) : j.Null();
  j.Key("peak_at_node"); r.peak_at_node >= 0 ? j.Int(r.peak_at_node) : j.Null();
  ObjectOrNull(j, "symbolic", r.symbolic, [&](const SymbolicCosts& sc) {
    j.Key("dims");
    j.BeginArray();
    for (size_t i = 0; i < sc.symbols.size(); ++i) {
      j.Raw(absl::StrCat("{\"name\": ", JsonQuote(sc.symbols[i]), ", \"analysed_at\": ", sc.values[i],
                         ", \"given\": ", sc.given[i] ? "true" : "false", "}"));
    }
    j.EndArray();
    j.Key("fitted"); j.Bool(sc.fitted);
    j.Key("why_not"); sc.why_not.empty() ? j.Null() : j.String(sc.why_not);
    j.Key("exact_for"); sc.fitted ? j.String(sc.domain) : j.Null();
    j.Key("sizes_measured"); j.Int(sc.evaluations);
    PolynomialJson(j, "parameters", sc.params, r, r.total_params);
    PolynomialJson(j, "macs", sc.macs, r, r.total_macs);
    PolynomialJson(j, "flops", sc.flops, r, r.total_flops);
    PolynomialJson(j, "bytes_read", sc.bytes_read, r, r.total_bytes_read);
    PolynomialJson(j, "bytes_written", sc.bytes_written, r, r.total_bytes_written);
    PolynomialJson(j, "peak_activation_bytes", sc.peak_activation_bytes, r,
                   r.peak_activation_bytes.value_or(-1));
  });
  j.Key("collapse_points");
  j.BeginArray();
  for (int c : r.collapse_points) {
    j.Raw(absl::StrCat("{\"node\": ", c, ", \"name\": ", JsonQuote(r.nodes[c].name), ", \"how\": ",
                       JsonQuote(r.nodes[c].traits.collapse_how), "}"));
  }
  j.EndArray();
  j.Key("chains");
  j.BeginArray();
  for (const Chain& c : r.chains) {
    std::vector<int64_t> nodes(c.nodes.begin(), c.nodes.end());
    j.BeginObject();
    j.Key("kind"); j.String(c.kind);
    j.Key("direction"); j.String(c.expansion ? "expansion" : "contraction");
    j.Key("dims"); j.InlineInts(c.dims);
    j.Key("nodes"); j.InlineInts(nodes);
    j.EndObject();
  }
  j.EndArray();
  j.Key("expand_then_collapse");
  j.BeginArray();
  for (const ExpandCollapse& p : r.expand_collapse) {
    j.Raw(absl::StrCat("{\"wide\": ", p.wide, ", \"collapse\": ", p.collapse, ", \"narrow\": ",
                       p.narrow, "}"));
  }
  j.EndArray();
  j.Key("merge_candidates");
  j.BeginArray();
  for (const MergeCandidate& m : r.merges) {
    j.BeginObject();
    j.Key("first"); j.Int(m.first);
    j.Key("second"); j.Int(m.second);
    j.Key("n"); j.Int(m.n);
    j.Key("h"); j.Int(m.h);
    j.Key("m"); j.Int(m.m);
    j.Key("break_even"); j.Double(m.break_even);
    j.Key("pays"); j.Bool(m.pays);
    j.EndObject();
  }
  j.EndArray();
  j.Key("hidden_dimension_reduction");
  j.BeginArray();
  for (const HiddenReduction& h : r.hidden_reductions) {
    j.Raw(absl::StrCat("{\"collapse\": ", h.collapse, ", \"producer\": ",
                       h.producer >= 0 ? std::to_string(h.producer) : "null", ", \"width\": ",
                       h.width, ", \"dead\": ", h.dead, ", \"rare\": ", h.rare,
                       ", \"remaining\": ", h.remaining, "}"));
  }
  j.EndArray();
  j.Key("calibration");
  j.BeginObject();
  j.Key("requested"); j.Bool(r.calibration.requested);
  j.Key("ran"); j.Bool(r.calibration.ran);
  j.Key("source"); r.calibration.requested ? j.String(r.calibration.source) : j.Null();
  j.Key("random"); j.Bool(r.calibration.random);
  j.Key("samples"); j.Int(r.calibration.samples);
  j.Key("note"); r.calibration.note.empty() ? j.Null() : j.String(r.calibration.note);
  j.EndObject();
  j.Key("energy"); j.Double(r.energy);
  j.Key("candidates"); j.BeginArray();
  for (const std::string& c : r.candidates) j.String(c);
  j.EndArray();
  j.Key("notes"); j.BeginArray();
  for (const std::string& n : r.notes) j.String(n);
  j.EndArray();
  j.EndObject();
}

}  // namespace

std::string RenderJson(const Report& r) {
  Json j;
  j.BeginObject();
  j.Key("schema"); j.String("aic-onnx.report/1");
  j.Key("model");
  j.BeginObject();
  j.Key("path"); j.String(r.model_path);
  j.Key("producer"); j.String(r.producer);
  j.Key("opset"); j.Int(r.opset);
  j.Key("inputs");
  j.BeginArray();
  for (const auto& [name, shape] : r.graph_inputs) {
    j.Raw(absl::StrCat("{\"name\": ", JsonQuote(name), ", \"shape\": ", ShapeJson(shape), "}"));
  }
  j.EndArray();
  j.EndObject();
  j.Key("nodes");
  j.BeginArray();
  for (const ReportNode& n : r.nodes) NodeJson(j, r, n);
  j.EndArray();
  j.Key("summary");
  SummaryJson(j, r);
  j.EndObject();
  return j.str() + "\n";
}

}  // namespace aic::analysis

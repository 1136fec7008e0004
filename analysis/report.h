// The data of `aic-onnx report`: what analysis::Analyze() measures about a
// model, independent of how it is printed (text, JSON, Markdown renderers read
// only this). A ReportNode is a *logical* node: the ONNX nodes that form one
// layer the user thinks of (MatMul + bias Add is one Linear), so the seed MLP
// reports Node 0/1/2 whichever way it was exported. Constant-only subgraphs
// (Constant nodes, weight transposes) are folded away and not listed.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/polynomial.h"
#include "graph/shape.h"
#include "ops/traits.h"

namespace aic::analysis {

// One ONNX node inside a logical node.
struct SourceNode {
  std::string op_type;
  std::string name;
};

// Singular values of a layer's weight seen as a matrix [rows = outputs,
// cols = inputs] (Conv: [Cout, Cin/group·kh·kw]), and the ranks read from them.
struct Spectrum {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> singular_values;  // descending; empty when skipped
  double effective_rank = 0;            // exp(entropy of σᵢ/Σσ) (Roy & Vetterli 2007)
  double stable_rank = 0;               // Σσᵢ² / σ₁²
  int64_t numerical_rank = 0;           // #σᵢ > tolerance
  double tolerance = 0;                 // σ₁ · max(rows, cols) · eps(weight dtype)
  std::string method;                   // "LAPACK dgesdd" / "LAPACK sgesdd"
  std::string skipped;                  // non-empty: why there is no spectrum
};

// The smallest rank r keeping >= `energy` of Σσ², and what W ≈ U_r·V_r buys.
struct LowRank {
  int64_t rank = 0;
  double energy_kept = 0;               // Σ_{i<=r} σᵢ² / Σσᵢ²
  double relative_frobenius_error = 0;  // ‖W − W_r‖_F / ‖W‖_F
  double spectral_error = 0;            // ‖W − W_r‖₂ = σ_{r+1}
  double break_even_rank = 0;           // mn/(m+n): a factorization pays iff r < this
  bool pays = false;
  int64_t params_before = 0;  // m·n
  int64_t params_after = 0;   // r·(m+n)
  int64_t macs_before = 0;    // the layer's MACs (unknown: -1)
  int64_t macs_after = 0;     // macs_before · r(m+n)/(mn)
};

// What calibration measured at a collapse-producing elementwise op.
struct Activation {
  int64_t samples = 0;  // calibration runs that reached this node
  int64_t units = 0;    // channels / features (the unit axis below)
  int64_t unit_axis = -1;
  double active_ratio = 0;  // fraction of output elements not collapsed
  int64_t dead_units = 0;   // never active on the calibration data
  int64_t rare_units = 0;   // active, but on <= rare_threshold of positions
  double rare_threshold = 0;
  int64_t remaining_width = 0;            // units − dead − rare
  std::vector<double> unit_active_ratio;  // per unit
};

// The energy shares the report's "what if" table factorizes each weight at.
inline constexpr double kWhatIfEnergies[] = {0.9, 0.95, 0.99, 0.999};

struct ReportNode {
  int index = 0;
  std::string name;                 // semantic name: "Linear", "ReLU", "Conv"...
  std::vector<SourceNode> sources;  // the ONNX nodes it stands for
  std::vector<Shape> input_shapes;  // data inputs only (weights are parameters), at the sizes analysed
  std::vector<Shape> output_shapes;
  // The same in the graph inputs' symbols where inference writes them so
  // ([batch, sequence, 256]); empty for a model without symbols. Text and
  // Markdown print these; JSON carries both.
  std::vector<Shape> symbolic_input_shapes;
  std::vector<Shape> symbolic_output_shapes;
  const std::vector<Shape>& ShownInputShapes() const {
    return symbolic_input_shapes.empty() ? input_shapes : symbolic_input_shapes;
  }
  const std::vector<Shape>& ShownOutputShapes() const {
    return symbolic_output_shapes.empty() ? output_shapes : symbolic_output_shapes;
  }
  // The data edges, for drawing the graph (render_html.cc): parallel to
  // input_shapes, the logical node each data input comes from (-1: a graph
  // input, or a value no listed node produces) and the value's name; parallel
  // to output_shapes, the output values' names.
  std::vector<int> input_from;
  std::vector<std::string> input_values;
  std::vector<std::string> output_values;
  std::vector<std::string> properties;  // Traits::PropertyWords()
  Traits traits;
  bool cost_known = false;
  int64_t params = 0;  // this node's own count (a shared weight counts at each user)
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  // Its MACs multiply 8-bit integers: a QOperator op (QLinearConv,
  // MatMulInteger, ...) or a QDQ one (a Conv/MatMul/Gemm whose operands are
  // DequantizeLinear outputs of 8-bit tensors, as engines run it). A QDQ
  // op's bytes count its operands as stored (8-bit activations and weights,
  // int32 bias) and its output as the QuantizeLinear after it writes it.
  bool int8 = false;
  // The same costs as polynomials in the graph inputs' symbolic dims (see
  // SymbolicCosts); unset for a model without symbols or when not found.
  std::optional<Polynomial> macs_expression;
  std::optional<Polynomial> flops_expression;
  std::optional<Polynomial> bytes_expression;  // read + written
  bool floating = false;  // has a floating-point data input (collapse points need one)
  // On the representation path: computed from the model's data (a
  // floating-point or 8/16-bit graph input, or a learned table an Embedding
  // reads), not only from its shape. Shape, index and mask arithmetic
  // (Shape and what is computed from it, Cast of an integer attention
  // mask...) is off it: listed apart, never a collapse point.
  bool on_data_path = true;

  // Linear / Conv layers with a constant weight.
  bool is_layer = false;
  std::string layer_kind;  // "Linear" or "Conv"
  std::string weight_name;
  std::vector<int64_t> weight_dims;  // as stored in the model
  int64_t in_features = 0;           // Linear: K; Conv: Cin
  int64_t out_features = 0;          // Linear: N; Conv: Cout
  int64_t group = 1;
  bool pointwise = false;  // Conv with a 1×1 kernel, stride 1, no padding
  std::optional<Spectrum> spectrum;
  std::optional<LowRank> low_rank;
  // "What if": the factorization at each of kWhatIfEnergies (one entry per
  // distinct rank), paying or not, so a reader sees the trade before `opt
  // --apply low-rank` makes it.
  std::vector<LowRank> what_if;
  std::optional<Activation> activation;
};

// A run of Linear (or Conv) layers along the data path growing (expansion) or
// shrinking (contraction) the feature dimension: dims {10, 20} for 10 → 20.
struct Chain {
  std::string kind;  // "Linear" / "Conv"
  bool expansion = true;
  std::vector<int64_t> dims;
  std::vector<int> nodes;
};

// A wide layer, then a collapse-producing op, then a narrower layer.
struct ExpandCollapse {
  int wide = 0;
  int collapse = 0;
  int narrow = 0;
};

// Two layers with no nonlinearity between them: W₂(W₁x + b₁) + b₂ is one
// layer; merging n → h → m into n → m pays iff h > mn/(m+n).
struct MergeCandidate {
  int first = 0;
  int second = 0;
  int64_t n = 0, h = 0, m = 0;
  double break_even = 0;
  bool pays = false;
};

// Units that are dead or almost never active at a collapse op, and the width
// that remains if they are removed from the layer that produces them.
struct HiddenReduction {
  int collapse = 0;
  int producer = -1;  // the layer whose outputs these units are, -1 if none
  int64_t width = 0;
  int64_t dead = 0;
  int64_t rare = 0;
  int64_t remaining = 0;
};

struct Calibration {
  bool requested = false;
  bool ran = false;     // at least one sample went through
  bool random = false;  // the data was random (not representative)
  std::string source;   // "random:8", "calib/"
  int64_t samples = 0;  // samples run successfully
  std::string note;     // why calibration fell back to static analysis
};

// A model whose graph inputs have symbolic dims is analysed at one size per
// symbol (--shape, else graph/realistic_size.h's default), and its totals
// are also given as polynomials in the symbols, fitted from measurements at
// other sizes and checked at a point off the fitting grid.
struct SymbolicCosts {
  std::vector<std::string> symbols;
  std::vector<int64_t> values;  // the sizes analysed
  std::vector<bool> given;      // by --shape; else the default
  bool fitted = false;          // some total has an expression
  std::string why_not;          // when !fitted
  std::string domain;           // "batch ≥ 2, sequence ≥ 2": where the expressions are exact
  int evaluations = 0;          // sizes measured for the fit
  // Unset where the quantity is not a polynomial (a peak that moves between
  // nodes as sizes grow). An expression may also not hold at the sizes
  // analysed (outside its domain): Holds() says.
  std::optional<Polynomial> params, macs, flops, bytes_read, bytes_written, peak_activation_bytes;
  bool Holds(const std::optional<Polynomial>& p, int64_t value) const {
    return p.has_value() && static_cast<int64_t>(std::llround(p->Evaluate(values))) == value;
  }
};

struct Report {
  std::string model_path;
  std::string producer;
  int64_t opset = 0;
  std::vector<std::pair<std::string, Shape>> graph_inputs;
  std::vector<std::pair<std::string, Shape>> graph_outputs;  // as the file declares them
  std::vector<ReportNode> nodes;

  // Graph totals. Shared initializers are counted once.
  int64_t total_params = 0;
  int64_t total_macs = 0;
  int64_t total_int8_macs = 0;  // of total_macs, on 8-bit operands (ReportNode::int8)
  int64_t total_flops = 0;
  int64_t total_bytes_read = 0;     // of the counted nodes
  int64_t total_bytes_written = 0;
  int64_t uncounted_nodes = 0;  // nodes whose MACs/FLOPs are unknown (shapes not static)
  std::optional<int64_t> peak_activation_bytes;  // unknown when shapes are symbolic
  int peak_at_node = -1;
  std::optional<SymbolicCosts> symbolic;  // set when a graph input has symbolic dims

  std::vector<int> collapse_points;  // node indices
  std::vector<Chain> chains;
  std::vector<ExpandCollapse> expand_collapse;
  std::vector<MergeCandidate> merges;
  std::vector<HiddenReduction> hidden_reductions;
  Calibration calibration;
  double energy = 0.99;

  // The "Optimization candidates:" lines, measured values appended.
  std::vector<std::string> candidates;
  std::vector<std::string> notes;
};

}  // namespace aic::analysis

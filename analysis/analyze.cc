#include "analysis/analyze.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/candidates.h"
#include "analysis/constants.h"
#include "analysis/logical_graph.h"
#include "analysis/spectrum.h"
#include "analysis/structure.h"
#include "graph/topo.h"
#include "ops/infer_shapes.h"

namespace aic::analysis {

absl::Status FixInputShapes(Model& model,
                            const std::map<std::string, std::vector<int64_t>>& shapes) {
  for (const auto& [name, dims] : shapes) {
    Value* input = nullptr;
    for (Value* v : model.graph->inputs()) {
      if (v->name() == name) input = v;
    }
    if (input == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a graph input"));
    }
    const Shape& old = input->shape();
    if (old.has_rank() && old.rank() != static_cast<int64_t>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "' has rank ", old.rank(),
                                                     ", the shape given has ", dims.size()));
    }
    for (size_t i = 0; old.has_rank() && i < dims.size(); ++i) {
      const Dim& d = old.dims()[i];
      if (d.is_value() && d.value() != dims[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", name, "' dim ", i, " is ", d.value(), ", the shape given has ", dims[i]));
      }
    }
    TypeInfo t = input->type();
    if (!t.is_tensor()) t = TypeInfo::Tensor(DType::kFloat, Shape());
    t.shape = Shape::FromValues(dims);
    input->set_type(std::move(t));
  }
  return absl::OkStatus();
}

namespace {

void AddSpectra(const LogicalGraph& lg, const AnalysisOptions& options, Report& report) {
  std::vector<int> layers;
  for (const ReportNode& n : report.nodes) {
    if (n.is_layer && lg.weights[n.index] != nullptr) layers.push_back(n.index);
  }
  absl::flat_hash_map<const Tensor*, Spectrum> done;  // a shared weight is decomposed once
  for (size_t k = 0; k < layers.size(); ++k) {
    ReportNode& n = report.nodes[layers[k]];
    const Tensor& w = *lg.weights[n.index];
    Spectrum sp;
    sp.rows = n.out_features;
    sp.cols = w.num_elements() / std::max<int64_t>(1, n.out_features);
    if (auto it = done.find(&w); it != done.end()) {
      n.spectrum = it->second;
    } else {
      int64_t short_side = std::min(sp.rows, sp.cols);
      if (short_side > options.max_svd_dim) {
        sp.skipped = absl::StrCat("not decomposed: its shorter side ", short_side,
                                  " exceeds the limit ", options.max_svd_dim);
      } else {
        if (options.progress) {
          double est = EstimatedSvdSeconds(sp.rows, sp.cols);
          options.progress(absl::StrCat(
              "spectrum ", k + 1, "/", layers.size(), ": ", n.weight_name, " ", sp.rows, "×",
              sp.cols, est >= 1 ? absl::StrCat(" (about ", static_cast<int>(est), " s)") : ""));
        }
        // The stored layout: [K, N] or [N, K] for a Linear, [Cout, ...] for a Conv.
        int64_t rows = w.dim(0);
        int64_t cols = w.num_elements() / std::max<int64_t>(1, rows);
        auto s = SingularValues(w, rows, cols, &sp.method);
        if (s.ok()) {
          sp.singular_values = *std::move(s);
          ComputeRanks(sp, DTypeEpsilon(w.dtype()));
        } else {
          sp.skipped = absl::StrCat("not decomposed: ", s.status().message());
        }
      }
      done[&w] = sp;
      n.spectrum = sp;
    }
    if (n.spectrum->skipped.empty() && n.group == 1) {
      n.low_rank = LowRankCandidate(*n.spectrum, options.energy, n.cost_known ? n.macs : -1);
    }
  }
}

void AddHiddenReductions(const LogicalGraph& lg, Report& report) {
  for (const ReportNode& n : report.nodes) {
    if (!n.activation) continue;
    HiddenReduction h;
    h.collapse = n.index;
    int p = UpstreamLayer(lg, n.index);
    h.producer = p >= 0 && report.nodes[p].out_features == n.activation->units ? p : -1;
    h.width = n.activation->units;
    h.dead = n.activation->dead_units;
    h.rare = n.activation->rare_units;
    h.remaining = n.activation->remaining_width;
    report.hidden_reductions.push_back(h);
  }
}

}  // namespace

absl::StatusOr<Report> Analyze(Model& model, const AnalysisOptions& options) {
  Report report;
  report.model_path = options.model_path;
  report.producer = model.producer_name;
  report.opset = model.OpsetFor("");
  report.energy = options.energy;
  if (options.progress) options.progress("shape inference");
  // One topological order for every pass below (inference, folding, grouping).
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*model.graph));
  InferStats stats;
  InferOptions infer_options;
  infer_options.main_order = &order;
  InferShapes(model, infer_options, &stats).IgnoreError();
  if (stats.failed_nodes > 0) {
    report.notes.push_back(absl::StrCat("shape inference failed at ", stats.failed_nodes,
                                        " node(s); first: ", stats.first_error.message()));
  }
  if (stats.opaque_nodes > 0) {
    report.notes.push_back(absl::StrCat(stats.opaque_nodes,
                                        " node(s) of unknown ops: their shapes are what the file "
                                        "declares and their cost is not counted"));
  }
  for (const Value* v : model.graph->inputs()) {
    if (!v->is_initializer()) report.graph_inputs.push_back({v->name(), v->shape()});
  }

  ConstantValues constants = ConstantValues::Fold(model, order);
  AIC_ASSIGN_OR_RETURN(LogicalGraph lg, BuildLogicalGraph(model, constants, order));
  report.nodes = lg.nodes;
  report.total_params = lg.total_params;
  for (const ReportNode& n : report.nodes) {
    if (!n.cost_known) {
      ++report.uncounted_nodes;
      continue;
    }
    report.total_macs += n.macs;
    report.total_flops += n.flops;
  }
  report.peak_activation_bytes = PeakActivationBytes(model, lg, &report.peak_at_node);
  if (report.uncounted_nodes > 0 || !report.peak_activation_bytes) {
    bool symbolic = false;
    for (const auto& [name, shape] : report.graph_inputs) symbolic |= !shape.IsStatic();
    if (symbolic) {
      report.notes.push_back(
          "graph inputs have symbolic dims: MACs, FLOPs and peak memory need "
          "concrete input shapes (--shape NAME=D,D,..)");
    }
  }
  FindStructure(lg, report);
  if (options.spectra) AddSpectra(lg, options, report);
  if (options.calibration) {
    RunCalibration(model, lg, *options.calibration, options.rare_threshold, options.progress,
                   report);
    AddHiddenReductions(lg, report);
  }
  BuildCandidates(report);
  return report;
}

}  // namespace aic::analysis

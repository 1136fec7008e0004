#include "analysis/analyze.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/candidates.h"
#include "analysis/constants.h"
#include "analysis/idioms.h"
#include "analysis/logical_graph.h"
#include "analysis/spectrum.h"
#include "analysis/structure.h"
#include "analysis/symbolic_cost.h"
#include "graph/topo.h"
#include "ops/infer_shapes.h"

namespace aic::analysis {

namespace {

// Decomposes every distinct layer weight once (a shared weight is one
// job), on as many threads as the machine has: the jobs are independent and
// each LAPACK call runs on one OpenBLAS thread.
void AddSpectra(const LogicalGraph& lg, const AnalysisOptions& options, Report& report) {
  struct Job {
    const Tensor* weight;
    std::vector<int> nodes;
    Spectrum spectrum;
  };
  std::vector<Job> jobs;
  absl::flat_hash_map<const Tensor*, size_t> job_of;
  for (const ReportNode& n : report.nodes) {
    const Tensor* w = lg.weights[n.index];
    if (!n.is_layer || w == nullptr) continue;
    auto [it, fresh] = job_of.emplace(w, jobs.size());
    if (fresh) {
      Spectrum sp;
      sp.rows = n.out_features;
      sp.cols = w->num_elements() / std::max<int64_t>(1, n.out_features);
      jobs.push_back({w, {}, sp});
    }
    jobs[it->second].nodes.push_back(n.index);
  }
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mu;
  auto work = [&] {
    for (size_t j = next++; j < jobs.size(); j = next++) {
      Job& job = jobs[j];
      Spectrum& sp = job.spectrum;
      int64_t short_side = std::min(sp.rows, sp.cols);
      if (short_side > options.max_svd_dim) {
        sp.skipped = absl::StrCat("not decomposed: its shorter side ", short_side,
                                  " exceeds the limit ", options.max_svd_dim);
      } else {
        // The stored layout: [K, N] or [N, K] for a Linear, [Cout, ...] for a Conv.
        const Tensor& w = *job.weight;
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
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        options.progress(absl::StrCat("spectra: ", ++done, " of ", jobs.size(), " weights"));
      }
    }
  };
  // As many threads as cores, fewer when the largest weights' double copies
  // and Gram matrices would together pass kSpectraMemory.
  constexpr int64_t kSpectraMemory = int64_t{2} << 30;
  int64_t largest = 1;
  for (const Job& job : jobs) {
    int64_t k = std::min(job.spectrum.rows, job.spectrum.cols);
    largest = std::max(largest, 8 * (job.weight->num_elements() + k * k));
  }
  size_t threads = std::min<size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max<size_t>(1, std::min<size_t>(threads, static_cast<size_t>(kSpectraMemory / largest)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads: the ones there (and this one) take the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const Job& job : jobs) {
    for (int i : job.nodes) {
      ReportNode& n = report.nodes[i];
      n.spectrum = job.spectrum;
      if (n.spectrum->skipped.empty() && n.group == 1) {
        n.low_rank = LowRankCandidate(*n.spectrum, options.energy, n.cost_known ? n.macs : -1);
        for (double energy : kWhatIfEnergies) {
          LowRank lr = LowRankCandidate(*n.spectrum, energy, n.cost_known ? n.macs : -1);
          if (n.what_if.empty() || n.what_if.back().rank != lr.rank) n.what_if.push_back(lr);
        }
      }
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

// The shapes of every main-graph value as inference gives them with the
// symbols left open, where that shape is written in the input symbols and
// numbers only ([batch, sequence, 256]): what the report prints, since it
// says more than the numbers at one size.
absl::flat_hash_map<const Value*, Shape> SymbolicShapes(Model& model, const InputSymbols& symbols,
                                                        const std::vector<Node*>& order) {
  absl::flat_hash_map<const Value*, Shape> out;
  InferOptions infer_options;
  infer_options.main_order = &order;
  InferShapes(model, infer_options, nullptr).IgnoreError();
  for (const auto& v : model.graph->values()) {
    if (!v->type().is_tensor() || !v->shape().has_rank()) continue;
    bool symbolic = false, expressible = true;
    for (const Dim& d : v->shape().dims()) {
      if (d.is_symbol()) {
        symbolic = true;
        expressible &= std::find(symbols.names.begin(), symbols.names.end(), d.symbol()) !=
                       symbols.names.end();
      } else {
        expressible &= d.is_value();
      }
    }
    if (symbolic && expressible) out[v.get()] = v->shape();
  }
  return out;
}

void UseSymbolicShapes(const LogicalGraph& lg, const absl::flat_hash_map<const Value*, Shape>& shapes,
                       Report& report) {
  auto pick = [&](const Value* v, const Shape& analysed) {
    auto it = shapes.find(v);
    return it != shapes.end() ? it->second : analysed;
  };
  for (ReportNode& n : report.nodes) {
    for (size_t k = 0; k < n.input_shapes.size(); ++k) {
      n.symbolic_input_shapes.push_back(pick(lg.data_inputs[n.index][k], n.input_shapes[k]));
    }
    for (size_t k = 0; k < n.output_shapes.size(); ++k) {
      n.symbolic_output_shapes.push_back(pick(lg.outputs[n.index][k], n.output_shapes[k]));
    }
  }
}

// Totals and per-node costs at one size per symbol: the main analysis's
// inference, folding and grouping again, nothing else (no spectra, no runs).
// Quantities: params, MACs, FLOPs, bytes read, bytes written, [peak], then
// per logical node of `main` MACs, FLOPs and bytes. A node of the main
// analysis that is not a node with a known cost at this size is marked in
// `unstable` (it gets no expression).
// The counted nodes' costs summed, and how many nodes were not counted.
struct CostTotals {
  int64_t macs = 0, int8_macs = 0, flops = 0, bytes_read = 0, bytes_written = 0, uncounted = 0;
};

CostTotals SumCosts(const std::vector<ReportNode>& nodes) {
  CostTotals t;
  for (const ReportNode& n : nodes) {
    if (!n.cost_known) {
      ++t.uncounted;
      continue;
    }
    t.macs += n.macs;
    if (n.int8) t.int8_macs += n.macs;
    t.flops += n.flops;
    t.bytes_read += n.bytes_read;
    t.bytes_written += n.bytes_written;
  }
  return t;
}

absl::StatusOr<std::vector<double>> CostsAt(Model& model, const std::vector<Node*>& order,
                                            const absl::flat_hash_map<const Node*, Idiom>& idioms,
                                            const LogicalGraph& main, bool with_peak,
                                            int64_t main_failed_nodes, std::vector<bool>& unstable) {
  InferStats stats;
  InferOptions infer_options;
  infer_options.main_order = &order;
  InferShapes(model, infer_options, &stats).IgnoreError();
  if (stats.failed_nodes > main_failed_nodes) return stats.first_error;
  ConstantValues constants = ConstantValues::Fold(model, order);
  AIC_ASSIGN_OR_RETURN(LogicalGraph lg, BuildLogicalGraph(model, constants, order, &idioms));
  const CostTotals t = SumCosts(lg.nodes);
  std::vector<double> q = {static_cast<double>(lg.total_params), static_cast<double>(t.macs),
                           static_cast<double>(t.flops), static_cast<double>(t.bytes_read),
                           static_cast<double>(t.bytes_written)};
  if (with_peak) {
    std::optional<int64_t> peak = PeakActivationBytes(model, lg, nullptr);
    if (!peak) return absl::FailedPreconditionError("peak memory unknown");
    q.push_back(static_cast<double>(*peak));
  }
  for (size_t i = 0; i < main.nodes.size(); ++i) {
    auto it = lg.index_of.find(main.members[i][0]);
    const ReportNode* n = it == lg.index_of.end() ? nullptr : &lg.nodes[it->second];
    if (n == nullptr || !n->cost_known) {
      unstable[i] = true;
      q.insert(q.end(), {0.0, 0.0, 0.0});
      continue;
    }
    q.insert(q.end(), {static_cast<double>(n->macs), static_cast<double>(n->flops),
                       static_cast<double>(n->bytes_read + n->bytes_written)});
  }
  return q;
}

void AddSymbolicCosts(Model& model, const std::vector<Node*>& order,
                      const absl::flat_hash_map<const Node*, Idiom>& idioms, const InputSymbols& symbols,
                      const TypeSnapshot& as_loaded, const LogicalGraph& main,
                      int64_t main_failed_nodes, Report& report) {
  SymbolicCosts& sc = *report.symbolic;
  TypeSnapshot at_main(model);
  const bool with_peak = report.peak_activation_bytes.has_value();
  std::vector<bool> unstable(main.nodes.size(), false);
  MeasureFn measure = [&](const std::vector<int64_t>& values) {
    as_loaded.Restore();
    SetInputSizes(symbols, values);
    return CostsAt(model, order, idioms, main, with_peak, main_failed_nodes, unstable);
  };
  PolynomialFit fit = FitPolynomials(symbols.names, measure);
  at_main.Restore();
  sc.evaluations = fit.evaluations;
  if (!fit.ok) {
    sc.why_not = fit.why_not;
    return;
  }
  sc.fitted = true;
  sc.domain = fit.domain_note;
  auto take = [&](size_t q) { return fit.valid[q] ? std::optional<Polynomial>(fit.quantities[q]) : std::nullopt; };
  sc.params = take(0);
  sc.macs = take(1);
  sc.flops = take(2);
  sc.bytes_read = take(3);
  sc.bytes_written = take(4);
  size_t next = 5;
  if (with_peak) sc.peak_activation_bytes = take(next++);
  for (ReportNode& n : report.nodes) {
    size_t base = next + 3 * static_cast<size_t>(n.index);
    if (unstable[n.index] || !n.cost_known) continue;
    n.macs_expression = take(base);
    n.flops_expression = take(base + 1);
    n.bytes_expression = take(base + 2);
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
  AIC_ASSIGN_OR_RETURN(InputSymbols symbols, BindInputSymbols(model, options.input_shapes));
  // As the file declares them (symbols by name); the sizes analysed are in report.symbolic.
  for (const Value* v : model.graph->inputs()) {
    if (!v->is_initializer()) report.graph_inputs.push_back({v->name(), v->shape()});
  }
  for (const Value* v : model.graph->outputs()) report.graph_outputs.push_back({v->name(), v->shape()});
  TypeSnapshot as_loaded(model);
  absl::flat_hash_map<const Value*, Shape> symbolic_shapes;
  if (!symbols.empty()) {
    symbolic_shapes = SymbolicShapes(model, symbols, order);
    as_loaded.Restore();
    SetInputSizes(symbols, symbols.values);
    SymbolicCosts& sc = report.symbolic.emplace();
    sc.symbols = symbols.names;
    sc.values = symbols.values;
    sc.given = symbols.given;
  }
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

  ConstantValues constants = ConstantValues::Fold(model, order);
  if (options.progress) options.progress("recognising exporter idioms");
  const absl::flat_hash_map<const Node*, Idiom> idioms = FindIdioms(model, order);
  AIC_ASSIGN_OR_RETURN(LogicalGraph lg, BuildLogicalGraph(model, constants, order, &idioms));
  report.nodes = lg.nodes;
  report.total_params = lg.total_params;
  report.notes.insert(report.notes.end(), lg.notes.begin(), lg.notes.end());
  const CostTotals totals = SumCosts(report.nodes);
  report.total_macs = totals.macs;
  report.total_int8_macs = totals.int8_macs;
  report.total_flops = totals.flops;
  report.total_bytes_read = totals.bytes_read;
  report.total_bytes_written = totals.bytes_written;
  report.uncounted_nodes = totals.uncounted;
  report.peak_activation_bytes = PeakActivationBytes(model, lg, &report.peak_at_node);
  FindStructure(lg, report);
  if (options.spectra) AddSpectra(lg, options, report);
  if (options.calibration) {
    RunCalibration(model, lg, *options.calibration, options.rare_threshold, options.progress,
                   report);
    AddHiddenReductions(lg, report);
  }
  BuildCandidates(report);
  if (report.symbolic) {
    if (options.progress) options.progress("costs as expressions in the symbolic dims");
    AddSymbolicCosts(model, order, idioms, symbols, as_loaded, lg, stats.failed_nodes, report);
  }
  if (!symbolic_shapes.empty()) UseSymbolicShapes(lg, symbolic_shapes, report);
  return report;
}

}  // namespace aic::analysis

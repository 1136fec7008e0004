// Model comparison through two sessions on one backend; see compare.h.
#include "session/compare.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "session/session.h"

namespace aic::session {

namespace {

void Compare(const Tensor& a, const Tensor& b, double rtol, double atol, OutputDiff& d) {
  if (a.dtype() != b.dtype()) {
    d.ok = false;
    d.problem = absl::StrCat("dtype ", DTypeName(a.dtype()), " vs ", DTypeName(b.dtype()));
    return;
  }
  if (a.dims() != b.dims()) {
    d.ok = false;
    d.problem = absl::StrCat("shape ", DimsToString(a.dims()), " vs ", DimsToString(b.dims()));
    return;
  }
  if (a.dtype() == DType::kString) {
    if (a.strings() != b.strings()) {
      d.ok = false;
      d.problem = "strings differ";
    }
    return;
  }
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double x = a.ElementAsDouble(i);
    double y = b.ElementAsDouble(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) {
        d.ok = false;
        d.problem = "NaN mismatch";
      }
      continue;
    }
    if (x == y) continue;  // also equal infinities
    double abs = std::fabs(x - y);
    double rel = abs / std::max(std::fabs(x), 1e-30);
    d.max_abs = std::max(d.max_abs, abs);
    d.max_rel = std::max(d.max_rel, rel);
    if (!(abs <= atol + rtol * std::fabs(x))) d.ok = false;
  }
}

// Both models' sessions on `device`, at -O0.
struct SessionPair {
  std::unique_ptr<Session> a, b;
};

absl::StatusOr<SessionPair> OpenPair(const Model& a, const Model& b, const std::string& device, int threads) {
  SessionOptions so;
  so.device = device;
  so.threads = threads;
  so.opt_level = 0;
  SessionPair p;
  AIC_ASSIGN_OR_RETURN(p.a, Session::Create(a, so));
  AIC_ASSIGN_OR_RETURN(p.b, Session::Create(b, so));
  return p;
}

// One model's side of a comparison: compiled for the first feeds, then run
// on each until one fails.
struct Side {
  absl::Status prepare;
  std::vector<absl::StatusOr<std::vector<RuntimeValue>>> runs;
};

Side RunAll(Session& s, const std::vector<Feeds>& feeds) {
  Side side;
  side.prepare = s.Prepare(feeds[0]).status();
  if (!side.prepare.ok()) return side;
  for (const Feeds& f : feeds) {
    side.runs.push_back(s.Run(f));
    if (!side.runs.back().ok()) break;
  }
  return side;
}

// Every tensor value one run of `m` computes (main graph), by name.
absl::StatusOr<std::map<std::string, Tensor>> ObserveAll(const Model& m, const Feeds& feeds) {
  SessionOptions so;
  so.device = "reference";
  so.opt_level = 0;
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::Create(m, so));
  std::map<std::string, Tensor> values;
  for (const Value* v : m.graph->initializers()) values[v->name()] = *v->initializer();
  for (const auto& [name, v] : feeds) {
    if (v.is_tensor()) values[name] = v.tensor;
  }
  exec::NodeObserver observer = [&](const Node& n, const std::vector<RuntimeValue>& outs) {
    for (size_t i = 0; i < outs.size() && i < n.num_outputs(); ++i) {
      if (n.output(i) != nullptr && outs[i].is_tensor()) values[n.output(i)->name()] = outs[i].tensor;
    }
  };
  exec::RunOptions ro;
  ro.observer = &observer;
  AIC_RETURN_IF_ERROR(s->Run(feeds, ro).status());
  return values;
}

}  // namespace

absl::StatusOr<BisectReport> BisectModels(const Model& a, const Model& b, const Feeds& feeds,
                                          const CompareOptions& options) {
  absl::StatusOr<std::map<std::string, Tensor>> va = ObserveAll(a, feeds);
  if (!va.ok()) return absl::FailedPreconditionError(std::string(va.status().message()));
  AIC_ASSIGN_OR_RETURN(auto vb, ObserveAll(b, feeds));
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*a.graph));
  BisectReport report;
  for (const Node* n : order) {
    for (const Value* out : n->outputs()) {
      if (out == nullptr) continue;
      auto ia = va->find(out->name());
      auto ib = vb.find(out->name());
      if (ia == va->end() || ib == vb.end()) continue;
      ++report.compared;
      OutputDiff d;
      d.name = out->name();
      Compare(ia->second, ib->second, options.rtol, options.atol, d);
      if (d.ok || report.diverged) continue;
      report.diverged = true;
      report.node = n->Describe();
      report.value = d;
      for (const Value* in : n->inputs()) {
        if (in == nullptr) continue;
        auto xa = va->find(in->name());
        auto xb = vb.find(in->name());
        if (xa == va->end() || xb == vb.end()) {
          report.unmatched_inputs.push_back(in->name());
          continue;
        }
        OutputDiff di;
        Compare(xa->second, xb->second, options.rtol, options.atol, di);
        (di.ok ? report.agreeing_inputs : report.differing_inputs).push_back(in->name());
      }
    }
  }
  return report;
}

absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            const CompareOptions& options) {
  double rtol = options.rtol, atol = options.atol;
  CompareReport report;
  for (const Value* v : a.graph->outputs()) {
    OutputDiff d;
    d.name = v->name();
    report.outputs.push_back(d);
  }
  if (feeds.empty()) return report;
  report.device = options.device;
  // With the threads left to us, the two models compile and run side by side,
  // each on half the cores: compiling (oneDNN's JIT, weight packing) is most
  // of a verification and runs on one core.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const bool side_by_side = options.device != "reference" && options.threads == 0 && cores >= 2;
  absl::StatusOr<SessionPair> pair = OpenPair(a, b, options.device, side_by_side ? cores / 2 : options.threads);
  Side sa, sb;
  if (pair.ok()) {
    if (side_by_side) {
      std::thread other([&] { sb = RunAll(*pair->b, feeds); });
      sa = RunAll(*pair->a, feeds);
      other.join();
    } else {
      sa = RunAll(*pair->a, feeds);
      if (sa.prepare.ok()) sb = RunAll(*pair->b, feeds);
    }
  }
  absl::Status a_status = pair.ok() ? sa.prepare : pair.status();
  if (!a_status.ok()) {
    // The original cannot run here: the reference interpreter runs both.
    if (options.device == "reference") return absl::FailedPreconditionError(std::string(a_status.message()));
    CompareOptions on_reference = options;
    on_reference.device = "reference";
    AIC_ASSIGN_OR_RETURN(CompareReport r, CompareModels(a, b, feeds, on_reference));
    r.fallback = absl::StrCat(options.device, ": ", a_status.message());
    return r;
  }
  if (!sb.prepare.ok()) {
    // An op with no kernel anywhere cannot be checked; any other failure of
    // the model under test to compile is a mismatch, never a silent skip.
    if (absl::IsUnimplemented(sb.prepare)) return absl::FailedPreconditionError(std::string(sb.prepare.message()));
    for (auto& o : report.outputs) {
      o.ok = false;
      o.problem = std::string(sb.prepare.message());
    }
    return report;
  }
  for (size_t k = 0; k < feeds.size(); ++k) {
    if (k >= sa.runs.size() || !sa.runs[k].ok()) {
      return absl::FailedPreconditionError(
          k < sa.runs.size() ? std::string(sa.runs[k].status().message()) : "the original stopped");
    }
    if (k >= sb.runs.size() || !sb.runs[k].ok()) {
      for (auto& o : report.outputs) {
        o.ok = false;
        o.problem = k < sb.runs.size() ? std::string(sb.runs[k].status().message()) : "the candidate stopped";
      }
      ++report.runs;
      return report;
    }
    const std::vector<RuntimeValue>& ra = *sa.runs[k];
    const std::vector<RuntimeValue>& rb = *sb.runs[k];
    if (rb.size() != ra.size()) return absl::InternalError("output counts differ");
    for (size_t i = 0; i < ra.size(); ++i) {
      const RuntimeValue& x = ra[i];
      const RuntimeValue& y = rb[i];
      OutputDiff& d = report.outputs[i];
      if (x.kind != y.kind) {
        d.ok = false;
        d.problem = "kinds differ";
      } else if (x.is_tensor()) {
        Compare(x.tensor, y.tensor, rtol, atol, d);
      } else if (x.is_sequence()) {
        if (x.sequence.size() != y.sequence.size()) {
          d.ok = false;
          d.problem = "sequence lengths differ";
        } else {
          for (size_t j = 0; j < x.sequence.size(); ++j) Compare(x.sequence[j], y.sequence[j], rtol, atol, d);
        }
      }
    }
    ++report.runs;
  }
  return report;
}

}  // namespace aic::session

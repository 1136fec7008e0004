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

// How far below an output's peak magnitude the relative tolerance stops
// shrinking (compare.h).
constexpr double kPeakFloor = 1e-2;

// One element pair: NaN only against NaN, then |a - b| <= atol + rtol * |a|
// (the caller's atol includes the output's floor).
inline void CompareElement(double x, double y, double rtol, double atol, OutputDiff& d) {
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isnan(x) != std::isnan(y)) {
      d.ok = false;
      d.problem = "NaN mismatch";
    }
    return;
  }
  if (x == y) return;  // also equal infinities
  double abs = std::fabs(x - y);
  double rel = abs / std::max(std::fabs(x), 1e-30);
  d.max_abs = std::max(d.max_abs, abs);
  d.max_rel = std::max(d.max_rel, rel);
  if (!(abs <= atol + rtol * std::fabs(x))) d.ok = false;
}

// Typed for the common dtypes: widening each element through a dtype switch
// (Tensor::ElementAsDouble) made this 3 ms of a verification of PP-OCR rec.
template <typename T>
void CompareElements(int64_t n, const T* a, const T* b, double rtol, double atol, OutputDiff& d) {
  for (int64_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;  // equal finite values and infinities; NaN never equals
    CompareElement(static_cast<double>(a[i]), static_cast<double>(b[i]), rtol, atol, d);
  }
}

// The largest finite |a| of a floating-point tensor (typed for f32 and f64,
// as CompareElements); 0 for other dtypes.
template <typename T>
double PeakOf(int64_t n, const T* a) {
  T peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(a[i])) peak = std::max(peak, std::fabs(a[i]));
  }
  return static_cast<double>(peak);
}

double PeakMagnitude(const Tensor& a) {
  const int64_t n = a.num_elements();
  if (a.dtype() == DType::kFloat) return PeakOf(n, a.data<float>());
  if (a.dtype() == DType::kDouble) return PeakOf(n, a.data<double>());
  if (!IsFloatingPoint(a.dtype())) return 0;
  double peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = a.ElementAsDouble(i);
    if (std::isfinite(v)) peak = std::max(peak, std::fabs(v));
  }
  return peak;
}

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
  const int64_t n = a.num_elements();
  atol += rtol * kPeakFloor * PeakMagnitude(a);
  switch (a.dtype()) {
    case DType::kFloat: return CompareElements(n, a.data<float>(), b.data<float>(), rtol, atol, d);
    case DType::kDouble: return CompareElements(n, a.data<double>(), b.data<double>(), rtol, atol, d);
    case DType::kInt64: return CompareElements(n, a.data<int64_t>(), b.data<int64_t>(), rtol, atol, d);
    case DType::kInt32: return CompareElements(n, a.data<int32_t>(), b.data<int32_t>(), rtol, atol, d);
    default:
      for (int64_t i = 0; i < n; ++i) CompareElement(a.ElementAsDouble(i), b.ElementAsDouble(i), rtol, atol, d);
  }
}

// A model's session on `device`, at -O0 (the graph exactly as given).
absl::StatusOr<std::unique_ptr<Session>> OpenAsGiven(const Model& m, const std::string& device, int threads) {
  SessionOptions so;
  so.device = device;
  so.threads = threads;
  so.opt_level = 0;
  return Session::Create(m, so);
}

// One model's side of a comparison: compiled for the first feeds, then run
// on each until one fails.
struct Side {
  absl::Status prepare;
  std::vector<absl::StatusOr<std::vector<RuntimeValue>>> runs;
};

Side RunAll(const Model& m, const std::string& device, int threads, const std::vector<Feeds>& feeds) {
  Side side;
  absl::StatusOr<std::unique_ptr<Session>> opened = OpenAsGiven(m, device, threads);
  if (!opened.ok()) {
    side.prepare = opened.status();
    return side;
  }
  Session& s = **opened;
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


struct Comparison::Original {
  Side side;
  std::thread running;
};

Comparison::Comparison(const Model& a, std::vector<Feeds> feeds, const CompareOptions& options)
    : a_(a), feeds_(std::move(feeds)), options_(options), original_(std::make_unique<Original>()) {
  if (feeds_.empty()) return;
  // With the threads left to us, the two models compile and run side by
  // side, each on half the cores: compiling (oneDNN's JIT, weight packing)
  // is most of a verification and runs on one core. The original starts at
  // once, so that it also runs while its candidate is still being made.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  side_by_side_ = options_.device != "reference" && options_.threads == 0 && cores >= 2;
  threads_ = side_by_side_ ? cores / 2 : options_.threads;
  if (side_by_side_) {
    original_->running = std::thread([this] { original_->side = RunAll(a_, options_.device, threads_, feeds_); });
  }
}

Comparison::~Comparison() {
  if (original_->running.joinable()) original_->running.join();
}

absl::StatusOr<CompareReport> Comparison::Against(const Model& b) {
  double rtol = options_.rtol, atol = options_.atol;
  CompareReport report;
  for (const Value* v : a_.graph->outputs()) {
    OutputDiff d;
    d.name = v->name();
    report.outputs.push_back(d);
  }
  if (feeds_.empty()) return report;
  report.device = options_.device;
  Side& sa = original_->side;
  Side sb;
  if (side_by_side_) {
    sb = RunAll(b, options_.device, threads_, feeds_);
    original_->running.join();
  } else {
    sa = RunAll(a_, options_.device, threads_, feeds_);
    if (sa.prepare.ok()) sb = RunAll(b, options_.device, threads_, feeds_);
  }
  if (!sa.prepare.ok()) {
    // The original cannot run here: the reference interpreter runs both.
    if (options_.device == "reference") return absl::FailedPreconditionError(std::string(sa.prepare.message()));
    CompareOptions on_reference = options_;
    on_reference.device = "reference";
    AIC_ASSIGN_OR_RETURN(CompareReport r, CompareModels(a_, b, feeds_, on_reference));
    r.fallback = absl::StrCat(options_.device, ": ", sa.prepare.message());
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
  for (size_t k = 0; k < feeds_.size(); ++k) {
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
      } else if (x.is_map_sequence()) {
        if (!x.map_keys.BitwiseEquals(y.map_keys)) {
          d.ok = false;
          d.problem = "map keys differ";
        } else {
          Compare(x.map_values, y.map_values, rtol, atol, d);
        }
      }
    }
    ++report.runs;
  }
  return report;
}

absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            const CompareOptions& options) {
  return Comparison(a, feeds, options).Against(b);
}

}  // namespace aic::session

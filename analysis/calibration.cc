#include "analysis/calibration.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/structure.h"
#include "session/session.h"

namespace aic::analysis {

namespace {

// Per measured node, over all samples. An element is inactive when the op
// put it on a clamp bound. The bound is recognised from the data, so no op
// type is named here: a value at the very bottom (or top) of a tensor that
// several elements share exactly is where the op clamped them (ReLU's 0,
// Clip's min and max, HardSigmoid's 0 and 1); continuous inputs do not tie.
struct Accumulator {
  int64_t samples = 0;
  int64_t elements = 0;
  int64_t active = 0;
  int64_t units = -1;
  int64_t axis = -1;
  std::vector<int64_t> unit_positions;
  std::vector<int64_t> unit_active;
  bool has_lo = false, has_hi = false;
  double lo = 0, hi = 0;
  bool inconsistent = false;  // the unit count changed between samples
};

void Accumulate(const Tensor& y, int64_t axis_hint, Accumulator& acc) {
  if (!IsFloatingPoint(y.dtype()) || y.num_elements() == 0) return;
  const int64_t n = y.num_elements();
  std::vector<double> v(static_cast<size_t>(n));
  if (y.dtype() == DType::kFloat) {
    const float* p = y.data<float>();
    for (int64_t i = 0; i < n; ++i) v[i] = p[i];
  } else {
    for (int64_t i = 0; i < n; ++i) v[i] = y.ElementAsDouble(i);
  }
  const int64_t rank = y.rank();
  int64_t axis = axis_hint >= 0 && axis_hint < rank ? axis_hint : rank - 1;
  int64_t units = rank == 0 ? 1 : y.dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= y.dim(d);
  if (acc.units < 0) {
    acc.units = units;
    acc.axis = axis;
    acc.unit_positions.assign(static_cast<size_t>(units), 0);
    acc.unit_active.assign(static_cast<size_t>(units), 0);
  } else if (acc.units != units) {
    acc.inconsistent = true;
    return;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (double x : v) {
    if (std::isnan(x)) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  int64_t n_lo = 0, n_hi = 0;
  for (double x : v) {
    n_lo += x == lo;
    n_hi += x == hi;
  }
  bool sat_lo = n_lo >= 2 || (acc.has_lo && lo == acc.lo);
  bool sat_hi = lo != hi && (n_hi >= 2 || (acc.has_hi && hi == acc.hi));
  if (sat_lo) acc.has_lo = true, acc.lo = lo;
  if (sat_hi) acc.has_hi = true, acc.hi = hi;
  for (int64_t i = 0; i < n; ++i) {
    double x = v[i];
    bool inactive = std::isnan(x) || (sat_lo && x == lo) || (sat_hi && x == hi);
    int64_t u = rank == 0 ? 0 : (i / inner) % units;
    ++acc.unit_positions[u];
    if (!inactive) {
      ++acc.unit_active[u];
      ++acc.active;
    }
  }
  acc.elements += n;
  ++acc.samples;
}

Activation Summarize(const Accumulator& acc, double rare_threshold) {
  Activation a;
  a.samples = acc.samples;
  a.units = acc.units;
  a.unit_axis = acc.axis;
  a.rare_threshold = rare_threshold;
  a.active_ratio =
      acc.elements > 0 ? static_cast<double>(acc.active) / static_cast<double>(acc.elements) : 0;
  for (int64_t u = 0; u < acc.units; ++u) {
    double r = acc.unit_positions[u] > 0 ? static_cast<double>(acc.unit_active[u]) /
                                               static_cast<double>(acc.unit_positions[u])
                                         : 0;
    a.unit_active_ratio.push_back(r);
    if (acc.unit_active[u] == 0) {
      ++a.dead_units;
    } else if (r <= rare_threshold) {
      ++a.rare_units;
    }
  }
  a.remaining_width = a.units - a.dead_units - a.rare_units;
  return a;
}

}  // namespace

bool IsMeasured(const ReportNode& n) {
  return n.floating && n.traits.elementwise && n.traits.collapse == CollapseKind::kClampsRange &&
         n.output_shapes.size() == 1;
}

void RunCalibration(const Model& model, const LogicalGraph& lg, const CalibrationData& data,
                    double rare_threshold, const ProgressFn& progress, Report& report) {
  Calibration& cal = report.calibration;
  cal.requested = true;
  cal.random = data.random;
  cal.source = data.source;
  // The model exactly as written (-O0) on the reference interpreter: the
  // activations measured are those of the user's own nodes.
  session::SessionOptions so;
  so.device = "reference";
  so.opt_level = 0;
  auto created = session::Session::Create(model, so);
  auto skip = [&](const absl::Status& why) {
    cal.note = absl::StrCat(
        "calibration skipped, static analysis only: the reference executor "
        "cannot run this model (",
        why.message(), ")");
  };
  if (!created.ok()) return skip(created.status());
  session::Session& session = **created;
  // The session runs a copy: its nodes map to the model's in order.
  absl::flat_hash_map<const Node*, const Node*> original;
  const auto& copy_nodes = session.model().graph->nodes();
  const auto& model_nodes = model.graph->nodes();
  for (size_t i = 0; i < copy_nodes.size() && i < model_nodes.size(); ++i) {
    original[copy_nodes[i].get()] = model_nodes[i].get();
  }
  // Logical node per watched ONNX node, and the unit axis of each.
  absl::flat_hash_map<const Node*, int> watched;
  std::vector<int64_t> axis(lg.nodes.size(), -1);
  for (const ReportNode& n : lg.nodes) {
    if (!IsMeasured(n)) continue;
    watched[lg.members[n.index].back()] = n.index;
    const Shape& s = n.output_shapes[0];
    axis[n.index] = UnitAxis(lg, n.index, s.has_rank() ? s.rank() : 1);
  }
  std::vector<Accumulator> committed(lg.nodes.size());
  for (int64_t i = 0; i < data.samples; ++i) {
    if (progress) progress(absl::StrCat("calibration sample ", i + 1, "/", data.samples));
    auto feeds = data.feed(i);
    if (!feeds.ok()) {
      cal.note = absl::StrCat(
          i == 0 ? "calibration failed, static analysis only: " : "calibration stopped at sample ",
          i == 0 ? "" : absl::StrCat(i + 1, ": "), "no input data (", feeds.status().message(),
          ")");
      break;
    }
    if (i == 0) {
      auto prepared = session.Prepare(*feeds);
      if (!prepared.ok() && absl::IsUnimplemented(prepared.status())) return skip(prepared.status());
    }
    std::vector<Accumulator> pending = committed;  // a failed run must not count half
    exec::NodeObserver observe = [&](const Node& copy, const std::vector<RuntimeValue>& outs) {
      auto orig = original.find(&copy);
      if (orig == original.end()) return;
      auto it = watched.find(orig->second);
      if (it == watched.end() || outs.empty() || !outs[0].is_tensor()) return;
      Accumulate(outs[0].tensor, axis[it->second], pending[it->second]);
    };
    exec::RunOptions options;
    options.observer = &observe;
    auto result = session.Run(*feeds, options);
    if (!result.ok()) {
      cal.note = absl::StrCat(
          i == 0 ? "calibration failed, static analysis only: " : "calibration stopped at sample ",
          i == 0 ? "" : absl::StrCat(i + 1, ": "), result.status().message());
      break;
    }
    committed = std::move(pending);
    ++cal.samples;
  }
  cal.ran = cal.samples > 0;
  if (!cal.ran) return;
  for (const auto& [node, idx] : watched) {
    const Accumulator& acc = committed[idx];
    if (acc.samples == 0 || acc.inconsistent) continue;
    report.nodes[idx].activation = Summarize(acc, rare_threshold);
  }
}

}  // namespace aic::analysis

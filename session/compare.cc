// Model comparison through two sessions on one backend; see compare.h.
#include "session/compare.h"

#include <cmath>

#include "absl/strings/str_cat.h"
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

// Both models' sessions on `device`, at -O0, compiled for the first feeds.
struct SessionPair {
  std::unique_ptr<Session> a, b;
};

absl::StatusOr<SessionPair> OpenPair(const Model& a, const Model& b, const std::string& device, int threads,
                                     const Feeds& first) {
  SessionOptions so;
  so.device = device;
  so.threads = threads;
  so.opt_level = 0;
  SessionPair p;
  AIC_ASSIGN_OR_RETURN(p.a, Session::Create(a, so));
  AIC_ASSIGN_OR_RETURN(p.b, Session::Create(b, so));
  AIC_RETURN_IF_ERROR(p.a->Prepare(first).status());
  return p;
}

}  // namespace

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
  absl::StatusOr<SessionPair> pair = OpenPair(a, b, options.device, options.threads, feeds[0]);
  if (!pair.ok() && options.device != "reference") {
    report.fallback = absl::StrCat(options.device, ": ", pair.status().message());
    report.device = "reference";
    pair = OpenPair(a, b, "reference", options.threads, feeds[0]);
  }
  if (!pair.ok()) return absl::FailedPreconditionError(std::string(pair.status().message()));
  if (auto s = pair->b->Prepare(feeds[0]); !s.ok()) {
    // An op with no kernel anywhere cannot be checked; any other failure of
    // the model under test to compile is a mismatch, never a silent skip.
    if (absl::IsUnimplemented(s.status())) return absl::FailedPreconditionError(std::string(s.status().message()));
    for (auto& o : report.outputs) {
      o.ok = false;
      o.problem = std::string(s.status().message());
    }
    return report;
  }
  for (const auto& feed : feeds) {
    auto ra = pair->a->Run(feed);
    if (!ra.ok()) return absl::FailedPreconditionError(std::string(ra.status().message()));
    auto rb = pair->b->Run(feed);
    if (!rb.ok()) {
      for (auto& o : report.outputs) {
        o.ok = false;
        o.problem = std::string(rb.status().message());
      }
      ++report.runs;
      return report;
    }
    if (rb->size() != ra->size()) return absl::InternalError("output counts differ");
    for (size_t i = 0; i < ra->size(); ++i) {
      const RuntimeValue& x = (*ra)[i];
      const RuntimeValue& y = (*rb)[i];
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
          for (size_t k = 0; k < x.sequence.size(); ++k) Compare(x.sequence[k], y.sequence[k], rtol, atol, d);
        }
      }
    }
    ++report.runs;
  }
  return report;
}

}  // namespace aic::session

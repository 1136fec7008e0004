// Model comparison through the reference executor; see verify.h.
#include "rewrite/verify.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "exec/reference/executor.h"

namespace aic::rewrite {

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

}  // namespace

bool SameBits(const Tensor& a, const Tensor& b) { return a.BitwiseEquals(b); }

absl::StatusOr<CompareReport> CompareModels(const Model& a, const Model& b,
                                            const std::vector<std::map<std::string, RuntimeValue>>& feeds,
                                            double rtol, double atol) {
  ReferenceExecutor ea(a);
  ReferenceExecutor eb(b);
  if (absl::Status s = ea.CheckSupported(); !s.ok()) {
    return absl::FailedPreconditionError(std::string(s.message()));
  }
  if (absl::Status s = eb.CheckSupported(); !s.ok()) {
    // E.g. --target aic: fused ops the reference executor does not know.
    return absl::FailedPreconditionError(std::string(s.message()));
  }
  CompareReport report;
  for (const Value* v : a.graph->outputs()) {
    OutputDiff d;
    d.name = v->name();
    report.outputs.push_back(d);
  }
  for (const auto& feed : feeds) {
    auto ra = ea.Run(feed);
    if (!ra.ok()) return absl::FailedPreconditionError(std::string(ra.status().message()));
    auto rb = eb.Run(feed);
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

}  // namespace aic::rewrite

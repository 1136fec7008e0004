// bench --profile's table: the per-step wall times Run() collected, summed by
// (step kind, op type) so "where does the time go" reads at a glance, then
// the slowest single steps, which tell which shape of a kind is the costly one.
#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "exec/cpu/internal.h"

namespace aic::cpu {

namespace {

// The op type a step stands for: labels start with the node's op type
// ("MatMul 'fc1' + [...]"); reorders are labelled with the value they copy.
std::string OpTypeOf(const Step& step) {
  if (step.kind == "reorder") return "-";
  size_t space = step.label.find(' ');
  return step.label.substr(0, space);
}

}  // namespace

std::string FormatProfile(const Plan& plan, const RunProfile& profile, int top_steps) {
  if (profile.runs == 0 || profile.step_seconds.size() != plan.steps.size()) return "no profile\n";
  struct Row {
    double seconds = 0;
    int steps = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  double total = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = *plan.steps[i];
    Row& r = rows[{st.kind, OpTypeOf(st)}];
    r.seconds += profile.step_seconds[i];
    ++r.steps;
    total += profile.step_seconds[i];
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double per_run = 1e3 / profile.runs;
  std::string out = absl::StrFormat("profile over %d runs: %.4f ms/run in steps\n", profile.runs, total * per_run);
  absl::StrAppendFormat(&out, "  %-12s %-22s %6s %12s %7s\n", "kind", "op", "steps", "ms/run", "%");
  for (const auto& [key, r] : sorted) {
    absl::StrAppendFormat(&out, "  %-12s %-22s %6d %12.4f %6.1f%%\n", key.first, key.second, r.steps,
                          r.seconds * per_run, total > 0 ? 100 * r.seconds / total : 0.0);
  }
  std::vector<size_t> order(plan.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return profile.step_seconds[a] > profile.step_seconds[b]; });
  size_t top = std::min(order.size(), static_cast<size_t>(std::max(top_steps, 0)));
  if (top > 0) absl::StrAppendFormat(&out, "slowest steps:\n");
  for (size_t k = 0; k < top; ++k) {
    const Step& st = *plan.steps[order[k]];
    std::string dims;
    for (int w : st.writes) absl::StrAppend(&dims, DimsToString(plan.slots[w].dims));
    absl::StrAppendFormat(&out, "  %10.4f ms %5.1f%%  %-10s %s -> %s\n", profile.step_seconds[order[k]] * per_run,
                          total > 0 ? 100 * profile.step_seconds[order[k]] / total : 0.0, st.kind, st.label, dims);
  }
  return out;
}

}  // namespace aic::cpu

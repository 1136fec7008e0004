// The devices of the conformance runner (see devices.h).
#include "tests/conformance/devices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#ifdef AIC_HAVE_CUDA
#include "exec/cuda/plan.h"
#endif

namespace aic::conformance {

const std::vector<std::string>& KnownDevices() {
  static const auto* devices = new std::vector<std::string>{
      "reference", "cpu",
#ifdef AIC_HAVE_CUDA
      // The parent process never touches CUDA (each test runs in a forked
      // child, and CUDA does not survive a fork after initialization).
      "cuda",
#endif
  };
  return *devices;
}

bool IsKnownDevice(const std::string& device) {
  const auto& d = KnownDevices();
  return std::find(d.begin(), d.end(), device) != d.end();
}

namespace {

std::string Coverage(const cpu::PlanStats& st) {
  int fast = st.steps - st.fallback_steps - st.view_steps - st.reorder_steps;
  if (st.fallback_steps == 0) return fast > 0 ? "fast" : "folded";
  return fast > 0 ? "mixed" : "reference";
}

}  // namespace

absl::StatusOr<std::vector<RuntimeValue>> RunOnDevice(const std::string& device, const Model& model,
                                                      const std::map<std::string, RuntimeValue>& feeds,
                                                      std::string* coverage) {
  if (device == "reference") return ReferenceExecutor(model).Run(feeds);
  if (device == "cpu") {
    cpu::CpuOptions options;
    options.threads = 1;  // the runner forks one test at a time; tiny models run on one thread anyway
    cpu::CpuExecutor executor(model, options);
    auto outputs = executor.Run(feeds);
    if (outputs.ok() && coverage != nullptr) {
      auto plan = executor.PlanFor(feeds);
      if (plan.ok()) *coverage = Coverage(cpu::StatsOf(**plan));
    }
    return outputs;
  }
#ifdef AIC_HAVE_CUDA
  if (device == "cuda") return cuda::RunModel(model, feeds, coverage);
#endif
  return absl::InvalidArgumentError(absl::StrCat("unknown device '", device, "'"));
}

}  // namespace aic::conformance

// The devices of the conformance runner (see devices.h): whatever backends
// the session layer has, picked by name through its one factory.
#include "tests/conformance/devices.h"

#include <algorithm>

#include "session/session.h"

namespace aic::conformance {

const std::vector<std::string>& KnownDevices() {
  // The parent process never touches CUDA (each test runs in a forked child,
  // and CUDA does not survive a fork after initialization): registering the
  // backend only names it.
  static const auto* devices = new std::vector<std::string>(session::DeviceNames());
  return *devices;
}

bool IsKnownDevice(const std::string& device) {
  const auto& d = KnownDevices();
  return std::find(d.begin(), d.end(), device) != d.end();
}

namespace {

std::string Coverage(const exec::PlanSummary& plan) {
  if (plan.fallback_steps == 0) return plan.compute_steps > 0 ? "fast" : "folded";
  return plan.compute_steps > 0 ? "mixed" : "reference";
}

}  // namespace

absl::StatusOr<std::vector<RuntimeValue>> RunOnDevice(const std::string& device, const Model& model,
                                                      const std::map<std::string, RuntimeValue>& feeds,
                                                      std::string* coverage) {
  session::SessionOptions options;
  options.device = device;
  options.threads = 1;    // the runner forks one test at a time; tiny models run on one thread anyway
  options.opt_level = 0;  // the backend judged on the ops as the test gives them
  options.check_feeds = false;  // some suite models declare shapes their data does not have
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<session::Session> s, session::Session::Create(model, options));
  if (coverage != nullptr && device != "reference") {
    AIC_ASSIGN_OR_RETURN(exec::PlanSummary plan, s->Prepare(feeds));
    *coverage = Coverage(plan);
  }
  return s->Run(feeds);
}

}  // namespace aic::conformance

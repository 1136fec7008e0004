// ReferenceBackend(): ReferenceExecutor behind the executor interface.
#include "exec/reference/backend.h"

#include "exec/reference/executor.h"
#include "ops/fused/standard_aliases.h"
#include "ops/registry.h"

namespace aic {

namespace {

class ReferenceBackendExecutor : public exec::Executor {
 public:
  explicit ReferenceBackendExecutor(const Model& model) : executor_(model) {}

  absl::StatusOr<exec::PlanSummary> Prepare(const exec::Feeds& feeds) override {
    AIC_RETURN_IF_ERROR(executor_.CheckSupported());
    exec::PlanSummary s;
    s.steps = static_cast<int>(executor_.model().graph->num_nodes());
    s.fallback_steps = s.steps;
    return s;
  }

  absl::StatusOr<std::vector<RuntimeValue>> Run(const exec::Feeds& feeds, const exec::RunOptions& options) override {
    ReferenceRunOptions run;
    if (options.observer != nullptr) run.on_node_done = *options.observer;
    run.observe_subgraphs = options.observe_subgraphs;
    return executor_.Run(feeds, run);
  }

 private:
  ReferenceExecutor executor_;
};

}  // namespace

exec::Backend ReferenceBackend() {
  exec::Backend b;
  b.name = "reference";
  b.description = "the reference interpreter (the oracle; runs the model as written unless -O is given)";
  for (const OpDef* def : OpRegistry::Global().All()) {
    if (def->domain == kAicDomain && def->kernel) b.aic_ops.insert(def->op_type);
  }
  b.default_opt_level = 0;
  b.create = [](const Model& model, const exec::BackendOptions&) -> absl::StatusOr<std::unique_ptr<exec::Executor>> {
    return std::make_unique<ReferenceBackendExecutor>(model);
  };
  return b;
}

}  // namespace aic

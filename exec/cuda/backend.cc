// CudaBackend(): CudaExecutor behind the executor interface.
#include "exec/cuda/backend.h"

#include "exec/cuda/lowering.h"
#include "exec/cuda/plan.h"

namespace aic::cuda {

namespace {

class CudaBackendExecutor : public exec::Executor {
 public:
  explicit CudaBackendExecutor(const Model& model) : executor_(model) {}

  absl::StatusOr<exec::PlanSummary> Prepare(const exec::Feeds& feeds) override {
    AIC_ASSIGN_OR_RETURN(Plan* plan, executor_.PlanFor(feeds));
    exec::PlanSummary s = exec::CommonSummary(StatsOf(*plan), DescribePlan(*plan));
    s.compute_steps = s.steps - s.fallback_steps;  // views emit no step here
    return s;
  }

  absl::StatusOr<std::vector<RuntimeValue>> Run(const exec::Feeds& feeds, const exec::RunOptions& options) override {
    AIC_RETURN_IF_ERROR(exec::RequireNoObserver(options));
    return executor_.Run(feeds);
  }

 private:
  CudaExecutor executor_;
};

}  // namespace

exec::Backend CudaBackend() {
  exec::Backend b;
  b.name = "cuda";
  b.description = "the CUDA executor (cuBLASLt with fused epilogues, own kernels, CUDA Graph replay)";
  b.aic_ops = LoweredAicOps();
  b.default_opt_level = 2;
  b.create = [](const Model& model, const exec::BackendOptions&) -> absl::StatusOr<std::unique_ptr<exec::Executor>> {
    return std::make_unique<CudaBackendExecutor>(model);
  };
  return b;
}

}  // namespace aic::cuda

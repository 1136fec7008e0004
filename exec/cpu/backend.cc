// CpuBackend(): CpuExecutor behind the executor interface, with per-signature
// profiles for `bench --profile`.
#include "exec/cpu/backend.h"

#include "exec/common/specialize.h"
#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/lowering.h"

namespace aic::cpu {

namespace {

class CpuBackendExecutor : public exec::Executor {
 public:
  CpuBackendExecutor(const Model& model, const CpuOptions& options) : executor_(model, options) {}

  absl::StatusOr<exec::PlanSummary> Prepare(const exec::Feeds& feeds) override {
    AIC_ASSIGN_OR_RETURN(Plan* plan, executor_.PlanFor(feeds));
    const PlanStats& st = StatsOf(*plan);
    exec::PlanSummary s = exec::CommonSummary(st, DescribePlan(*plan));
    s.compute_steps = st.dnnl_steps + st.native_steps;
    s.activation_bytes = st.activation_bytes;
    s.macs = st.macs;
    s.threads = ThreadsOf(*plan);
    s.slow_impl_steps = st.slow_impl_steps;
    s.slow_impls = st.slow_impls;
    return s;
  }

  absl::StatusOr<std::vector<RuntimeValue>> Run(const exec::Feeds& feeds, const exec::RunOptions& options) override {
    AIC_RETURN_IF_ERROR(exec::RequireNoObserver(options));
    AIC_ASSIGN_OR_RETURN(Plan* plan, executor_.PlanFor(feeds));
    return cpu::Run(*plan, feeds, options.profile ? &profiles_[exec::ShapeSignature(feeds, nullptr)] : nullptr);
  }

  std::string ProfileReport(const exec::Feeds& feeds) const override {
    std::string key = exec::ShapeSignature(feeds, nullptr);
    auto it = profiles_.find(key);
    auto plan = const_cast<CpuExecutor&>(executor_).PlanFor(feeds);
    if (it == profiles_.end() || !plan.ok()) return "";
    return FormatProfile(**plan, it->second);
  }

 private:
  CpuExecutor executor_;
  std::map<std::string, RunProfile> profiles_;
};

}  // namespace

exec::Backend CpuBackend(const CpuOptions& options) {
  exec::Backend b;
  b.name = "cpu";
  b.description = "the fast CPU executor (oneDNN in blocked layouts, own vectorized kernels, one memory plan)";
  b.aic_ops = LoweredAicOps();  // what its lowering table covers
  // int8 through oneDNN (ops_conv.cc, ops_native_integer.cc) where its u8·s8
  // products are exact, through our pair kernels (kernels/pair_gemm.h) on
  // other AVX2 CPUs; elsewhere QDQ models keep computing in float.
  if (ExactInt8Products() || kernels::PairGemmAvailable()) b.qoperator_ops = {"QLinearConv", "QLinearMatMul"};
  b.default_opt_level = 2;
  b.create = [options](const Model& model,
                       const exec::BackendOptions& backend_options) -> absl::StatusOr<std::unique_ptr<exec::Executor>> {
    CpuOptions o = options;
    o.threads = backend_options.threads;
    return std::make_unique<CpuBackendExecutor>(model, o);
  };
  return b;
}

}  // namespace aic::cpu

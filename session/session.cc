// Session::Create / CheckFeeds / Run, and the backend registry.
#include "session/session.h"

#include <deque>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/backend.h"
#include "exec/reference/backend.h"
#include "graph/clone.h"

namespace aic::session {

namespace {

struct Registry {
  std::mutex mu;
  std::deque<exec::Backend> backends;  // push_back keeps FindBackend's pointers valid
};

// Built-in backends first; the CUDA companion adds its own (RegisterBackend).
Registry& Backends() {
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->backends.push_back(ReferenceBackend());
    reg->backends.push_back(cpu::CpuBackend());
    return reg;
  }();
  return *r;
}

std::string TypeText(const TypeInfo& t) { return t.known() ? t.ToString() : "?"; }

std::string GivenText(const RuntimeValue& v) {
  if (v.is_tensor()) return TypeInfo::Tensor(v.tensor.dtype(), Shape::FromValues(v.tensor.dims())).ToString();
  return v.is_sequence() ? "a sequence" : "an empty optional";
}

// Whether `given` fits the declared tensor type: dtype, rank and every fixed dim.
bool TensorFits(const TypeInfo& declared, const Tensor& given) {
  if (declared.dtype != DType::kUndefined && declared.dtype != given.dtype()) return false;
  if (!declared.shape.has_rank()) return true;
  const std::vector<Dim>& dims = declared.shape.dims();
  if (dims.size() != given.dims().size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_value() && dims[i].value() != given.dims()[i]) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> DeviceNames() {
  Registry& r = Backends();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const exec::Backend& b : r.backends) names.push_back(b.name);
  return names;
}

const exec::Backend* FindBackend(const std::string& name) {
  Registry& r = Backends();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const exec::Backend& b : r.backends) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

void RegisterBackend(exec::Backend backend) {
  Registry& r = Backends();
  std::lock_guard<std::mutex> lock(r.mu);
  for (exec::Backend& b : r.backends) {
    if (b.name == backend.name) {
      b = std::move(backend);
      return;
    }
  }
  r.backends.push_back(std::move(backend));
}

rewrite::OptimizeOptions OptimizeOptionsFor(const exec::Backend& backend, int level) {
  rewrite::OptimizeOptions o;
  o.level = level;
  o.aic_ops = backend.aic_ops;
  o.qoperator_ops = backend.qoperator_ops;
  o.fold_dequantize = true;  // the backends compute in float
  o.fold_large_dequantized_in_rewriter = false;  // the backends fold them, one at a time
  return o;
}

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Create(const Model& model, const SessionOptions& options) {
  return Create(CloneModel(model), options);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::unique_ptr<Model> model, const SessionOptions& options) {
  const exec::Backend* backend = FindBackend(options.device);
  if (backend == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("device '", options.device, "' is not available (this build has: ",
                                                   absl::StrJoin(DeviceNames(), ", "), ")"));
  }
  std::unique_ptr<Session> s(new Session());
  s->backend_ = *backend;
  s->check_feeds_ = options.check_feeds;
  // The contract with the caller is what the file declares, before anything rewrites it.
  for (const Value* v : model->graph->inputs()) {
    if (v->is_initializer()) {
      s->overridable_.push_back({v->name(), v->type()});
    } else {
      s->inputs_.push_back({v->name(), v->type()});
    }
  }
  for (const Value* v : model->graph->outputs()) s->outputs_.push_back({v->name(), v->type()});

  s->opt_level_ = options.opt_level.value_or(backend->default_opt_level);
  if (s->opt_level_ > 0) {
    // Optimize rewrites the graph only on success; a failure leaves the model
    // as loaded, which runs correctly, only slower.
    auto stats = rewrite::Optimize(*model, OptimizeOptionsFor(*backend, s->opt_level_));
    if (stats.ok()) {
      s->optimize_stats_ = *stats;
    } else {
      s->optimize_error_ = std::string(stats.status().message());
    }
  }
  s->model_ = std::move(model);
  exec::BackendOptions bo;
  bo.threads = options.threads;
  AIC_ASSIGN_OR_RETURN(s->executor_, backend->create(*s->model_, bo));
  return s;
}

absl::Status Session::CheckFeeds(const Feeds& feeds) const {
  auto declared = [&](const std::string& name) -> const IoInfo* {
    for (const auto* list : {&inputs_, &overridable_}) {
      for (const IoInfo& in : *list) {
        if (in.name == name) return &in;
      }
    }
    return nullptr;
  };
  for (const IoInfo& in : inputs_) {
    if (feeds.find(in.name) == feeds.end()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' (", TypeText(in.type), ") is not fed"));
    }
  }
  for (const auto& [name, v] : feeds) {
    const IoInfo* in = declared(name);
    if (in == nullptr) {
      std::vector<std::string> names;
      for (const IoInfo& i : inputs_) names.push_back(i.name);
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not an input of the model (its inputs: ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    bool fits = true;
    switch (in->type.kind) {
      case TypeInfo::Kind::kTensor:
        fits = v.is_tensor() && TensorFits(in->type, v.tensor);
        break;
      case TypeInfo::Kind::kSequence:
        fits = v.is_sequence();
        break;
      case TypeInfo::Kind::kOptional:
        fits = v.is_none() || !in->type.element || (in->type.element->is_tensor() ? v.is_tensor() : v.is_sequence());
        break;
      default:
        break;  // untyped, or a map: whatever the graph makes of it
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "': expected ", TypeText(in->type), ", got ",
                                                     GivenText(v)));
    }
  }
  return absl::OkStatus();
}

std::string Session::Describe() const {
  std::string out = absl::StrCat(backend_.name, ", -O", opt_level_, ": ");
  if (opt_level_ == 0) return absl::StrCat(out, model_->graph->num_nodes(), " nodes as loaded");
  if (!optimize_error_.empty()) return absl::StrCat(out, "the graph as loaded (the rewriter failed: ", optimize_error_, ")");
  absl::StrAppend(&out, optimize_stats_.nodes_before, " -> ", optimize_stats_.nodes_after, " nodes; rules:");
  if (optimize_stats_.rule_counts.empty()) absl::StrAppend(&out, " none");
  bool first = true;
  for (const auto& [rule, count] : optimize_stats_.rule_counts) {
    absl::StrAppend(&out, first ? " " : ", ", rule, " ", count);
    first = false;
  }
  return out;
}

absl::StatusOr<exec::PlanSummary> Session::Prepare(const Feeds& feeds) {
  if (check_feeds_) AIC_RETURN_IF_ERROR(CheckFeeds(feeds));
  return executor_->Prepare(feeds);
}

absl::StatusOr<std::vector<RuntimeValue>> Session::Run(const Feeds& feeds, const exec::RunOptions& options) {
  if (check_feeds_) AIC_RETURN_IF_ERROR(CheckFeeds(feeds));
  return executor_->Run(feeds, options);
}

}  // namespace aic::session

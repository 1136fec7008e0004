// One compiled plan per input-shape signature, for every compiling backend:
// the first run with a new signature compiles, later ones reuse the plan.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/common/specialize.h"
#include "graph/runtime_value.h"

namespace aic::exec {

template <typename Plan>
class PlanCache {
 public:
  using Shapes = std::map<std::string, std::vector<int64_t>>;
  using CompileFn = std::function<absl::StatusOr<std::unique_ptr<Plan>>(const Shapes&)>;

  explicit PlanCache(CompileFn compile) : compile_(std::move(compile)) {}

  absl::StatusOr<Plan*> For(const std::map<std::string, RuntimeValue>& feeds) {
    Shapes shapes;
    std::string key = ShapeSignature(feeds, &shapes);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
    absl::StatusOr<std::unique_ptr<Plan>> plan = compile_(shapes);
    if (!plan.ok()) return plan.status();
    Plan* raw = plan->get();
    plans_[key] = std::move(*plan);
    return raw;
  }

 private:
  CompileFn compile_;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace aic::exec

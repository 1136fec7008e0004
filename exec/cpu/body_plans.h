// Control-flow bodies as nested compiled plans. A fallback step running If,
// Loop or Scan hands its reference kernel a runner that compiles each body,
// once per signature (the dtypes and dims of its inputs and of the outer
// values it reads), into a Plan of its own: the body as a standalone graph
// whose outer reads become graph inputs, or initializers where the outer
// value is a constant of the enclosing plan (so weights read from the outer
// scope are packed like any other). Anything a plan cannot take (a sequence
// or optional input, a body that fails to compile, too many signatures)
// runs on the reference interpreter instead, as the reference executor
// would run it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/internal.h"
#include "ops/kernel_context.h"

namespace aic::cpu {

// The compiled bodies of one node; lives as long as the step that runs it.
class BodyPlans {
 public:
  // A value the bodies read from the enclosing graph: its current value and
  // whether it is a constant of the enclosing plan (fixed for its lifetime).
  struct Outer {
    const Value* value;
    RuntimeValue current;
    bool constant;
  };
  // A runner for one execution of the node's kernel.
  std::unique_ptr<SubgraphRunner> Runner(const Plan& plan, std::vector<Outer> outer);

  // How many bodies ran as compiled plans / on the reference interpreter (for tests).
  int compiled_runs() const { return compiled_runs_; }
  int reference_runs() const { return reference_runs_; }

 private:
  friend class CompiledBodyRunner;
  // The plan for `body` with these inputs, compiling it on first use; null
  // when the body cannot run as a plan.
  Plan* PlanFor(const Plan& enclosing, const Graph& body, const std::vector<RuntimeValue>& inputs,
                const std::vector<Outer>& outer);
  // Forgets a plan that failed to run (its body runs on the reference interpreter from then on).
  void Drop(const Graph& body, const Plan& plan);

  std::map<std::pair<const Graph*, std::string>, std::unique_ptr<Plan>> plans_;  // null: not compilable
  std::map<const Graph*, int> signatures_;
  int compiled_runs_ = 0;
  int reference_runs_ = 0;
};

}  // namespace aic::cpu

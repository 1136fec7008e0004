// Steps that do not call oneDNN: a node run by its reference kernel (any op
// the fast path does not cover, any dtype, calls of model-local functions, control flow: If/Loop/Scan bodies
// run as nested plans or by the reference interpreter, see body_plans.h, with
// the outer values they read taken from their slots), and a zero-copy view of
// a value whose bytes are not in the arena (a feed or a reference kernel's
// result).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "exec/cpu/body_plans.h"
#include "exec/cpu/fast_fallback.h"
#include "exec/cpu/internal.h"
#include "ops/op_def.h"

namespace aic::cpu {

class FallbackStep : public Step {
 public:
  // `def` null: `node` calls a model-local function. `outer`: for a node with
  // subgraphs, each value its bodies read from the enclosing graph and the
  // plain slot holding it.
  FallbackStep(const Node* node, int64_t opset, const OpDef* def, std::vector<int> inputs,
               std::vector<int> outputs, std::vector<std::pair<const Value*, int>> outer = {});
  absl::Status Execute(Plan& plan) override;
  // Input i is an f32 tensor holding values of half type narrow[i] (kUndefined:
  // as it is): the kernel gets it in that type, and a half result comes back
  // widened to f32 (the plan of a widened half model, widen_half.h).
  void RunInHalf(std::vector<DType> narrow) { narrow_ = std::move(narrow); }
  // Runs `fast` (fast_fallback.h) each time, the reference kernel only where
  // it declines.
  void RunFast(const FastFallback* fast) {
    fast_ = fast;
    kind = fast->kind;
  }
  // The node's compiled bodies; null until a node with subgraphs first ran.
  const BodyPlans* bodies() const { return bodies_.get(); }

 private:
  const Node* node_;
  int64_t opset_;
  const OpDef* def_;
  std::vector<int> inputs_;   // -1 for an omitted optional input
  std::vector<int> outputs_;  // -1 for an unrequested output
  std::vector<std::pair<const Value*, int>> outer_;
  std::unique_ptr<BodyPlans> bodies_;
  std::vector<RuntimeValue> values_;
  std::vector<DType> narrow_;
  const FastFallback* fast_ = nullptr;
};

class ViewStep : public Step {
 public:
  ViewStep(int src, int dst) : src_(src), dst_(dst) {
    reads = {src};
    writes = {dst};
    kind = "view";
  }
  absl::Status Execute(Plan& plan) override;

 private:
  int src_, dst_;
};

}  // namespace aic::cpu

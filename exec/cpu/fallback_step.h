// Steps that do not call oneDNN: a node run by its reference kernel (any op
// the fast path does not cover, any dtype), and a zero-copy view of a value
// whose bytes are not in the arena (a feed or a reference kernel's result).
#pragma once

#include "exec/cpu/internal.h"
#include "ops/op_def.h"

namespace aic::cpu {

class FallbackStep : public Step {
 public:
  FallbackStep(const Node* node, int64_t opset, const OpDef* def, std::vector<int> inputs,
               std::vector<int> outputs);
  absl::Status Execute(Plan& plan) override;

 private:
  const Node* node_;
  int64_t opset_;
  const OpDef* def_;
  std::vector<int> inputs_;   // -1 for an omitted optional input
  std::vector<int> outputs_;  // -1 for an unrequested output
  std::vector<RuntimeValue> values_;
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

// A rewrite rule: one declaration each, as data (name, `lhs -> rhs`, the op at
// the root of the lhs, exactness class, the minimum opset of what it emits)
// plus a match function over one e-node. A rule never mutates the e-graph
// except by adding e-nodes; it returns the e-class equal to the matched one,
// and the driver does the union (so the driver knows what changed).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rewrite/egraph/egraph.h"
#include "rewrite/optimize.h"

namespace aic::rewrite {

enum class Exactness {
  kExact,          // bitwise equal results
  kReassociating,  // equal up to floating-point rounding
  kApproximate,    // changes results beyond rounding: never on by default
};
const char* ExactnessName(Exactness e);

struct RuleContext {
  EGraph& g;
  const OptimizeOptions& options;
  std::string declined;  // set by Decline(), read by --explain
  // Further equalities found by a rule (e.g. one per output of a tuple).
  std::vector<std::pair<ClassId, ClassId>> extra_unions;

  ClassId Decline(std::string why) {
    declined = std::move(why);
    return kNoClass;
  }
};

using RuleFn = ClassId (*)(RuleContext& ctx, ClassId cls, const ENode& node);

struct Rule {
  const char* name;      // verb phrase: "compose_transposes"
  const char* rewrite;   // "Transpose(Transpose(x, p1), p2) -> Transpose(x, p1∘p2)"
  const char* root;      // op_type at the root of the lhs; "*" for any op
  Exactness exactness;
  int min_opset;         // of the ops it emits
  RuleFn apply;
  // The op of our own domain "ai.aic" the rule emits, if any. With aic_only,
  // the rule runs only for targets that run that op (FusedLinearReLU);
  // without, the rule emits the standard op from min_opset on and, below it,
  // the op's ai.aic alias for targets that run it (ops/fused/standard_aliases.h).
  const char* aic_op = nullptr;
  bool aic_only = false;
  int level = 1;          // lowest -O level that runs it
  // A standard QOperator op the rule emits (QLinearConv): the rule runs only
  // for targets that run that op in int8 (OptimizeOptions::qoperator_ops).
  const char* qoperator_op = nullptr;
};

// Every rule, in the order the driver tries them.
const std::vector<Rule>& AllRules();

// Rule families (one file each under rewrite/rules/).
void AddFoldingRules(std::vector<Rule>& rules);
void AddNoopRules(std::vector<Rule>& rules);
void AddShapeRules(std::vector<Rule>& rules);
void AddFusionRules(std::vector<Rule>& rules);
void AddPatternRules(std::vector<Rule>& rules);
void AddActivationRules(std::vector<Rule>& rules);
void AddLinearRules(std::vector<Rule>& rules);
void AddLayerNormRules(std::vector<Rule>& rules);
void AddGroupNormRules(std::vector<Rule>& rules);
void AddAttentionRules(std::vector<Rule>& rules);
void AddRotaryRules(std::vector<Rule>& rules);
void AddQuantizedRules(std::vector<Rule>& rules);
void AddConvTapsRules(std::vector<Rule>& rules);
void AddConvMergeRules(std::vector<Rule>& rules);

}  // namespace aic::rewrite

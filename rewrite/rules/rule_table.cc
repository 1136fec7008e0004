// The rule table: every family's rules, in the order the driver tries them.
#include "rewrite/rules/rule.h"

namespace aic::rewrite {

const char* ExactnessName(Exactness e) {
  switch (e) {
    case Exactness::kExact: return "exact";
    case Exactness::kReassociating: return "reassociating";
    case Exactness::kApproximate: return "approximate";
  }
  return "?";
}

const std::vector<Rule>& AllRules() {
  static const std::vector<Rule>* rules = [] {
    auto* r = new std::vector<Rule>;
    AddFoldingRules(*r);
    AddNoopRules(*r);
    AddShapeRules(*r);
    AddFusionRules(*r);
    AddConvTapsRules(*r);
    AddConvMergeRules(*r);
    AddPatternRules(*r);
    AddActivationRules(*r);
    AddLinearRules(*r);
    AddLayerNormRules(*r);
    AddGroupNormRules(*r);
    AddAttentionRules(*r);
    AddRotaryRules(*r);
    AddQuantizedRules(*r);
    return r;
  }();
  return *rules;
}

}  // namespace aic::rewrite

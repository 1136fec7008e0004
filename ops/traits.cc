#include "ops/traits.h"

namespace aic {

std::vector<std::string> Traits::PropertyWords() const {
  std::vector<std::string> words;
  switch (linearity) {
    case Linearity::kLinear:
    case Linearity::kAffine: words.push_back("linear"); break;
    case Linearity::kNonlinear: words.push_back("nonlinear"); break;
    case Linearity::kUnknown: break;
  }
  switch (invertibility) {
    case Invertibility::kInvertible: words.push_back("invertible"); break;
    case Invertibility::kIrreversible: words.push_back("irreversible"); break;
    default: break;
  }
  if (collapse_producing()) words.push_back("collapse-producing");
  if (trainable) words.push_back("trainable");
  return words;
}

const char* CollapseKindName(CollapseKind k) {
  switch (k) {
    case CollapseKind::kNone: return "none";
    case CollapseKind::kClampsRange: return "clamps-range";
    case CollapseKind::kDropsPaths: return "drops-paths";
    case CollapseKind::kReduces: return "reduces";
    case CollapseKind::kSelects: return "selects";
    case CollapseKind::kQuantizes: return "quantizes";
    case CollapseKind::kProjects: return "projects";
    case CollapseKind::kSaturates: return "saturates";
  }
  return "none";
}

const char* RepresentationEffectName(RepresentationEffect e) {
  switch (e) {
    case RepresentationEffect::kUnknown: return "unknown";
    case RepresentationEffect::kExpands: return "expands";
    case RepresentationEffect::kPreserves: return "preserves";
    case RepresentationEffect::kRestricts: return "restricts";
  }
  return "unknown";
}

}  // namespace aic

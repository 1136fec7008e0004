// The seed's operator metadata: what an op does to the information flowing
// through it. Traits are computed from the node and its inferred shapes (a
// Linear 10→20 expands, 20→5 restricts), never fixed strings per op type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aic {

enum class Linearity : uint8_t {
  kUnknown,
  kLinear,     // f(ax + by) = a f(x) + b f(y) in its data input(s)
  kAffine,     // linear plus a constant offset (Linear with bias); reported as "linear"
  kNonlinear,
};

enum class Invertibility : uint8_t {
  kUnknown,
  kInvertible,              // a bijection on its domain (Exp, Transpose, Reshape)
  kInvertibleIfFullRank,    // a square Linear whose weight is full rank
  kIrreversible,            // distinct inputs can give equal outputs
};

// How an op maps distinct inputs onto the same output, if it does.
enum class CollapseKind : uint8_t {
  kNone,
  kClampsRange,     // ReLU: the negative half goes to 0; Clip: both tails to the bounds
  kDropsPaths,      // Dropout in training: random units removed
  kReduces,         // reductions and pooling: many values summarised by one
  kSelects,         // Slice/Gather/MaxPool: some inputs are discarded
  kQuantizes,       // Floor/Round/Sign/Cast to a narrower type: a range goes to one value
  kProjects,        // Linear onto fewer dims: reported as a restricting effect, not collapse
  kSaturates,       // Sigmoid/Tanh: injective, but flattens tails to within float precision
};

enum class RepresentationEffect : uint8_t { kUnknown, kExpands, kPreserves, kRestricts };

struct Traits {
  std::string semantic_name;  // "Linear", "ReLU", "Bias", "Softmax": what the user sees
  std::string meaning;        // "y = x·Wᵀ + b"
  Linearity linearity = Linearity::kUnknown;
  Invertibility invertibility = Invertibility::kUnknown;
  CollapseKind collapse = CollapseKind::kNone;
  std::string collapse_how;   // "negative half mapped to 0"
  RepresentationEffect effect = RepresentationEffect::kUnknown;
  std::string effect_detail;  // "10 → 20 (rank ≤ 10)"
  bool trainable = false;     // has learned parameters
  bool elementwise = false;
  std::vector<std::string> fuses_with;  // op types it can be fused with
  std::string removable_when;           // "ratio == 0 or inference mode"
  std::string safe_transform_when;      // "fold into Conv only in inference mode, constant params"

  // True when the op maps distinct inputs onto equal outputs by its nature
  // (ReLU, pooling, dropout...). A Linear 20→5 is not counted: the seed reports
  // it as a contraction (effect kRestricts) of a "linear, trainable" node.
  bool collapse_producing() const {
    return collapse != CollapseKind::kNone && collapse != CollapseKind::kSaturates &&
           collapse != CollapseKind::kProjects;
  }
  // The seed's "Properties:" words, e.g. {"linear", "trainable"} or
  // {"nonlinear", "irreversible", "collapse-producing"}.
  std::vector<std::string> PropertyWords() const;
};

const char* CollapseKindName(CollapseKind k);
const char* RepresentationEffectName(RepresentationEffect e);

// Counts an op's cost from its shapes. MACs count multiply-accumulates; FLOPs
// count every floating-point operation (2·MACs for multiply-adds, plus
// elementwise work). Unknown when shapes are not static.
struct Cost {
  bool known = false;
  int64_t params = 0;        // elements of constant trainable inputs (weights, biases)
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t bytes_read = 0;    // all inputs, weights included
  int64_t bytes_written = 0;
};

}  // namespace aic

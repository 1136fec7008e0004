// Which stored tensors are a model's learned parameters, as the report
// counts them (docs/report-schema.md, "parameters"): the tensors behind a
// trainable op's constant operands (ConstantValues::Origins), less index
// tensors and the traced constants of torch.onnx, and a tied weight the
// exporter stored twice counted once.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/constants.h"
#include "graph/model.h"

namespace aic::analysis {

// Whether stored tensor `origin` (value t) behind a constant operand is a
// learned parameter.
bool IsLearnedOrigin(const Model& model, const Value* origin, const Tensor& t);

struct TiedCopy {
  const Value* original = nullptr;
  const Value* copy = nullptr;
  bool transposed = false;
  int64_t elements = 0;
};

// Copies among `counted` (the parameters in the order the graph first reads
// them; the first of two equal tensors is the original): rank-2 float
// tensors of at least 4096 elements, not all equal, holding the same values
// or one the transpose of the other.
std::vector<TiedCopy> TiedCopies(const std::vector<const Value*>& counted,
                                 const ConstantValues& constants);

}  // namespace aic::analysis

#include "exec/cuda/epilogue.h"
#include "ops/fused/standard_aliases.h"

namespace aic::cuda {

Epilogue ComposeEpilogue(bool bias, Activation act) {
  switch (act) {
    case Activation::kRelu:
      return bias ? Epilogue::kReluBias : Epilogue::kRelu;
    case Activation::kGeluTanh:
      return bias ? Epilogue::kGeluBias : Epilogue::kGelu;
    case Activation::kNone:
      break;
  }
  return bias ? Epilogue::kBias : Epilogue::kDefault;
}

const char* EpilogueName(Epilogue e) {
  switch (e) {
    case Epilogue::kDefault:
      return "DEFAULT";
    case Epilogue::kBias:
      return "BIAS";
    case Epilogue::kRelu:
      return "RELU";
    case Epilogue::kReluBias:
      return "RELU_BIAS";
    case Epilogue::kGelu:
      return "GELU";
    case Epilogue::kGeluBias:
      return "GELU_BIAS";
  }
  return "?";
}

std::optional<Activation> EpilogueActivation(const Node& n) {
  if (!HasStandardSemantics(n) || n.num_inputs() != 1) return std::nullopt;
  if (n.op_type == "Relu") return Activation::kRelu;
  // Only the tanh approximation matches cuBLASLt's GELU; the default "none" is erf.
  if (n.op_type == "Gelu" && n.GetString("approximate", "none") == "tanh") return Activation::kGeluTanh;
  return std::nullopt;
}

}  // namespace aic::cuda

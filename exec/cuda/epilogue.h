// Which cuBLASLt epilogue a GEMM gets. The activation that may follow a
// GEMM inside the call is ReLU or GELU with approximate="tanh" only:
// cuBLASLt's GELU epilogue is the tanh approximation, while ONNX's Gelu
// default (and the Div/Erf/Add/Mul/Mul spelling exporters emit) is the exact
// erf form, which therefore stays a separate elementwise program.
#pragma once

#include <optional>

#include "graph/graph.h"

namespace aic::cuda {

enum class Activation { kNone, kRelu, kGeluTanh };
enum class Epilogue { kDefault, kBias, kRelu, kReluBias, kGelu, kGeluBias };

Epilogue ComposeEpilogue(bool bias, Activation act);
const char* EpilogueName(Epilogue e);

// The activation node `n` applies if it can run as a GEMM epilogue; nullopt otherwise.
std::optional<Activation> EpilogueActivation(const Node& n);

}  // namespace aic::cuda

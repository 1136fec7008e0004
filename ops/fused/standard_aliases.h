// Standard ops that are newer than many models' opsets (Gelu is opset 20,
// LayerNormalization 17, HardSwish 14, Swish 24, RMSNormalization 23,
// Attention 23, RotaryEmbedding 23), offered to our own executors under
// domain "ai.aic" with exactly the standard op's semantics at the version
// named here. The rewriter recognises an exporter's decomposed GELU in an
// opset-13 model; for `--target onnx` it must leave it decomposed (opset 13 has
// no Gelu), but a session compiling for a backend may emit `ai.aic::Gelu`, and
// the backend lowers it exactly as it lowers the standard op.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace aic {

inline constexpr char kAicDomain[] = "ai.aic";

// The standard opset whose definition `ai.aic::<op_type>` carries, when
// op_type is one of the aliased standard ops.
std::optional<int> AicAliasVersion(std::string_view op_type);

// The op types that have an ai.aic alias.
std::vector<std::string_view> AicAliasOpTypes();

// The node is ai.aic's alias of a standard op.
bool IsAicAlias(const Node& n);

// The node has standard ONNX semantics for its op_type: default domain, or
// an ai.aic alias. Lowerings dispatch on op_type when this holds.
inline bool HasStandardSemantics(const Node& n) { return n.domain.empty() || IsAicAlias(n); }

}  // namespace aic

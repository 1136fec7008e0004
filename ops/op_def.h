// OpDef: everything aic-onnx knows about one operator, in one place: shape and
// dtype inference, the seed's semantic traits, the cost formula and the
// reference kernel. Every hook is optional with a neutral default (tract's
// way), so an op implements only what it knows. An op with no OpDef at all
// stays in the graph, opaque.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ops/kernel_context.h"
#include "ops/op_context.h"
#include "ops/traits.h"

namespace aic {

using InferFn = std::function<absl::Status(OpContext&)>;
using TraitsFn = std::function<Traits(const OpContext&)>;
using CostFn = std::function<Cost(const OpContext&)>;
using KernelFn = std::function<absl::Status(KernelContext&)>;

struct OpDef {
  std::string domain;   // "" for the default ONNX domain
  std::string op_type;
  int since_version = 1;  // first opset this definition covers (up to the next one)

  InferFn infer;    // sets output types; default: outputs stay unknown
  TraitsFn traits;  // default: all unknown, semantic_name = op_type
  CostFn cost;      // default: bytes only, computed from static shapes
  KernelFn kernel;  // reference kernel; default: none (the executor reports Unimplemented)

  // Training-mode or nondeterministic (Random*) ops: never folded, merged or matched.
  bool nondeterministic = false;
};

}  // namespace aic

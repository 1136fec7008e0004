// Building blocks for Cost formulas.
#pragma once

#include <cstdint>

#include "ops/op_context.h"
#include "ops/traits.h"

namespace aic {

// Elements of a static tensor type, or -1 when unknown.
int64_t StaticElements(const TypeInfo& t);

// Bytes read (all inputs) and written (all outputs) from static types; params
// counts the elements of inputs that are constants (initializers) at the given
// input indices. known=false when any input or output shape is not static.
Cost BytesOnlyCost(const OpContext& ctx, std::initializer_list<size_t> param_inputs = {});

// Elementwise op: bytes as above, flops = output elements × flops_per_element.
Cost ElementwiseCost(const OpContext& ctx, int64_t flops_per_element);

}  // namespace aic

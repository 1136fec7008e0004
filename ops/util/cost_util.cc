#include "ops/util/cost_util.h"

namespace aic {

int64_t StaticElements(const TypeInfo& t) {
  if (!t.is_tensor()) return -1;
  auto n = t.shape.NumElements();
  return n ? *n : -1;
}

Cost BytesOnlyCost(const OpContext& ctx, std::initializer_list<size_t> param_inputs) {
  Cost c;
  c.known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    int64_t n = StaticElements(ctx.input_type(i));
    if (n < 0) {
      c.known = false;
      continue;
    }
    c.bytes_read += static_cast<int64_t>(ByteSizeOf(ctx.input_dtype(i), n));
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TypeInfo& t = ctx.output_type(i);
    if (!t.known()) continue;
    int64_t n = StaticElements(t);
    if (n < 0) {
      c.known = false;
      continue;
    }
    c.bytes_written += static_cast<int64_t>(ByteSizeOf(t.dtype, n));
  }
  for (size_t i : param_inputs) {
    if (ctx.input_constant(i) != nullptr) c.params += ctx.input_constant(i)->num_elements();
  }
  return c;
}

Cost ElementwiseCost(const OpContext& ctx, int64_t flops_per_element) {
  Cost c = BytesOnlyCost(ctx);
  if (ctx.num_outputs() > 0) {
    int64_t n = StaticElements(ctx.output_type(0));
    if (n >= 0) c.flops = n * flops_per_element;
  }
  return c;
}

}  // namespace aic

#include "ops/nn/clip_bounds.h"

namespace aic {

ClipBounds DecodeClipBounds(const Node& clip, int64_t opset,
                            const std::function<const Tensor*(size_t)>& input_value) {
  ClipBounds b;
  if (opset < 11) {
    if (clip.HasAttr("min")) b.lo = clip.GetFloat("min", 0);
    if (clip.HasAttr("max")) b.hi = clip.GetFloat("max", 0);
    return b;
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (!clip.has_input(i)) continue;  // omitted: unbounded on that side
    const Tensor* t = input_value(i);
    if (t == nullptr || t->num_elements() != 1 || t->dtype() == DType::kString) {
      (i == 1 ? b.lo_known : b.hi_known) = false;
      continue;
    }
    (i == 1 ? b.lo : b.hi) = t->ElementAsDouble(0);
  }
  return b;
}

}  // namespace aic

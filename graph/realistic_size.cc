#include "graph/realistic_size.h"

namespace aic {

int64_t RealisticDimSize(const Shape& shape, size_t axis) {
  if (axis == 0) return 1;
  const std::vector<Dim>& dims = shape.dims();
  // An image: NCHW with at most 4 channels and an open width (a text-line
  // recognizer fixes only its height). A KV cache [batch, heads, past,
  // head_dim] with 4 heads is not: its last dim is fixed.
  bool image = dims.size() == 4 && dims[1].is_value() && dims[1].value() <= 4 &&
               !dims[3].is_value();
  return image && axis >= 2 ? 224 : 16;
}

}  // namespace aic

#include "graph/realistic_size.h"

namespace aic {

int64_t RealisticDimSize(const TypeInfo& type, size_t axis) {
  if (axis == 0) return 1;
  const std::vector<Dim>& dims = type.shape.dims();
  // An image: NCHW with at most 4 channels and an open width (a text-line
  // recognizer fixes only its height). A KV cache [batch, heads, past,
  // head_dim] with 4 heads is not: its last dim is fixed.
  bool image = dims.size() == 4 && dims[1].is_value() && dims[1].value() <= 4 && !dims[3].is_value();
  if (image && axis >= 2) return 224;
  bool waveform = dims.size() == 2 && IsFloatingPoint(type.dtype);
  return waveform ? 16000 : 16;
}

}  // namespace aic
